# SPDX-License-Identifier: MIT
"""Reachability of the blocks live at the end (issue 27, docs/definitions.md
"Reachability"): records tests/progs/reach.c, whose blocks' classes are
known by construction (see its header), and checks every figure: the
JSON's unreachable_*, indirectly_unreachable_*, possibly_reachable_* and
reachable_*, each MOST MEMORY LEAKED entry's share, --unreachable's
ranking, --check on them, the REACH records as mrecread.py reads them from
the spec alone, the program's output and exit status unchanged by the
scan, MEMREC_REACHABILITY=0 and --no-reachability (no scan, said so), a
sampled recording (not available), memtui's summary line, and memcheck's
classification of the same program (valgrind --leak-check=full) where
valgrind is installed."""
import os
import re
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403
from mrecread import Recording  # noqa: E402

d = tmpdir()
PROG = prog("reach")

# (leaked bytes, leaked blocks) of each stack -> (unreachable bytes,
# unreachable blocks, indirect blocks, possible blocks), from reach.c's header.
EXPECTED = {
    (400, 4): (0, 0, 0, 0),  # hold_global: held by a global array
    (1000, 1): (0, 0, 0, 1),  # hold_inside: a global points into its middle
    (600, 3): (600, 3, 0, 0),  # lose_last: each pointer overwritten
    (64, 1): (64, 1, 0, 0),  # leak_list_head: its only pointer dropped
    (240, 5): (240, 5, 5, 0),  # leak_list_node: hanging from that head
    (300, 1): (0, 0, 0, 0),  # on_thread_stack: a running thread's stack
    (400, 1): (0, 0, 0, 0),  # in_tls: that thread's TLS
    (1400, 2): (0, 0, 0, 0),  # disguised: addresses as integers in a reachable buffer
    (1600, 2): (1600, 2, 0, 0),  # hidden: addresses stored XOR-ed
    (1048576, 1): (0, 0, 0, 0),  # big_buffer: held by a global
}
UNREACHABLE = sum(v[0] for v in EXPECTED.values())  # 2504
UNREACHABLE_N = sum(v[1] for v in EXPECTED.values())  # 11
INDIRECT, INDIRECT_N = 240, 5
OWN_REACHABLE = sum(k[0] for k, v in EXPECTED.items() if v[1] == 0)

# The program alone: what it prints and its status.
plain = run([PROG])
check_eq(plain.returncode, 3, "reach alone exits with 3")
check_eq(plain.stdout, b"reach: built\n", "reach alone prints its line")

out = os.path.join(d, "r.zst")
rec = record([PROG], out)
check_eq(rec.returncode, plain.returncode, "memrec exits with the program's status (the scan changes nothing)")
check_eq(rec.stdout, plain.stdout, "the program's output is the same under memrec with the scan")
check_eq(rec.stderr, b"", "nothing on stderr: the scan ran without a message")

j = report_json(out)
check_eq(j["unreachable_bytes"], UNREACHABLE, "unreachable_bytes = the constructed unreachable blocks")
check_eq(j["unreachable_allocations"], UNREACHABLE_N, "unreachable_allocations")
check_eq(j["indirectly_unreachable_bytes"], INDIRECT, "indirectly_unreachable_bytes: the list behind the head")
check_eq(j["indirectly_unreachable_allocations"], INDIRECT_N, "indirectly_unreachable_allocations")
check_eq(j["reachable_bytes"] + j["unreachable_bytes"], j["leaked_bytes"], "reachable + unreachable = leaked (bytes)")
check_eq(j["reachable_allocations"] + j["unreachable_allocations"], j["leaked_allocations"],
         "reachable + unreachable = leaked (blocks)")
# Besides the program's own: the loader's and libc's blocks (the thread's
# DTV, which its TCB points into: possibly reachable, as in memcheck).
check(j["reachable_bytes"] >= OWN_REACHABLE, "reachable_bytes %d holds the program's %d" %
      (j["reachable_bytes"], OWN_REACHABLE))
