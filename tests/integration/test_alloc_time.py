# SPDX-License-Identifier: MIT
"""Allocator time (issue 15, the analyzer's half): memprint's cost type
'time', its section MOST TIME IN THE ALLOCATOR, --alloc-time's tables per
size class, function and thread, --diff by time, and memtui's time cost
and size-class view, on programs recorded with memrec --time:

- tests/progs/timea_sites.c: 200,000 malloc(16)/free pairs at one site,
  2,000 malloc(40 MiB)/free pairs (mmap/munmap) at another: by time the
  big site ranks first, by calls the small one; the 40 MiB size class's
  mean is far above the 16-byte class's.
- tests/progs/timea_threads.c: 8 threads sharing one arena
  (MALLOC_ARENA_MAX=1) pay more per call than one thread alone (tolerant:
  the best of five tries must show 1.2 times the single thread's mean).
- totals agree: the stacks' times, the folded lines, the SVG's root, each
  table's rows and the summary are one figure; a thread's allocator time
  never exceeds its lifetime.
- the allocator comparison of docs/allocators.md: the same program under
  glibc, tcmalloc and jemalloc, compared with memprint --diff by time
  (a part whose library is missing is skipped with a message).

A recording made without --time gives clear errors and notices instead of
zeros passed off as data; that part runs whatever memrec can do."""
import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

MEMTUI = os.path.join(BUILD, "memtui")
LIBDIR = "/usr/lib/x86_64-linux-gnu"
ALLOCATORS = (("tcmalloc", "libtcmalloc_minimal.so.4"), ("jemalloc", "libjemalloc.so.2"))
BIG = 40 << 20
d = tmpdir()


def mp(args, what, rc=0):
    r = run([MEMPRINT] + args)
    check_eq(r.returncode, rc, "%s: exit status (stderr: %s)" % (what, r.stderr.decode().strip()[:300]))
    return r


def mpj(args, what):
    r = mp(["--json"] + args, what)
    try:
        return json.loads(r.stdout.decode())
    except ValueError:
        check(False, "%s: JSON output" % what)
        return {}


def size_class(n):
    return n.bit_length()  # sizes.h: class k holds 2^(k-1) .. 2^k - 1


def row(rows, key, value):
    for r in rows:
        if r.get(key) == value:
            return r
    return None


def functions_of(entry):
    return [f["function"] for f in entry["frames"]]


# ---- a recording without --time ----

untimed = os.path.join(d, "untimed.zst")
r = record([prog("inlined")], untimed)
check_eq(r.returncode, 0, "untimed: memrec exit status")
j = report_json(untimed)
check_eq((j["timed"], j["allocator_time_ns"]), (False, None), "untimed: JSON says no allocator time")
check("most_time" not in j["sections"], "untimed: no MOST TIME section in the JSON by default")
_, text, _ = report_text(untimed)
check("MOST TIME IN THE ALLOCATOR" not in text and "time in the allocator" not in text,
      "untimed: no time figures in the default text report")
r = mp(["--sections", "time", untimed], "untimed --sections time")
check("allocator time: not recorded (memrec --time)" in r.stdout.decode(), "untimed --sections time: says not recorded")
r = mp(["--alloc-time", untimed], "untimed --alloc-time", rc=1)
check("allocator time not recorded in" in r.stderr.decode() and "memrec --time" in r.stderr.decode(),
      "untimed --alloc-time: a clear error")
r = mp(["--folded", os.path.join(d, "u.folded"), "--cost", "time", untimed], "untimed --cost time", rc=1)
check("allocator time not recorded" in r.stderr.decode(), "untimed --cost time: a clear error")
check(not os.path.exists(os.path.join(d, "u.folded")), "untimed --cost time: no output file left")
j = mpj(["--diff", untimed, untimed], "untimed --diff")
check_eq((j["base"]["time"], j["delta"]["time"], j["changes"]["time"]), (None, None, None),
         "untimed --diff: time is null, not 0")
