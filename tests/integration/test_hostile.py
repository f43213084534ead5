# SPDX-License-Identifier: MIT
"""Hostile recordings (issue 11): memprint on each file of tests/data/hostile/
(written by tests/data/make_hostile.py) must finish within bounded time and
memory, measured here (peak resident size of the child from wait4, CPU time
user + system), with the expected message and exit status. On main before
the fix these took gigabytes or minutes (figures in docs/format.md, "Limits
of the readers").

Also: no control character from a recording reaches the terminal (text
report), and the JSON report is valid UTF-8 whatever bytes the recording
holds."""
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

HOSTILE = os.path.join(SRC, "tests", "data", "hostile")
BAD = os.path.join(SRC, "tests", "data", "bad")


ASAN = is_asan(MEMPRINT)
# The bounds: what the files legitimately need is a few MiB and a few
# milliseconds. ASan's shadow and quarantine take more memory, and every
# access costs more, so its bounds are looser.
RSS_LIMIT_MIB = 300 if ASAN else 100
CPU_LIMIT_S = 10.0 if ASAN else 3.0
TIMEOUT = 60


# 2 GiB: every file here is a few KiB.
limit_memory = memory_cap(2, ASAN)


def tool_env():
    return capped_env(2, ASAN)


def memprint(args):
    """(exit status, stdout bytes, stderr lines, peak RSS MiB, CPU s); exit
    status None when it ran out of time."""
    return measured(MEMPRINT, args)