check(1000 <= j["possibly_reachable_bytes"] <= 1000 + 1024 and 1 <= j["possibly_reachable_allocations"] <= 2,
      "possibly reachable: hold_inside's 1000 bytes (and the DTV): %d in %d" %
      (j["possibly_reachable_bytes"], j["possibly_reachable_allocations"]))
check(j["reachability_scan_ns"] > 0, "the scan's time is said")

seen = set()
for e in j["sections"]["most_leaked"]:
    key = (e["leaked_bytes"], e["leaked_allocations"])
    if key not in EXPECTED:
        continue
    seen.add(key)
    ub, un, ind, pos = EXPECTED[key]
    what = "stack leaking %d bytes in %d blocks" % key
    check_eq(e["unreachable_bytes"], ub, what + ": unreachable bytes")
    check_eq(e["unreachable_allocations"], un, what + ": unreachable blocks")
    check_eq(e["indirectly_unreachable_bytes"], ub if ind else 0, what + ": indirectly unreachable bytes")
    check_eq(e["possibly_reachable_bytes"], key[0] if pos else 0, what + ": possibly reachable bytes")
check_eq(seen, set(EXPECTED), "every constructed stack is in MOST MEMORY LEAKED")

# --unreachable: only the unreachable stacks, ranked by unreachable bytes.
r = run([MEMPRINT, "--json", "--unreachable", "--no-builtin-suppressions", "-n", "50", out])
ju = json.loads(r.stdout.decode())
ranked = [(e["unreachable_bytes"], e["leaked_allocations"]) for e in ju["sections"]["most_leaked"]]
check_eq(ranked, [(1600, 2), (600, 3), (240, 5), (64, 1)], "--unreachable ranks the four unreachable stacks")
check_eq(ju.get("leaked_ranking"), "unreachable", "--unreachable: the JSON says how MOST MEMORY LEAKED ranks")

# The text: the summary's split and the entries' shares.
rc, text, _ = report_text(out, top=30)
check(re.search(r"^  unreachable: .* \(%d bytes\) in %d blocks \(%d indirectly\)\n  reachable: .* \(2 possibly\)$" %
                (UNREACHABLE, UNREACHABLE_N, INDIRECT_N), text, re.M),
      "the summary splits leaked: unreachable %d bytes in %d blocks" % (UNREACHABLE, UNREACHABLE_N))
check(re.search(r"\(240 bytes\) leaked in 5 blocks: unreachable \(indirectly\)$", text, re.M),
      "the list's entry says it is indirectly unreachable")
check(re.search(r"\(1000 bytes\) leaked in 1 block: possibly reachable", text, re.M),
      "the interior pointer's entry says possibly reachable")
check(re.search(r"\(400 bytes\) leaked in 4 blocks: reachable$", text, re.M), "the global's entry says reachable")
r = run([MEMPRINT, "--unreachable", "-n", "30", out])
check("MOST MEMORY LEAKED (UNREACHABLE ONLY)" in r.stdout.decode() and "(1048576 bytes)" not in
      r.stdout.decode().split("MOST MEMORY LEAKED")[1].split("MOST MEMORY ALLOCATED")[0],
      "--unreachable text: the title says so and the reachable buffer is not listed")

# --check on the new figures: LeakSanitizer's gate, and an exact value.
r = run([MEMPRINT, "--no-builtin-suppressions", "--check", "unreachable_bytes==0", out])
check_eq(r.returncode, 1, "--check unreachable_bytes==0 fails on a program that loses blocks")
r = run([MEMPRINT, "--no-builtin-suppressions", "--check", "unreachable_bytes==%d" % UNREACHABLE, "--check",
         "indirectly_unreachable_allocations==%d" % INDIRECT_N, out])
check_eq(r.returncode, 0, "--check on the exact unreachable figures passes: %s" % r.stdout.decode().strip())