r = mp(["--diff", untimed, untimed], "untimed --diff text")
check("allocator time: not recorded in either (memrec --time)" in r.stdout.decode(), "untimed --diff text: says so")
r = mp(["--alloc-time", "--from", "1", untimed], "--alloc-time with a window", rc=2)
for how in ("site", "function"):
    r = mp(["--group", how, "--sections", "time", untimed], "untimed --group %s --sections time" % how)
    check(r.stdout.decode().endswith("MOST TIME IN THE ALLOCATOR\n  allocator time: not recorded (memrec --time)\n"),
          "untimed --group %s --sections time: says not recorded" % how)
if os.path.exists(MEMTUI):
    r = run([MEMTUI, "--batch", "-c", "time", untimed])
    check_eq(r.returncode, 2, "untimed: memtui -c time is refused")
    check("not recorded" in r.stderr.decode(), "untimed: memtui -c time says why")
    r = run([MEMTUI, "--batch", "--keys", "c c c c c c", untimed])
    check("cost: time" not in r.stdout.decode(), "untimed: memtui's cost key passes the time cost over")

j = mpj(["--threads", untimed], "untimed --threads")
check(j["threads_section"] and all(x["allocator_time_ns"] is None for x in j["threads_section"]),
      "untimed --threads: allocator_time_ns null")
r = mp(["--threads", untimed], "untimed --threads text")
check("alloc time" not in r.stdout.decode(), "untimed --threads text: no time column")

# ---- a timed recording written by tests/unit/test_alloctime.c: exact figures ----
# (its comment derives them: A;C 61000 ns in 2 calls, A;B 1300 ns in 3
# calls, 62300 ns in all, 1.5575% of 4 ms of CPU)

synth = os.path.join(d, "synth.zst")
r = run([os.path.join(BUILD, "tests", "test_alloctime"), "--write", synth])
check_eq(r.returncode, 0, "synthetic timed recording written")
j = report_json(synth)
check_eq((j["timed"], j["allocator_time_ns"], j["cpu_user_ns"], j["cpu_sys_ns"]), (True, 62300, 3000000, 1000000),
         "synthetic: summary's time fields")
check_eq([(e["time_ns"], e["calls"]) for e in j["sections"]["most_time"]], [(61000, 2), (1300, 3)],
         "synthetic: MOST TIME IN THE ALLOCATOR")
check_eq([(e["time_ns"], e["calls"]) for e in j["sections"]["most_calls"]], [(1300, 3), (61000, 2)],
         "synthetic: MOST CALLS")
_, text, _ = report_text(synth)
check("time in the allocator: 62.30 us (62300 ns), 1.6% of the run's CPU time (0.003 s user + 0.001 s system)"
      in text, "synthetic: the summary's time line")
check("61.00 us (61000 ns) in the allocator (97.9% of all allocator time) in 2 calls" in text,
      "synthetic: the section's first entry")
folded = os.path.join(d, "synth.folded")
mp(["--folded", folded, "--cost", "time", synth], "synthetic --folded --cost time")
with open(folded) as f:
    check_eq(sorted(f.read().splitlines()), ["?? in ?+0xa00;?? in ?+0xb00 1300", "?? in ?+0xa00;?? in ?+0xc00 61000"],
             "synthetic: folded time")
svg = os.path.join(d, "synth.svg")
mp(["--svg", svg, "--cost", "time", "--reverse", synth], "synthetic --svg --cost time --reverse")
root = ET.parse(svg).getroot()
vals = [int(g.get("data-v")) for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "f"]
check_eq(max(vals) if vals else None, 62300, "synthetic: the SVG's root is the total time")
r = mp(["--group", "site", "--sections", "time", synth], "synthetic --group site --sections time")
check("MOST TIME IN THE ALLOCATOR, BY ALLOCATION SITE" in r.stdout.decode() and "61000 ns in the allocator"
      in r.stdout.decode(), "synthetic: --group site ranks by time")
j = mpj(["--diff", synth, synth], "synthetic --diff")
check_eq((j["base"]["time"], j["new"]["time"], j["delta"]["time"], j["changes"]["time"]), (62300, 62300, 0, []),
         "synthetic --diff: time figures")
