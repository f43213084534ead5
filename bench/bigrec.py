#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/bigrec.py: the analyzers on a recording the size a server makes in
an hour (issue 25, "hour-long recordings"). Records the shared churn
workload with N allocations (default 100,000,000) once, then times, in
rounds, memprint's report, memprint on a 10-second window in the middle of
the run (--from/--to), memtui's first screen (the summary, memtui --batch)
and memtui's other views (--batch --keys), with their peak RSS, and prints
medians against the issue's targets. The recording is made here, never
stored (about 2.8 bytes an allocation: 280 MB for 100 M). Writes only a
temporary directory (removed at the end unless --keep). See bench/README.md.

usage: bench/bigrec.py [-n ALLOCATIONS] [-r ROUNDS] [--keep] [BUILD]"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realprogs  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# Targets of issue 25.
TARGET_SUMMARY = 2.0  # memtui's summary, seconds
TARGET_VIEW = 5.0  # every other view of memtui, seconds
WINDOW_S = 10.0  # the window memprint --from/--to is timed on

# memtui's views by the key that opens them (memtui(1)).
VIEWS = [("top-down", "2"), ("bottom-up", "3"), ("flame graph", "5"), ("over time", "6")]


def timed(argv):
    """(wall seconds, peak RSS in MiB or None) of one run, through
    realprogs.run() (its RSS comes from /usr/bin/time, which a child's
    ru_maxrss cannot replace: None without it)."""
    wall, rss, rc = realprogs.run(argv)
    if rc != 0:
        sys.exit("bigrec: '%s' failed with status %d (run it by hand to see why)" % (" ".join(argv), rc))
    return wall, (rss / (1024.0 * 1024.0) if realprogs.TIME else None)


def runtime_s(memprint, path):
    """The recording's run time, from memprint's summary line."""
    r = subprocess.run([memprint, "-n", "0", path], stdout=subprocess.PIPE, check=True)
    for line in r.stdout.decode().splitlines():
        if line.startswith("total runtime:"):
            return float(line.split()[2])
    sys.exit("bigrec: no 'total runtime' line in memprint's report of %s" % path)


def main():
    ap = argparse.ArgumentParser(description="memprint and memtui on a 100 M-allocation recording")
    ap.add_argument("build", nargs="?", help="memrec build directory (default $MEMREC_BUILD_DIR, else build/)")
    ap.add_argument("-n", type=int, default=100000000, help="allocations of the churn workload (default 100000000)")
    ap.add_argument("-r", "--rounds", type=int, default=3, help="rounds of each analysis (default 3)")
    ap.add_argument("--src", help="workload sources (default $MEMREC_BENCH_SRC, else ../shared/bench)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()
    build = os.path.abspath(args.build or os.environ.get("MEMREC_BUILD_DIR") or os.path.join(REPO, "build"))
    tools = {t: os.path.join(build, t) for t in ("memrec", "memprint", "memtui")}
    for t, path in tools.items():
        if not os.access(path, os.X_OK):
            sys.exit("bigrec: no %s in %s (build memrec first)" % (t, build))
    src = os.path.abspath(args.src or os.environ.get("MEMREC_BENCH_SRC") or os.path.join(REPO, "..", "shared", "bench"))
    if not os.path.isfile(os.path.join(src, "Makefile")):
        sys.exit("bigrec: cannot find the workloads in '%s' (set MEMREC_BENCH_SRC or --src)" % src)

    tmp = tempfile.mkdtemp(prefix="memrec-bigrec-")
    try:
        if subprocess.run(["make", "-s", "-C", src, "O=%s" % tmp], stdout=sys.stderr).returncode != 0:
            sys.exit("bigrec: cannot build the workloads ('make -C %s O=%s' failed)" % (src, tmp))
        rec = os.path.join(tmp, "churn.mrec")
        print("recording churn %d ..." % args.n, file=sys.stderr, flush=True)
        wall, _ = timed([tools["memrec"], "-q", "-o", rec, "--", os.path.join(tmp, "churn"), str(args.n)])
        size = os.path.getsize(rec)
        run = runtime_s(tools["memprint"], rec)
        mid = max(0.0, run / 2 - WINDOW_S / 2)
        window = ["--from", "%.3f" % mid, "--to", "%.3f" % (mid + WINDOW_S)]
        print("# bench/bigrec.py -n %d -r %d: churn %d, recorded in %.1f s (run %.1f s), %.1f MB (%.2f B/allocation), "
              "load %s" % (args.n, args.rounds, args.n, wall, run, size / 1e6, size / max(1, args.n),
                           " ".join(open("/proc/loadavg").read().split()[:3])))

        cases = [("memprint (report)", [tools["memprint"], rec], None),
                 ("memprint %s (%.0f s of %.0f s)" % (" ".join(window), WINDOW_S, run), [tools["memprint"]] + window +
                  [rec], None),
                 ("memtui summary (first screen)", [tools["memtui"], "--batch", rec], TARGET_SUMMARY)]
        cases += [("memtui %s (key %s)" % (name, key), [tools["memtui"], "--batch", "--keys", key, rec], TARGET_VIEW)
                  for name, key in VIEWS]
        results = []
        for name, argv, target in cases:
            walls, rsss = [], []
            for r in range(args.rounds):
                print("%s, round %d ..." % (name, r + 1), file=sys.stderr, flush=True)
                w, m = timed(argv)
                walls.append(w)
                rsss.append(m)
            rss = statistics.median(rsss) if None not in rsss else None
            results.append((name, statistics.median(walls), rss, target))
        full = results[0][1]
        print("| analysis | median wall (s) | median peak RSS (MiB) | target | met |")
        print("|---|---|---|---|---|")
        for i, (name, w, m, target) in enumerate(results):
            if i == 1:
                # A window's time in proportion to the window: at most its
                # share of the run, plus a second for opening the file.
                target = full * WINDOW_S / run + 1.0
            met = "-" if target is None else ("yes" if w <= target else "no")
            print("| %s | %.2f | %s | %s | %s |" % (name, w, "-" if m is None else "%.1f" % m,
                                                   "-" if target is None else "<= %.2f s" % target, met))
    finally:
        if args.keep:
            print("kept: %s" % tmp, file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
