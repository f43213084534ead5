# SPDX-License-Identifier: MIT
"""memrec --time (issue 15, recorder and format side): each forwarded
allocator call carries its time in the allocator. tests/progs/time_sizes.c
has a site of 200,000 malloc(20)/free pairs and one of 2,000
malloc(41943041)/free pairs (an mmap and a munmap each in glibc): the large
calls must take far longer. The file is read by mrecread.py, a reader
written from docs/format.md alone. Without --time the events are exactly
those of a timed run, in the version 2 layout."""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403
from mrecread import OP_ALLOC, OP_FREE, Recording  # noqa: E402

if not shutil.which("zstd"):
    skip("the zstd command is needed to read the recordings")

SMALL, BIG, WORKER = 20, 41943041, 30
d = tmpdir()


def by_size(rec, size, typ):
    return [e[5] for e in rec.events if e[3] == size and e[2] == typ]


def mean(xs):
    return sum(xs) / len(xs) if xs else 0.0


# ---- timed, with a thread that ends before the sites run ----
out = os.path.join(d, "timed.zst")
r = record([prog("time_sizes"), "thread"], out, extra=("--time",))
check_eq(r.returncode, 0, "memrec --time exit status")
t = Recording(out)
check_eq(t.version, 4, "format version")
check(t.timed, "the header has the TIMED flag")
small_a, small_f = by_size(t, SMALL, OP_ALLOC), by_size(t, SMALL, OP_FREE)
big_a, big_f = by_size(t, BIG, OP_ALLOC), by_size(t, BIG, OP_FREE)
check_eq((len(small_a), len(small_f)), (200000, 200000), "small site: allocations and frees")
check_eq((len(big_a), len(big_f)), (2000, 2000), "40 MiB site: allocations and frees")
check_eq(len(by_size(t, WORKER, OP_ALLOC)), 50000, "the thread's allocations")
# A small malloc takes a few ns, about the step of some clocks (the TSC of
# the reference virtual machine moves in 10 ns steps): it may read 0 or one
# step, and only its mean is meaningful. A 40 MiB call never reads 0.
check(all(ns > 0 for ns in big_a + big_f), "every 40 MiB call has a time above 0 ns")
check(sum(1 for ns in small_a + small_f if ns > 0) >= len(small_a) / 2,
      "most small calls read at least one clock step")
ms, mb = mean(small_a + small_f), mean(big_a + big_f)
print("mean time in the allocator: small %.1f ns, 40 MiB %.1f ns" % (ms, mb))
check(ms > 0 and mb > 10 * ms, "the 40 MiB calls' mean (%.0f ns) is over 10 times the small ones' (%.1f ns)" % (mb, ms))
check(mean(big_a) > 10 * mean(small_a), "so are the allocations alone (%.0f vs %.1f ns)" % (mean(big_a), mean(small_a)))
check(mean(big_f) > 10 * mean(small_f), "and the frees alone (%.0f vs %.1f ns)" % (mean(big_f), mean(small_f)))
check(ms < 100000, "a small malloc or free takes under 100 us on average (%.1f ns): no recorder work is counted" % ms)

# THREAD_TIMES: one per thread, and a thread's time in the allocator is
# part of its lifetime.
threads = {e[0] for e in t.events}
times = {th: (w, c) for th, w, c in t.thread_times}
check_eq(sorted(times), sorted(threads), "a THREAD_TIMES record for each thread with events")
for th in sorted(threads):
    spent = sum(e[5] for e in t.events if e[0] == th)
    wall = times.get(th, (0, 0))[0]
    check(0 < spent <= wall, "thread %d: %d ns in the allocator within its lifetime of %d ns" % (th, spent, wall))
worker = [th for th in threads if any(e[3] == WORKER for e in t.events if e[0] == th)]
check(len(worker) == 1 and times.get(worker[0], (0, 0))[1] > 0, "the thread that ended said its CPU time")
check(all(c <= w for w, c in times.values()), "no thread's CPU time exceeds its lifetime (%s)" % times)
check(t.end is not None and t.end[2] + t.end[3] > 0, "END holds the process's CPU time (%s)" % (t.end,))
check(t.end is not None and t.end[2] + t.end[3] <= (t.end[1] + 50) * 2 * 1000000,
      "which is at most the runtime times 2 CPUs (%s)" % (t.end,))