j = mpj(["--from", "0.010", synth], "synthetic window")
check_eq(j["allocator_time_ns"], 1790, "synthetic: a window keeps its events' time (thread 2's calls)")
t = mpj(["--alloc-time", synth], "synthetic --alloc-time")["alloc_time"]
check_eq((t["calls"], t["total_ns"]), (9, 62300), "synthetic tables: totals")
check_eq([(x["size_class"], x["calls"], x["total_ns"], x["mean_ns"], x["p50_ns"], x["p99_ns"], x["max_ns"])
          for x in t["size_classes"]],
         [(5, 4, 510, 128, 61, 296, 300), (7, 1, 1000, 1000, 1000, 1000, 1000), (8, 2, 790, 395, 90, 688, 700),
          (26, 2, 60000, 30000, 19968, 39936, 40000)], "synthetic tables: size classes")
check_eq([(x["function"], x["calls"], x["total_ns"]) for x in t["functions"]],
         [("malloc", 3, 40400), ("realloc", 1, 700), ("operator new", 1, 1000), ("free", 4, 20200)],
         "synthetic tables: functions")
check_eq([(x["thread"], x["tid"], x["calls"], x["total_ns"], x["wall_ns"], x["cpu_ns"]) for x in t["threads"]],
         [(1, 100, 6, 60510, 5000000, 1000000), (2, 101, 3, 1790, 2000000, 500000)], "synthetic tables: threads")
# memprint --threads: the allocator time of each thread's blocks (here every
# block is freed by its own thread, so the calls it made): thread 1
# 100+50+300+60+40000+20000, thread 2 1000 (new) + 700 (the realloc, whole)
# + 90 (free); the realloc's freed half adds no call.
j = mpj(["--threads", synth], "synthetic --threads")
check_eq([(x["thread"], x["tid"], x["calls"], x["allocator_time_ns"], x["wall_ns"], x["cpu_ns"])
          for x in j["threads_section"]],
         [(1, 100, 3, 60510, 5000000, 1000000), (2, 101, 2, 1790, 2000000, 500000)],
         "synthetic --threads: allocator time, lifetime and CPU time per thread")
r = mp(["--threads", "--sections", "calls", synth], "synthetic --threads text")
lines = r.stdout.decode().split("THREADS (", 1)[-1].splitlines()
check_eq([l.split() for l in lines[1:4]],
         [["thread", "tid", "calls", "temporary", "allocated", "peak", "share", "leaked", "alloc", "time", "ns",
           "lifetime", "cpu"],
          ["1", "100", "3", "3", "41943072", "41943040", "0", "60510", "5.000", "ms", "1.000", "ms"],
          ["2", "101", "2", "2", "300", "0", "0", "1790", "2.000", "ms", "500.00", "us"]],
         "synthetic --threads text: the alloc time column, then the THREAD_TIMES (5 ms and 1 ms, 2 ms and 0.5 ms)")
check_eq(len(lines[1]), len(lines[2]), "synthetic --threads text: the time column's heading over its figures")
if os.path.exists(MEMTUI):
    r = run([MEMTUI, "--batch", "-c", "time", synth])
    check_eq(r.returncode, 0, "synthetic memtui -c time: exit status")
    check("cost: time (ns in the allocator)" in r.stdout.decode(), "synthetic memtui: the title names the cost")
    check(re.search(r"MOST TIME IN THE ALLOCATOR\n\s+61000 ", r.stdout.decode()) is not None,
          "synthetic memtui summary: the time heading and its first site")
    r = run([MEMTUI, "--batch", "--size", "140x40", "--keys", "7", synth])
    screen = r.stdout.decode()
    check("ALLOCATOR TIME PER SIZE CLASS" in screen, "synthetic memtui view 7: the size-class table")
    check(re.search(r"33554432 - 67108863 +2 +60.00 us +30000 +19968 +39936 +40000", screen) is not None,
          "synthetic memtui view 7: the 40 MiB row")
    r = run([MEMTUI, "--batch", "--keys", "C C C C", synth])
    check("cost: time" in r.stdout.decode(),
          "synthetic memtui: C from peak through temporary, calls, growth reaches time")