def measured(tool, args):
    """memprint() for any tool of the build."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        # Standard input: a pipe left open, never written (module-stdin.mrec
        # names it as a module).
        p = subprocess.Popen([tool] + args, stdin=subprocess.PIPE, stdout=out, stderr=err, env=tool_env(),
                             preexec_fn=limit_memory)
        deadline = time.monotonic() + TIMEOUT
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                break
            if time.monotonic() > deadline:
                p.kill()
                pid, status, usage = os.wait4(p.pid, 0)
                p.returncode = -9
                p.stdin.close()
                return None, b"", [], usage.ru_maxrss / 1024.0, usage.ru_utime + usage.ru_stime
            time.sleep(0.005)
        p.returncode = os.waitstatus_to_exitcode(status)
        p.stdin.close()
        out.seek(0)
        err.seek(0)
        return (p.returncode, out.read(), err.read().decode(errors="replace").splitlines(), usage.ru_maxrss / 1024.0,
                usage.ru_utime + usage.ru_stime)


FOLDED = os.path.join(tmpdir(), "out.folded")
SVG = os.path.join(tmpdir(), "out.svg")
PPROF = os.path.join(tmpdir(), "out.pb.gz")
MASSIF = os.path.join(tmpdir(), "massif.out")


def expect(name, code, said=None, args=(), directory=HOSTILE, json_too=True):
    """Run memprint (text, then --json, --folded, --svg and --svg --reverse,
    the flame graph walking the bottom-up tree, --pprof at the end and at
    the peak, --massif, which reads the file again) on the file; check
    bounds, exit status and that stderr matches `said` (None: nothing on
    stderr). Returns (text stdout, parsed JSON or None)."""
    path = os.path.join(directory, name)
    results = []
    modes = [[], ["--json"], ["--folded", FOLDED], ["--svg", SVG], ["--svg", SVG, "--reverse"], ["--pprof", PPROF],
             ["--pprof", PPROF, "--pprof-at", "peak"], ["--massif", MASSIF]] if json_too else [[]]
    for mode in modes:
        what = "memprint %s%s" % (" ".join(mode + list(args)) + " " if mode or args else "", name)
        rc, out, err, rss, cpu = memprint(mode + list(args) + [path])
        check(rc is not None, "%s: finishes within %d s" % (what, TIMEOUT))
        check(rss < RSS_LIMIT_MIB, "%s: peak RSS %.1f MiB under %d MiB" % (what, rss, RSS_LIMIT_MIB))
        check(cpu < CPU_LIMIT_S, "%s: CPU %.2f s under %.0f s" % (what, cpu, CPU_LIMIT_S))
        check_eq(rc, code, "%s: exit status" % what)
        # Most of these files name module files that are not here: memprint
        # says so in one line (escaped, naming the file), apart from what
        # the case is about.
        mods = [l for l in err if "cannot be symbolized here" in l]
        check(len(mods) <= 1 and all(l.startswith("memprint: warning: '%s': " % path) and "memprint --pack" in l
                                     and not re.search(r"[\x00-\x1f\x7f]", l) for l in mods),
              "%s: at most one line on missing modules, escaped: %r" % (what, mods))
        err = [l for l in err if l not in mods]
        if said is None:
            check_eq(err, [], "%s: nothing on stderr" % what)
        else:
            text = " ".join(err)
            check(re.search(said, text) is not None, "%s: stderr says /%s/: %r" % (what, said, err))
            check(all(l.startswith("memprint: ") for l in err), "%s: messages start with 'memprint: '" % what)
            check(any("'%s'" % path in l for l in err), "%s: a message names the file" % what)
        results.append(out)
        if mode and mode[0] == "--folded" and os.path.exists(FOLDED):
            with open(FOLDED, "rb") as f:
                no_controls("%s (the folded stacks)" % what, f.read(1 << 20))
            os.unlink(FOLDED)
        if mode and mode[0] == "--svg" and os.path.exists(SVG):
            with open(SVG, "rb") as f:
                no_controls("%s (the flame graph)" % what, f.read(1 << 20))
            os.unlink(SVG)
        if mode and mode[0] == "--massif" and os.path.exists(MASSIF):
            with open(MASSIF, "rb") as f:
                no_controls("%s (the massif file)" % what, f.read(1 << 20))
            os.unlink(MASSIF)
        if mode and mode[0] == "--pprof" and os.path.exists(PPROF):
            os.unlink(PPROF)
    rep = None
    if code in (0, 3) and json_too:
        try:
            rep = json.loads(results[1].decode("utf-8", errors="strict"))
        except ValueError as e:
            check(False, "memprint --json %s: valid UTF-8 JSON (%s)" % (name, e))
    return results[0], rep


def no_controls(what, text):
    """No byte a terminal acts on: C0 controls but newline, DEL, and C1
    controls (raw 0x80-0x9f bytes, or their two-byte UTF-8 forms)."""
    bad = [i for i, c in enumerate(text) if (c < 0x20 and c != 0x0a) or c == 0x7f]
    try:
        decoded = text.decode("utf-8")
        c1 = [i for i, c in enumerate(decoded) if 0x80 <= ord(c) <= 0x9f]
        valid = True
    except UnicodeDecodeError:
        c1, valid = [], False
    check(not bad and not c1 and valid, "%s: no control characters, valid UTF-8 (C0/DEL at %r, C1 at %r)" %
          (what, bad[:5], c1[:5]))


# 1. A free's (or realloc's) trace id sized the per-trace table: 2^24 took
#    2.9 GB, 2^32-1 "out of memory".
for name, allocs in (("free-trace-2e24.mrec", 1), ("free-trace-max.mrec", 1), ("realloc-trace-2e26.mrec", 2)):
    _, rep = expect(name, 3, r"could not be applied")
    if rep:
        check_eq(rep["allocations"], allocs, "%s: allocations" % name)
        check_eq(rep["leaked_bytes"], 0, "%s: the free is applied where its allocation went" % name)
        check_eq(rep["complete"], False, "%s: JSON says incomplete" % name)

# 2. Modules x nodes: a scan of every module per node (30,000 of each took
#    11 s). Ids are never reused: 29,999 repeats of module 1 are refused.
_, rep = expect("modules-same-id-30000.mrec", 3, r"29999 records could not be applied")
# 30,000 modules of one file that is not here: one warning, the path once.
r = run([MEMPRINT, os.path.join(HOSTILE, "modules-30000.mrec")])
check_eq([l.count("'/nonexistent/libhostile.so' (missing)") for l in r.stderr.decode().splitlines()], [1],
         "modules-30000: one warning on the missing module, its path once")
_, rep = expect("modules-30000.mrec", 0)
if rep:
    check_eq(rep["allocations"], 300, "modules-30000: allocations")
_, rep = expect("unmodule-10000.mrec", 0)
if rep:
    check_eq(rep["allocations"], 10000, "unmodule-10000: allocations")
# One file at 3,000 addresses is loaded by the symbolizer once (on main:
# 1 GB for memprint's own file, 32 GB and 190 s for libc).
_, rep = expect("same-file-3000.mrec", 0)
if rep:
    check_eq(rep["allocations"], 3000, "same-file-3000: allocations")

# 3. A chain of 20,000 nodes with an allocation at each: frames and keys of
#    every trace took 8 s and 2 GB.
#    Outputs are kept small: this process's own size would count in the
#    next child's peak RSS (fork copies it).
#    A chain deeper than MODEL_MAX_DEPTH (2048) is cut into stacks of at
#    most 2048 nodes: 9 NODE records refused; the last, deepest-allocating
#    stack has 20000 - 9 x 2048 = 1568 frames.
text, rep = expect("deep-chain-20000.mrec", 3, r"9 records could not be applied", args=("-n", "1"))
if rep:
    check_eq(rep["allocations"], 20000, "deep-chain: allocations")
    top = rep["sections"]["most_allocated"][0]
    check_eq(len(top["frames"]), 1568, "deep-chain: JSON gives the stack whole, cut at 2048 nodes")
    check_eq(top["allocated_bytes"], 10001 + 19999, "deep-chain: the deepest stack allocated most")
    check_eq(max(len(e["frames"]) for e in rep["sections"]["peak_consumers"]), 1568, "deep-chain: peak stack")
check(b"      ... 1520 more frames\n" in text, "deep-chain: text cuts the stack after 48 frames")
text, _ = expect("deep-chain-20000.mrec", 3, r"9 records could not be applied", args=("-n", "1000", "-f", "2"),
                 json_too=False)
check_eq(text.count(b"\n  ... and 19000 more call stacks"), 4, "deep-chain -n 1000: 4 sections say how many more")
# The outputs' bounds: a folded line holds at most 256 frames (a deeper
# stack ends "[N frames cut]"), an SVG at most 256 levels and 200,000
# frames, and it says what was cut; the counts still sum to the total.
for mode, out in ((["--folded", FOLDED], FOLDED), (["--svg", SVG], SVG), (["--svg", SVG, "--reverse"], SVG)):
    rc, _, _, _, _ = memprint(mode + [os.path.join(HOSTILE, "deep-chain-20000.mrec")])
    size = os.path.getsize(out)
    with open(out, "rb") as f:
        body = f.read()
    if mode[0] == "--folded":
        lines = body.splitlines()
        check(all(len(line.split(b";")) <= 256 for line in lines) and b"[1793 frames cut] " in body,
              "deep-chain --folded: at most 256 frames a line, the rest said cut")
        check_eq(sum(int(line.rsplit(b" ", 1)[1]) for line in lines), 20000 * 10001 + sum(range(20000)),
                 "deep-chain --folded: the counts still sum to the total")
        check(size < 20000 * 256 * 20, "deep-chain --folded: %d bytes, under lines x 256 frames" % size)
    else:
        check(body.count(b'class="f"') <= 200001 and size < 200001 * 400,
              "deep-chain %s: bounded (%d bytes)" % (" ".join(mode), size))
        if "--reverse" not in mode:
            check(b"stacks cut after 256 levels" in body, "deep-chain --svg: says the stacks were cut")

rep = text = None

_, rep = expect("threads-5000.mrec", 0)
if rep:
    check_eq(rep["allocations"], 5000, "threads-5000: allocations")

# 4. Names that drive a terminal or are not UTF-8 (issue 10 item 6).
text, rep = expect("names.mrec", 0)
no_controls("memprint names.mrec (text)", text)
check(b"program: 'prog\\x1b[2J' '--flag=\\xc2\\x9b31m' '\\xfe\\xffend' (pid 4242)" in text,
      "names.mrec: the program line shows the escapes: %r" % text.split(b"\n")[0])
check(b"?? in \\x1b[31mred\\x1b[0m\\xff.so+0x" in text, "names.mrec: the module name is escaped in frames")
if rep:
    check_eq(rep["program"], "'prog\x1b[2J' '--flag=\x9b31m' '\u00fe\u00ffend'", "names.mrec: JSON program")
rc, out, _, _, _ = memprint(["--json", os.path.join(HOSTILE, "names.mrec")])
check(b"\\u00fe\\u00ffend" in out and b"\\u001b[2J" in out, "names.mrec: JSON escapes the invalid bytes as \\u00XX")
no_controls("memprint --json names.mrec", out)

# 4b. Packed files whose pack lies (memprint --pack, docs/format.md
#     "Packed recordings"): frames naming an undefined string or module, an
#     address given twice, a name that drives a terminal, a flood of
#     strings and addresses bounded by the nodes, a frame count above 64.
text, rep = expect("packed-garbage.mrec", 3, r"3 records could not be applied")
no_controls("memprint packed-garbage.mrec (text)", text)
check(b"good_function at good.c:42 in libpacked.so" in text, "packed-garbage: the good address has its packed frame")
check(b"\\x1b]0;pwned\\x07evil\\x1b[2J\\xff in libpacked.so" in text, "packed-garbage: the hostile name is escaped")
check(b"?? in libpacked.so+0x1ff" in text, "packed-garbage: a refused address reads as module+offset")
if rep:
    check_eq((rep["packed"], rep["complete"], rep["allocations"]), (True, False, 2),
             "packed-garbage: JSON packed, incomplete, 2 allocations")
# 20,000 strings and 20,000 addresses of 64 frames for one node: 256 + 2 x
# 64 strings and one address are kept, the rest refused.
text, rep = expect("packed-flood-20000.mrec", 3, r"39487 records could not be applied")
check(b"packed: the file carries the frames of 1 addresses" in text, "packed-flood: one address kept")
text, rep = expect("packed-corrupt.mrec", 3, r"corrupt data at byte 112")
check(b"?? in libpacked.so+0xff" in text, "packed-corrupt: reading stops at the bad record, the address reads as "
      "module+offset")

# A real program whose function name and file name hold escapes (issue 10
# item 6): memrec's closing summary and memprint's report show them escaped.
CC = shutil.which("cc") or shutil.which("gcc")
if CC is None:
    print("note: no C compiler: skipping the recorded program with an escaped symbol")
else:
    work = tmpdir()
    exe = os.path.join(work, "evil\x1b[2J")
    built = subprocess.run([CC, "-g", "-O0", "-o", exe, os.path.join(SRC, "tests", "data", "hostile_symbol.c")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if built.returncode != 0:
        print("note: cannot build tests/data/hostile_symbol.c (%s): skipping" % built.stdout.decode(errors="replace"))
    else:
        out = os.path.join(work, "evil.mrec")
        r = subprocess.run([MEMREC, "-o", out, exe], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check_eq(r.returncode, 0, "memrec of the escaped program: exit status")
        no_controls("memrec's summary of the escaped program", r.stderr)
        check(b"recorded '%s/evil\\x1b[2J' (pid " % work.encode() in r.stderr,
              "memrec's summary shows the program's name escaped: %r" % r.stderr)
        rc, text, err, _, _ = memprint([out])
        check_eq(rc, 0, "memprint of the escaped program: exit status")
        no_controls("memprint of the escaped program", text)
        check(b"#0  evil\\x1b]0;pwned\\x07\\x1b[2J in evil\\x1b[2J\n" in text,
              "memprint shows the function and module names escaped")
        rc, out_json, _, _, _ = memprint(["--json", out])
        rep = json.loads(out_json.decode("utf-8"))
        names = [f["function"] for f in rep["sections"]["most_allocated"][0]["frames"]]
        check("evil\x1b]0;pwned\x07\x1b[2J" in names, "JSON has the function's name (escaped as JSON): %r" % names)
        no_controls("memprint --json of the escaped program", out_json)

# A module path naming a pipe (memprint's own standard input): the
# symbolizer opens regular files only, never blocks.
text, rep = expect("module-stdin.mrec", 0)
check(b"#0  ?? in 0+0x123\n" in text, "module-stdin: the frame is module and offset: %r" % text[-200:])
# The same with a FIFO that has no writer, where open() itself blocks: the
# file is written here (the FIFO's path is this run's).
sys.path.insert(0, os.path.join(SRC, "tests", "data"))
import make_hostile  # noqa: E402

fifo_dir = tmpdir()
fifo = os.path.join(fifo_dir, "fifo")
os.mkfifo(fifo)
with open(os.path.join(fifo_dir, "module-fifo.mrec"), "wb") as f:
    f.write(make_hostile.window_frame(17, make_hostile.module_fifo(fifo.encode())))
text, rep = expect("module-fifo.mrec", 0, directory=fifo_dir)
check(b"#0  ?? in fifo+0x123\n" in text, "module-fifo: the frame is module and offset: %r" % text[-200:])
# The recorded program's path naming that FIFO: its embedded suppressions
# are not read (a warning says why), and nothing blocks.
with open(os.path.join(fifo_dir, "exe-fifo.mrec"), "wb") as f:
    f.write(make_hostile.window_frame(17, make_hostile.exe_fifo(fifo.encode())))
for mode in ([], ["--json"], ["--check", "leaked_bytes<1M"]):
    what = "memprint %sexe-fifo.mrec" % (" ".join(mode) + " " if mode else "")
    rc, out, err, rss, cpu = memprint(mode + [os.path.join(fifo_dir, "exe-fifo.mrec")])
    check(rc is not None, "%s: finishes within %d s" % (what, TIMEOUT))
    check_eq(rc, 0, "%s: exit status" % what)
    check(any("is not a regular file" in line for line in err), "%s: a warning says why: %r" % (what, err))

# Totals that would pass 2^63: the allocations beyond are refused (the
# file is not whole: exit 3), every figure stays exact below 2^63 and the
# same in the text, the JSON and --check.
with open(os.path.join(fifo_dir, "wrap-total.mrec"), "wb") as f:
    f.write(make_hostile.window_frame(17, make_hostile.wrap_total()))
wrap = os.path.join(fifo_dir, "wrap-total.mrec")
KEPT = ((1 << 16) - 1) << 47  # 65,535 blocks: the next one would pass 2^63 - 1
rc, out, err, rss, cpu = memprint(["--json", wrap])
check_eq(rc, 3, "wrap-total: exit status (refused events: not whole)")
rep = json.loads(out.decode()) if out else {}
check_eq((rep.get("leaked_bytes"), rep.get("leaked_allocations"), rep.get("peak_heap_bytes"), rep.get("complete")),
         (KEPT, 65535, KEPT, False), "wrap-total: leaked, blocks, peak exact below 2^63; not complete")
check(any("would pass 2^63" in line for line in err), "wrap-total: a warning says why: %r" % err)
rc, out, err, rss, cpu = memprint([wrap])
check(b"(%d bytes) in 65535 blocks" % KEPT in out, "wrap-total: the text's leaked figure is the JSON's")
for cond, want in (("leaked_bytes==0", 3), ("leaked_bytes==%d" % KEPT, 3)):
    rc, out, err, rss, cpu = memprint(["--check", cond, wrap])
    check_eq(rc, want, "wrap-total: --check '%s' does not pass a file that is not whole" % cond)
    check(b"%d" % KEPT in out + b"".join(l.encode() if isinstance(l, str) else l for l in err),
          "wrap-total: --check shows the same figure: %r" % (out[-300:],))

# --folded onto a FIFO (as onto /dev/null): written to, never replaced by
# a renamed temporary file.
import threading  # noqa: E402

out_fifo = os.path.join(fifo_dir, "folded-fifo")
os.mkfifo(out_fifo)
got = []
reader = threading.Thread(target=lambda: got.append(open(out_fifo, "rb").read()))
reader.start()
rc, _, err, _, _ = memprint(["--folded", out_fifo, os.path.join(HOSTILE, "names.mrec")])
reader.join(10)
check_eq(rc, 0, "memprint --folded FIFO: exit status")
check(stat.S_ISFIFO(os.stat(out_fifo).st_mode), "memprint --folded FIFO: the FIFO is still a FIFO")
check(bool(got) and b"red" in got[0], "memprint --folded FIFO: the stacks went through it: %r" % got)

# 7. Smaller ones: an impossible sampled size; a skippable frame first; the
#    zstd window; an oversized record.
_, rep = expect("sampled-huge-size.mrec", 3, r"1 allocation larger than 128 TiB")
# RSS and every allocator figure at 2^64 - 1, 200,000 HEAPINFO records:
# the RSS section's sums saturate, its memory stays fixed.
text, rep = expect("heapinfo-extremes.mrec", 0)
if rep is not None:
    g = rep["rss_gap"]
    check(g is not None and g["allocator_known"], "heapinfo-extremes.mrec: rss_gap from the allocator's samples")
    check_eq(g["heapinfo_samples"], 200000, "heapinfo-extremes.mrec: samples counted")
    check_eq(g["heapinfo_cost_ns_total"], (1 << 64) - 1, "heapinfo-extremes.mrec: the cost saturates")
    check_eq(g["allocator_overhead_bytes"], (1 << 63) - 1, "heapinfo-extremes.mrec: the overhead saturates")
check(b"RSS VERSUS HEAP" in text, "heapinfo-extremes.mrec: text section printed")
# 20,000 LAYOUT records, every count at 2^64 - 1, 16 entries each naming a
# trace no NODE defines: refused (each record once), the figures saturate,
# memory stays one record per moment kept.
text, rep = expect("layout-extremes.mrec", 3, r"20000 records could not be applied")
if rep is not None:
    g = rep["rss_gap"]
    lay = g["heap_layout"] if g else None
    check(lay is not None and lay["known"] and lay["free_below_top_bytes"] == (1 << 64) - 1,
          "layout-extremes.mrec: the layout read, its bytes saturate")
    pinned = g["pinned_by"] if g else None
    check(pinned is not None and len(pinned) == 1 and pinned[0]["frames"] == []
          and pinned[0]["held_bytes"] == (1 << 64) - 1,
          "layout-extremes.mrec: the 16 undefined traces are one entry without a stack, its sums saturate")
check(b"What keeps RSS up" in text, "layout-extremes.mrec: text part printed")
text, rep = expect("skippable-first.mrec", 0)
if rep:
    check(rep["allocations"] == 1 and rep["temporary"] == 1, "skippable-first: read as without the frame")
_, rep = expect("window-2e27.mrec", 0)
if rep:
    check_eq(rep["allocations"], 1, "window-2e27: a 128 MiB window is accepted")
for name in ("window-2e28.mrec", "window-2e31.mrec"):
    expect(name, 1, r"zstd window larger than 128 MiB")
expect("record-too-long.mrec", 3, r"record larger than 1024 KiB \(the format's limit\) at byte 21", directory=BAD)

# 8. memtui's bottom-up view on the deep chain: it held every site's path
#    (sites x depth, up to 1024: 20 million nodes, 5 s and 2.3 GB); now a
#    node's callers are built when it is expanded. The start (summary: the
#    top sites), the bottom-up view, three levels expanded, and '*' (a
#    site's whole path, cut at 1024 frames) stay within the bounds above.
MEMTUI = os.path.join(BUILD, "memtui")
if not os.path.exists(MEMTUI):
    skip_part("memtui on deep-chain-20000", "memtui is not built (no ncursesw)")
else:
    chain = os.path.join(HOSTILE, "deep-chain-20000.mrec")

    def memtui(keys):
        what = "memtui --batch --keys '%s' deep-chain-20000.mrec" % keys
        rc, out, err, rss, cpu = measured(MEMTUI, ["--batch", "--size", "120x40", "--keys", keys, chain])
        check(rc is not None, "%s: finishes within %d s" % (what, TIMEOUT))
        check(rss < RSS_LIMIT_MIB, "%s: peak RSS %.1f MiB under %d MiB" % (what, rss, RSS_LIMIT_MIB))
        check(cpu < CPU_LIMIT_S, "%s: CPU %.2f s under %.0f s" % (what, cpu, CPU_LIMIT_S))
        check_eq(rc, 0, "%s: exit status" % what)
        return out.decode("utf-8", errors="replace").split("\n")

    def tree_rows(screen):
        # inclusive, self, indentation and name of each row of the tree.
        rows = []
        for ln in screen:
            # A row scrolled past its indentation starts with a cut mark.
            m = re.match(r"^\s+(\d+)\s+(\d+)\s+[\d.]+%  (?:\u2026|>)?( *)(?:[-+.\u25be\u25b8\u00b7] |  )(.*)$", ln)
            if m:
                rows.append((int(m.group(1)), int(m.group(2)), len(m.group(3)) // 2, m.group(4)))
        return rows

    # Node i of the chain is the function at 0x1000 + i and allocates
    # 10001 + i bytes (the peak holds every block): the deepest site first,
    # its callers each one node up the chain with the same 30000 bytes.
    rows = tree_rows(memtui("3 Right Down Right Down Right"))
    # A site's self is all it allocated; a caller's, the stacks that start there.
    check_eq(rows[:5], [(30000, 30000, 0, "?? in ?+0x5e1f"), (30000, 0, 1, "?? in ?+0x5e1e"),
                        (30000, 0, 2, "?? in ?+0x5e1d"), (30000, 0, 3, "?? in ?+0x5e1c"),
                        (29999, 29999, 0, "?? in ?+0x5e1e")], "memtui deep-chain: the first site and 3 levels of callers")
    # '*' opens the first site's path: 1568 frames (the deepest stack),
    # cut at 1024; the last row is the shallowest site, node 1.
    screen = memtui("3 * End")
    rows = tree_rows(screen)
    check_eq(rows[-1:], [(10001, 10001, 0, "?? in ?+0x1000")], "memtui deep-chain: the last site, a stack of one frame")
    # Searching goes to the first row of 0x5a20: the path's 1024th frame,
    # whose self cost is the cut part's (the names scroll to show it); after
    # it comes the next site, at depth 0 again.
    rows = tree_rows(memtui("3 * / 0x5a20 Enter"))
    found = rows[-1:] == [(30000, 30000, rows[-1][2], "?? in ?+0x5a20")] if rows else False
    rows = tree_rows(memtui("3 * / 0x5a20 Enter Down"))
    check(found and len(rows) >= 2 and rows[-2][:2] == (30000, 30000) and rows[-1] == (29999, 29999, 0, "?? in ?+0x5e1e"),
          "memtui deep-chain: the path is cut at 1024 frames, the cut part's cost "
          "the last node's self: %r" % rows[-3:])

done()