# The records, read from the spec alone (docs/format.md, "Reachability").
rr = Recording(out, events=False)
check_eq(len(rr.reach), 1, "one REACH record")
if rr.reach:
    x = rr.reach[0]
    check_eq(x["status"], 0, "REACH status: done")
    check_eq((x["unreachable_bytes"], x["unreachable_blocks"], x["indirect_bytes"], x["indirect_blocks"]),
             (UNREACHABLE, UNREACHABLE_N, INDIRECT, INDIRECT_N), "REACH's figures")
    # The recorder's service thread is left out once it has run: a program
    # this short may end before it was ever scheduled (then it counts).
    check(x["threads"] in (2, 3), "two threads of the program stopped and read (the recorder's own left out): %d" %
          x["threads"])
    check(x["stopped_ns"] > 0 and x["cost_ns"] >= x["stopped_ns"], "REACH says its times")
    check_eq(sum(t["unreachable_bytes"] for t in rr.reach_traces), UNREACHABLE, "REACH_TRACE records sum to REACH")

# The main thread ended first (pthread_exit: a zombie that cannot be
# seized and has no memory of its own): the scan goes through the others.
o5 = os.path.join(d, "mainexit.zst")
r = record([PROG, "mainexit"], o5)
check_eq((r.returncode, r.stdout, r.stderr), (3, plain.stdout, b""), "mainexit: same output and status, no message")
rm = Recording(o5, events=False).reach
check(rm and rm[0]["status"] == 0, "mainexit: the scan was made")
if rm:
    check_eq((rm[0]["unreachable_bytes"], rm[0]["unreachable_blocks"], rm[0]["indirect_blocks"]),
             (UNREACHABLE, UNREACHABLE_N, INDIRECT_N), "mainexit: the same unreachable figures")
    check(rm[0]["threads"] in (2, 3), "mainexit: the two live threads were read (and maybe the recorder's): %d" %
          rm[0]["threads"])

# Turned off: no scan, and memprint says why there is no split.
for how, env, extra in (("MEMREC_REACHABILITY=0", dict(os.environ, MEMREC_REACHABILITY="0"), ()),
                        ("--no-reachability", None, ("--no-reachability",))):
    o2 = os.path.join(d, "off%d.zst" % len(how))
    r = record([PROG], o2, extra=extra, env=env)
    check_eq((r.returncode, r.stdout), (3, plain.stdout), how + ": same output and status")
    j2 = report_json(o2)
    check(j2["unreachable_bytes"] is None and j2["reachable_bytes"] is None, how + ": the figures are null")
    check_eq(len(Recording(o2, events=False).reach), 0, how + ": no REACH record")
    _, t2, _ = report_text(o2)
    check("reachability: not classified" in t2, how + ": the summary says the leaks were not classified")

# Sampled: only the sampled blocks are known.
o3 = os.path.join(d, "s.zst")
r = record([PROG], o3, extra=("-s", "1K"))
check_eq((r.returncode, r.stdout), (3, plain.stdout), "sampled: same output and status")
j3 = report_json(o3)
check(j3["unreachable_bytes"] is None, "sampled: unreachable_bytes is null")
_, t3, _ = report_text(o3)
check("reachability: not available in a sampled recording" in t3, "sampled: the summary says not available")
rs = Recording(o3, events=False)
check(rs.reach and rs.reach[0]["status"] == 4, "sampled: REACH says sampled")

# memtui shows memprint's summary lines: the split is among them.
MEMTUI = os.path.join(BUILD, "memtui")
r = run([MEMTUI, "--batch", out]) if os.path.exists(MEMTUI) else None
if r is not None and r.returncode == 0:
    check("unreachable: " in r.stdout.decode(), "memtui --batch shows the split")
    r = run([MEMTUI, "--batch", "--size", "120x80", out])
    part = r.stdout.decode().split("MOST MEMORY UNREACHABLE")[-1].splitlines()[1:5]
    check_eq([int(line.split()[0]) for line in part if line.strip() and line.split()[0].isdigit()],
             [1600, 600, 240, 64], "memtui's summary: MOST MEMORY UNREACHABLE ranks the four unreachable stacks")
    r = run([MEMTUI, "--batch", "-c", "unreachable", "-k", "2", out])
    check(re.search(r"^\s+%d\s+0\s+100\.00%%\s+\S+ main" % UNREACHABLE, r.stdout.decode(), re.M),
          "memtui's top-down tree by the unreachable cost: main holds all %d bytes" % UNREACHABLE)