# memtui in a terminal (tmux, as tests/integration/test_memtui.py drives it):
# the size-class view and the time cost by keys.
if os.path.exists(MEMTUI) and shutil.which("tmux"):
    sock = "alloc-time-test-%d" % os.getpid()

    def tmux(*args):
        return subprocess.run(["tmux", "-L", sock] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=30).stdout

    def screen_has(text, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in tmux("capture-pane", "-p", "-t", "at"):
                return True
            time.sleep(0.05)
        return False

    tmux("new-session", "-d", "-s", "at", "-x", "140", "-y", "40",
         "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen %s %s; sleep 30" % (MEMTUI, synth))
    try:
        check(screen_has("MOST TIME IN THE ALLOCATOR"), "tmux memtui: the summary has the time heading")
        tmux("send-keys", "-t", "at", "7")
        check(screen_has("33554432 - 67108863                      2      60.00 us"),
              "tmux memtui: key 7 shows the size-class table")
        tmux("send-keys", "-t", "at", "2", "C", "C", "C", "C")
        check(screen_has("cost: time (ns in the allocator)"),
              "tmux memtui: C C C C reaches the time cost (through growth)")
        check(screen_has("62300"), "tmux memtui: the top-down tree shows the total time")
        tmux("send-keys", "-t", "at", "q")
    finally:
        tmux("kill-server")
else:
    skip_part("memtui in tmux", "memtui is not built or tmux is not installed (scripts/deps.sh installs it)")

# ---- bounds: a timed file naming 200,000 threads, every time the largest ----

ASAN = is_asan(MEMPRINT)
hostile = os.path.join(d, "threads-200000.zst")
r = run([os.path.join(BUILD, "tests", "test_alloctime"), "--write-threads", hostile, "200000"], timeout=300)
check_eq(r.returncode, 0, "hostile timed recording written")
for tool, args in ((MEMPRINT, ["--alloc-time", "--json"]), (MEMPRINT, ["--alloc-time"]), (MEMPRINT, []),
                   (MEMTUI, ["--batch", "--keys", "7"])):
    if not os.path.exists(tool):
        continue
    with open(os.path.join(d, "out"), "wb") as out:
        p = subprocess.Popen([tool] + args + [hostile], stdout=out, stderr=subprocess.PIPE,
                             preexec_fn=memory_cap(2, ASAN), env=capped_env(2, ASAN))
        _, status, usage = os.wait4(p.pid, 0)
    what = "threads-200000: %s %s" % (os.path.basename(tool), " ".join(args))
    check_eq(os.waitstatus_to_exitcode(status), 0, "%s: exit status" % what)
    check(usage.ru_maxrss / 1024.0 < (300 if ASAN else 100), "%s: peak RSS %.1f MiB" % (what, usage.ru_maxrss / 1024.0))
    check(usage.ru_utime + usage.ru_stime < (10 if ASAN else 3), "%s: CPU %.2f s" % (what, usage.ru_utime + usage.ru_stime))
    check(os.path.getsize(os.path.join(d, "out")) < 1 << 20, "%s: output under 1 MiB" % what)
    if "--json" in args:
        with open(os.path.join(d, "out")) as f:
            t = json.load(f)["alloc_time"]
        check_eq((len(t["threads"]), t["merged_threads"], t["calls"]), (1025, 200000 - 1024, 400000),
                 "threads-200000: 1024 thread rows and one for the rest")
        check_eq(t["threads"][-1]["wall_ns"], 2 ** 64 - 1, "threads-200000: sums saturate")
        check_eq(t["total_ns"], 400000 * (2 ** 32 - 1), "threads-200000: each time saturated at 2^32 - 1 ns")
    os.unlink(os.path.join(d, "out"))

# ---- recordings with --time ----

r = run([MEMREC, "--help"])
if b"--time" not in r.stdout + r.stderr:
    skip_part("timed recordings", "this memrec has no --time option (the recorder's half of issue 15)")
    done()


def record_timed(argv, name, env=None):
    out = os.path.join(d, name + ".zst")
    r = record(argv, out, extra=["--time"], env=env)
    check_eq(r.returncode, 0, "%s: memrec --time exit status (%s)" % (name, r.stderr.decode().strip()[:300]))
    return out


sites = record_timed([prog("timea_sites")], "sites")
j = report_json(sites, top=1000)
check_eq(j["timed"], True, "sites: the JSON says timed")
check_eq(j["allocations"], 202000, "sites: allocations")
total = j["allocator_time_ns"]
check(total > 0, "sites: allocator time is recorded (%s ns)" % total)
top_time = j["sections"]["most_time"][0]
top_calls = j["sections"]["most_calls"][0]
check("big_site" in functions_of(top_time), "sites: MOST TIME ranks the 40 MiB site first")
check("small_site" in functions_of(top_calls), "sites: MOST CALLS ranks the small site first")
check_eq(top_calls["calls"], 200000, "sites: the small site's calls")
big = [e for e in j["sections"]["most_time"] if "big_site" in functions_of(e)]
check_eq(big[0]["calls"] if big else None, 2000, "sites: the big site's calls")
check_eq(sum(e["time_ns"] for e in j["sections"]["most_time"]), total,
         "sites: the stacks' times sum to the summary's total")
_, text, _ = report_text(sites)
check("MOST TIME IN THE ALLOCATOR" in text, "sites: the text report has the section")
check(re.search(r"time in the allocator: [0-9.]+ [mun]?s \(%d ns\), [0-9.]+%% of the run's CPU time" % total, text)
      is not None,
      "sites: the summary gives the total and its share of the CPU time")
share = re.search(r"([0-9.]+)% of the run's CPU time[^\n]*", text)
waited = share is not None and "threads waited inside the allocator" in share.group(0)
check(share is not None and waited == (float(share.group(1)) > 100.0),
      "sites: a share over 100%% of the CPU time, and only then, says the threads waited inside the allocator (%s)" %
      (share.group(0) if share else None))

# Folded stacks and the SVG weighted by time: the same total.
folded = os.path.join(d, "sites.folded")
mp(["--folded", folded, "--cost", "time", sites], "sites --folded --cost time")
with open(folded) as f:
    lines = [l.rsplit(" ", 1) for l in f.read().splitlines() if l]
check_eq(sum(int(v) for _, v in lines), total, "sites: folded time lines sum to the total")
check(max(lines, key=lambda x: int(x[1]))[0].endswith("big_site"), "sites: the heaviest folded line is big_site")
svg = os.path.join(d, "sites.svg")
mp(["--svg", svg, "--cost", "time", sites], "sites --svg --cost time")
root = ET.parse(svg).getroot()
vals = [int(g.get("data-v")) for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "f"]
check_eq(max(vals) if vals else None, total, "sites: the SVG's root frame is the total time")
check_eq(root.get("data-unit"), "ns", "sites: the SVG's unit")

# The tables.
t = mpj(["--alloc-time", sites], "sites --alloc-time")["alloc_time"]
check_eq(t["total_ns"], total, "tables: total equals the summary's")
for table in ("size_classes", "functions", "threads"):
    check_eq(sum(x["total_ns"] for x in t[table]), total, "tables: %s sum to the total" % table)
    check_eq(sum(x["calls"] for x in t[table]), t["calls"], "tables: %s' calls sum to all calls" % table)
check_eq(t["calls"], 404000, "tables: calls (every malloc and free)")
small, large = row(t["size_classes"], "size_class", size_class(16)), row(t["size_classes"], "size_class",
                                                                           size_class(BIG))
check(small is not None and large is not None, "tables: the 16-byte and 40 MiB classes are there")
if small and large:
    check_eq((small["calls"], large["calls"]), (400000, 4000), "tables: calls of the two classes")
    check(large["mean_ns"] > 50 * max(small["mean_ns"], 1),
          "tables: the 40 MiB class's mean (%d ns) is far above the 16-byte class's (%d ns)"
          % (large["mean_ns"], small["mean_ns"]))
    for x in (small, large):
        check(x["p50_ns"] <= x["p99_ns"] <= x["max_ns"], "tables: p50 <= p99 <= max")
check_eq(sorted((x["function"], x["calls"]) for x in t["functions"]), [("free", 202000), ("malloc", 202000)],
         "tables: calls per function")
for x in t["threads"]:
    if x["wall_ns"] is not None:
        check(x["total_ns"] <= x["wall_ns"], "tables: thread %d's allocator time %d <= its lifetime %d"
              % (x["thread"], x["total_ns"], x["wall_ns"]))
check(any(x["wall_ns"] is not None for x in t["threads"]), "tables: threads have their lifetimes")
r = mp(["--alloc-time", sites], "sites --alloc-time text")
for title in ("ALLOCATOR TIME PER SIZE CLASS", "ALLOCATOR TIME PER FUNCTION", "ALLOCATOR TIME PER THREAD"):
    check(title in r.stdout.decode(), "tables text: %s" % title)

# Sampling: the sampled calls are timed, the figures are estimates and say so.
sampled = os.path.join(d, "sites-sampled.zst")
r = record([prog("timea_sites")], sampled, extra=["--time", "--sample-rate", "65536"])
check_eq(r.returncode, 0, "sampled: memrec --time --sample-rate exit status")
j = report_json(sampled)
check_eq((j["sampled"], j["timed"]), (True, True), "sampled: JSON says sampled and timed")
_, text, _ = report_text(sampled)
check(re.search(r"time in the allocator: ~[0-9.]+ [mun]?s", text) is not None, "sampled: the summary's time is marked ~")
t = mpj(["--alloc-time", sampled], "sampled --alloc-time")["alloc_time"]
check_eq(t["sampled"], True, "sampled tables: marked sampled")
large = row(t["size_classes"], "size_class", size_class(BIG))
# A 40 MiB block is sampled with probability 1 - exp(-640): all of them, weight 1.
check_eq(large["calls"] if large else None, 4000, "sampled tables: every 40 MiB call (weight 1)")
r = mp(["--alloc-time", sampled], "sampled --alloc-time text")
check("'~' marks estimates" in r.stdout.decode(), "sampled tables text: says estimates are marked")

# ---- contention: threads sharing one arena ----


def worker_mean(path, pairs):
    t = mpj(["--alloc-time", path], "threads --alloc-time")["alloc_time"]
    workers = [x for x in t["threads"] if x["calls"] >= 2 * pairs]
    calls = sum(x["calls"] for x in workers)
    for x in t["threads"]:
        if x["wall_ns"] is not None:
            check(x["total_ns"] <= x["wall_ns"], "threads: a thread's allocator time <= its lifetime")
    return (sum(x["total_ns"] for x in workers) / calls if calls else 0), len(workers)


PAIRS = 200000
env = dict(os.environ, MALLOC_ARENA_MAX="1")
best = None
for attempt in range(5):
    one, n1 = worker_mean(record_timed([prog("timea_threads"), "1", str(PAIRS)], "threads1-%d" % attempt, env), PAIRS)
    threads8 = record_timed([prog("timea_threads"), "8", str(PAIRS)], "threads8-%d" % attempt, env)
    eight, n8 = worker_mean(threads8, PAIRS)
    print("   attempt %d: one thread %.0f ns a call, 8 threads %.0f ns a call" % (attempt, one, eight))
    check_eq((n1, n8), (1, 8), "threads: worker rows")
    best = max(best or 0, eight / one if one else 0)
    if best > 1.2:
        break
check(best > 1.2, "threads: 8 threads on one arena pay more per call than one alone (best ratio %.2f)" % best)
# memprint --threads on the last 8 threads: every thread frees its own
# blocks, so each row's time is exactly --alloc-time's for that thread, and
# the rows sum to the summary's.
j = mpj(["--threads", threads8], "threads --threads")
t = mpj(["--alloc-time", threads8], "threads --alloc-time")["alloc_time"]
rows = {x["thread"]: x["allocator_time_ns"] for x in j["threads_section"]}
check_eq(rows, {x["thread"]: x["total_ns"] for x in t["threads"]}, "threads --threads: time per thread = --alloc-time's")
check_eq(sum(rows.values()), j["allocator_time_ns"], "threads --threads: the rows' times sum to the summary's")
check_eq(sorted(x["calls"] for x in j["threads_section"])[-8:], [PAIRS] * 8, "threads --threads: 8 workers' calls")

# ---- --diff --alloc-time: the percentiles beside the means ----

# Two timed recordings with different calls: each text row of both tables
# shows base's and new's calls, mean, p50 and p99, the JSON's figures.
dj = mpj(["--diff", sites, threads8, "--alloc-time"], "diff --alloc-time sites threads8")["alloc_time_diff"]
text = mp(["--diff", sites, threads8, "--alloc-time"], "diff --alloc-time sites threads8 text").stdout.decode()
tables = {}
for block in text.split("\n\n"):
    lines = block.strip("\n").split("\n")
    if len(lines) < 3 or not lines[0].startswith("ALLOCATOR TIME PER "):
        continue
    head = lines[1].split()
    check_eq(head[1:11], ["base", "calls", "base", "mean", "base", "p50", "base", "p99", "new", "calls"],
             "diff --alloc-time text: the base's p50 and p99 beside its mean (%s)" % lines[0][:40])
    # The label is %-28s after two spaces; the figures follow.
    tables[lines[0].split(":")[0]] = [tuple(int(x) for x in ln[31:].split()[:8]) for ln in lines[2:]]
for title, key in (("ALLOCATOR TIME PER SIZE CLASS", "size_classes"), ("ALLOCATOR TIME PER FUNCTION", "functions")):
    want = [(x["base"]["calls"], x["base"]["mean_ns"], x["base"]["p50_ns"], x["base"]["p99_ns"], x["new"]["calls"],
             x["new"]["mean_ns"], x["new"]["p50_ns"], x["new"]["p99_ns"]) for x in dj.get(key, [])]
    check(len(want) >= 2 and any(w[2] != w[6] for w in want),
          "diff --alloc-time %s: rows whose p50s differ between the runs (%d rows)" % (key, len(want)))
    check_eq(tables.get(title), want, "diff --alloc-time text %s: calls, mean, p50, p99 of base and new" % key)

# ---- comparing allocators (docs/allocators.md) ----

asan = is_asan(MEMREC)
runs = {"glibc": sites}
for name, lib in ALLOCATORS:
    path = os.path.join(LIBDIR, lib)
    if not os.path.exists(path):
        skip_part("allocator %s" % name, "%s is not installed (scripts/deps.sh installs it)" % path)
        continue
    if asan:
        skip_part("allocator %s" % name, "memrec is built with AddressSanitizer, which refuses another preload")
        continue
    runs[name] = record_timed([prog("timea_sites")], "sites-" + name, env=dict(os.environ, LD_PRELOAD=path))
for name, path in runs.items():
    if name == "glibc":
        continue
    j = mpj(["--diff", sites, path], "diff glibc %s" % name)
    check_eq(j["base"]["calls"], j["new"]["calls"], "diff glibc %s: the same calls" % name)
    check(j["new"]["time"] > 0 and j["delta"]["time"] == j["new"]["time"] - j["base"]["time"],
          "diff glibc %s: time delta" % name)
    dj = mpj(["--diff", sites, path, "--alloc-time"], "diff --alloc-time glibc %s" % name)["alloc_time_diff"]
    for cls in (size_class(16), size_class(BIG)):
        x = row(dj["size_classes"], "size_class", cls)
        check(x is not None and x["base"]["calls"] == x["new"]["calls"] and x["new"]["calls"] > 0,
              "diff --alloc-time glibc %s: class %d has both runs' calls" % (name, cls))
    r = mp(["--diff", sites, path, "--alloc-time"], "diff --alloc-time text %s" % name)
    check("ALLOCATOR TIME PER SIZE CLASS: BASE AND NEW" in r.stdout.decode(), "diff --alloc-time text %s" % name)
    print("   %s vs glibc: %s" % (name, [(x["size_class"], x["base"]["mean_ns"], x["new"]["mean_ns"])
                                     for x in dj["size_classes"]]))

# ---- memtui: the time cost and the size-class view ----

if os.path.exists(MEMTUI):
    r = run([MEMTUI, "--batch", "-c", "time", sites])
    check_eq(r.returncode, 0, "memtui -c time: exit status")
    screen = r.stdout.decode()
    check("cost: time" in screen, "memtui -c time: the title names the cost")
    check("MOST TIME IN THE ALLOCATOR" in screen, "memtui summary: the time heading")
    r = run([MEMTUI, "--batch", "--size", "140x40", "--keys", "7", sites])
    screen = r.stdout.decode()
    check("ALLOCATOR TIME PER SIZE CLASS" in screen, "memtui view 7: the size-class table")
    check(re.search(r"16 - 31\s+400000", screen) is not None, "memtui view 7: the 16-byte class's calls")
    check(re.search(r"33554432 - 67108863\s+4000", screen) is not None, "memtui view 7: the 40 MiB class's calls")
done()