# ---- single-threaded: the same events with and without --time ----
runs = {}
for name, extra in (("untimed", ()), ("timed1", ("--time",))):
    p = os.path.join(d, name + ".zst")
    r = record([prog("time_sizes")], p, extra=extra)
    check_eq(r.returncode, 0, "memrec %s exit status" % name)
    runs[name] = Recording(p)
u, t1 = runs["untimed"], runs["timed1"]
check(not u.timed and u.flags & 2 == 0, "without --time: no TIMED flag")
check(all(e[5] == 0 for e in u.events), "without --time: no event has a time")
check([e[:5] for e in u.events] == [e[:5] for e in t1.events],
      "the same %d events with and without --time (thread, kind, type, size, trace)" % len(u.events))
check(t1.thread_times and u.thread_times, "THREAD_TIMES are written with or without --time")


def columns(rec):
    """The bytes of each column of every EVENTS block, concatenated (the
    block boundaries differ: a timed block holds fewer events)."""
    cols = [b""] * 6
    for p in rec.events_bytes:
        lens, k = [], 0
        for _ in range(5 if rec.timed else 4):
            v = 0
            shift = 0
            while True:
                c = p[k]
                k += 1
                v |= (c & 0x7F) << shift
                shift += 7
                if c < 0x80:
                    break
            lens.append(v)
        for i, n in enumerate(lens):
            cols[i] += p[k:k + n]
            k += n
        cols[len(lens)] += p[k:]
    return cols


cu, ct = columns(u), columns(t1)
check(cu[:5] == ct[:5], "the operation, info, size, trace and thread columns are byte for byte the same")
check(cu[5] == b"" and len(ct[5]) > 0, "only the timed file has a time column (%d bytes)" % len(ct[5]))

# ---- sampling: the sampled calls are timed ----
sp = os.path.join(d, "sampled.zst")
r = record([prog("time_sizes")], sp, extra=("--time", "--sample-rate", "64K"))
check_eq(r.returncode, 0, "memrec --time --sample-rate exit status")
s = Recording(sp)
check(s.timed and s.sample_rate == 65536, "a sampled timed file says both")
sb = by_size(s, BIG, OP_ALLOC)
check_eq(len(sb), 2000, "every 40 MiB allocation is sampled at 64 KiB")
check(sum(1 for ns in sb if ns > 0) == len(sb), "and timed")
ss = by_size(s, SMALL, OP_ALLOC)
check(len(ss) < 2000, "few small allocations are sampled (%d)" % len(ss))
check(not ss or mean(sb) > 10 * mean(ss), "sampled 40 MiB mean %.0f ns over 10 times the small %.1f ns" % (mean(sb), mean(ss)))

# ---- threads still running at exit: their CPU time, read by the exiting
# thread from their CPU clocks (tests/progs/live_threads.c: each worker
# burns 60 ms of its own CPU time, then blocks; main exits) ----
lt = os.path.join(d, "live.zst")
r = record([prog("live_threads")], lt)
check_eq(r.returncode, 0, "live_threads: memrec exit status")
a = Recording(lt)
times = {th: (w, c) for th, w, c in a.thread_times}
check_eq(len(times), 3, "live_threads: a THREAD_TIMES record for each of the 3 threads")
# CPU time counts from a thread's first event, as its lifetime does: a
# worker's 60 ms less what it ran before its malloc (microseconds).
workers = sorted(th for th in times if times[th][1] >= 59000000)
check_eq(len(workers), 2, "live_threads: both running workers have their CPU time, about 60 ms (%s)" % times)
for th in workers:
    w, c = times[th]
    check(c < 60000000 + 40000000 and c <= w,
          "live_threads: worker %d: CPU %d ns, the 60 ms it burnt and little more, within its lifetime %d ns"
          % (th, c, w))
check(all(c <= w for w, c in times.values()), "live_threads: no thread's CPU time exceeds its lifetime (%s)" % times)
# memprint --threads shows them, in JSON and in the text.
r = run([MEMPRINT, "--threads", "-j", lt])
rows = json.loads(r.stdout)["threads_section"] if r.returncode == 0 else []
check_eq(sorted((x["wall_ns"], x["cpu_ns"]) for x in rows), sorted(times.values()),
         "live_threads: memprint --threads gives each thread's lifetime and CPU time")