else:
    skip_part("memtui --batch", "memtui not built or no --batch")

# memrec --pid --reachability: the scan at the detach, of the blocks made
# while recorded (reach wait makes them once memrec has attached).
o4 = os.path.join(d, "attached.zst")
w = subprocess.Popen([PROG, "wait"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
try:
    m, first = start_attach(w.pid, o4, extra=("--reachability",))
    check(b"attached to process" in first, "--pid --reachability: attached")
    w.stdin.write(b"x")
    w.stdin.flush()
    check_eq(w.stdout.readline(), b"reach: built\n", "--pid: the program made its blocks")
    m.send_signal(signal.SIGINT)
    err = m.communicate(timeout=60)[1].decode()
    check_eq(m.returncode, 0, "--pid --reachability: memrec detached cleanly: %s" % err.strip())
    check(w.poll() is None, "--pid --reachability: the program runs on after the scan and the detach")
    ra = Recording(o4, events=False).reach
    check(ra and ra[0]["status"] == 0 and ra[0]["threads"] == 2, "--pid --reachability: REACH done, 2 threads")
    if ra:
        x = ra[0]
        # A pointer to the last 'hidden' block may still sit in a register of
        # the main thread waiting in pause() (no exit path cleared it): that
        # one 800-byte block may count reachable, conservatively.
        check((x["unreachable_bytes"], x["unreachable_blocks"]) in ((UNREACHABLE, UNREACHABLE_N),
                                                                    (UNREACHABLE - 800, UNREACHABLE_N - 1)),
              "--pid: unreachable %d bytes in %d blocks: the constructed ones" %
              (x["unreachable_bytes"], x["unreachable_blocks"]))
        check_eq((x["indirect_bytes"], x["indirect_blocks"]), (INDIRECT, INDIRECT_N), "--pid: the list is indirect")
    ja = report_json(o4)
    check(ja["unreachable_bytes"] is not None and ja["unreachable_bytes"] == (ra[0]["unreachable_bytes"] if ra else -1),
          "--pid: memprint shows the split")
finally:
    w.kill()
    w.wait()
r = run([MEMREC, "--reachability", "--", PROG])
check_eq(r.returncode, 2, "--reachability without --pid is a usage error")

# memcheck's classification of the same program.
if shutil.which("valgrind"):
    v = run(["valgrind", "--leak-check=full", PROG], timeout=300)
    err = v.stderr.decode()

    def lost(kind):
        m = re.search(r"%s: ([\d,]+) bytes in ([\d,]+) blocks" % kind, err)
        return (int(m.group(1).replace(",", "")), int(m.group(2).replace(",", ""))) if m else None

    definitely, indirectly, possibly = lost("definitely lost"), lost("indirectly lost"), lost("possibly lost")
    check(definitely and indirectly, "valgrind printed its leak summary")
    if definitely and indirectly:
        check_eq((definitely[0] + indirectly[0], definitely[1] + indirectly[1]), (UNREACHABLE, UNREACHABLE_N),
                 "memcheck's definitely + indirectly lost = memrec's unreachable")
        check_eq(indirectly, (INDIRECT, INDIRECT_N), "memcheck's indirectly lost = memrec's indirectly unreachable")
    if possibly:
        check_eq(possibly[1], j["possibly_reachable_allocations"],
                 "memcheck's possibly lost blocks = memrec's possibly reachable (hold_inside and the DTV)")
else:
    skip_part("memcheck cross-check", "valgrind is not installed")

done()