r = run([MEMPRINT, "--threads", "--sections", "calls", lt])
text = r.stdout.decode().split("THREADS (", 1)[-1]
check("lifetime" in text and " ms " in text and text.count(" ms") >= 5,
      "live_threads: the --threads text has the lifetime and cpu columns")

# exec: the threads of the image that ends say their times as it ends, the
# thread that calls exec included (tests/progs/execself, one thread each).
ex = os.path.join(d, "exec.zst")
r = record([prog("execself"), "execv"], ex)
check_eq(r.returncode, 0, "execself: memrec exit status")
times = {th: (w, c) for th, w, c in Recording(ex).thread_times}
check(len(times) == 2 and all(0 < c <= w for w, c in times.values()),
      "execself: both images' threads have a CPU time within their lifetime (%s)" % times)

# The same program as a followed descendant: memrec is not its parent and
# has no wait status, so END's CPU time is what the recorder read as the
# process exited: at least the 120 ms the two workers burnt.
lf = os.path.join(d, "livef.zst")
r = run([MEMREC, "-q", "-f", "-o", lf, "sh", "-c", "%s; true" % prog("live_threads")])
check_eq(r.returncode, 0, "sh -c live_threads -f: memrec exit status")
kids = glob.glob(os.path.join(d, "livef.*.zst"))
check_eq(len(kids), 1, "sh -c live_threads -f: one file for the child")
if kids:
    e = Recording(kids[0]).end
    check(e is not None and 120000000 <= e[2] + e[3] <= (e[1] + 50) * 2 * 1000000,
          "a followed descendant's END has its CPU time, from its recorder: %s" % (e,))

# ---- memrec --pid --time: a running process, attached and detached ----
busy = subprocess.Popen([prog("busy"), "1", os.path.join(d, "busy.counters")], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE)
if busy.stdout.readline().decode().strip() != "ready":
    busy.kill()
    check(False, "tests/progs/busy started")
else:
    pp = os.path.join(d, "pid.zst")
    rc, err = attach(busy.pid, pp, 1, extra=["--time"])
    check_eq(rc, 0, "memrec --time --pid exit status (%s)" % err.strip()[-300:])
    # Attached again: the thread's buffer survives from the first attach,
    # but its lifetime and CPU time start over in the second recording;
    # both are said at the detach (the thread runs on).
    pp2 = os.path.join(d, "pid2.zst")
    time.sleep(0.5)
    rc2, err2 = attach(busy.pid, pp2, 1)
    check_eq(rc2, 0, "second memrec --pid exit status (%s)" % err2.strip()[-300:])
    for name, path, ok in (("first", pp, rc == 0), ("second", pp2, rc2 == 0)):
        if not ok:
            continue
        a = Recording(path, events=False)
        runtime_ns = a.end[1] * 1000000 if a.end else 0
        tt = a.thread_times
        check(tt and all(0 < c <= w <= runtime_ns + 50000000 for th, w, c in tt),
              "%s attach: each thread's CPU time within its lifetime, within the recording's %d ms (%s)"
              % (name, a.end[1] if a.end else -1, tt))
    busy.send_signal(signal.SIGTERM)
    check_eq(busy.wait(timeout=30), 0, "the process ran on after the detach and ended cleanly")
    if rc == 0:
        a = Recording(pp)
        check(a.timed and a.flags & 1, "the attached recording is timed and says it was attached")
        check(len(a.events) > 1000 and sum(e[5] for e in a.events) > 0, "its %d events have times" % len(a.events))
        spent = {}
        for e in a.events:
            spent[e[0]] = spent.get(e[0], 0) + e[5]
        tt = {th: w for th, w, c in a.thread_times}
        check(all(0 < spent[th] <= tt.get(th, 0) for th in spent),
              "each thread's time in the allocator is within its recorded lifetime (%s, %s)" % (spent, tt))
        check(a.end is not None and a.end[0] == 2, "END says the recording stopped while the process ran")

done()
