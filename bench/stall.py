#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/stall.py: how long the recorder's allocator samples (glibc's
mallinfo2, HEAPINFO records) hold an arena's lock, on perl and python3
with a fragmented heap and on the rss test programs: the longest call of
each run, its CPU time (the walk, which holds the lock of the arena being
walked) and its wall time (which also counts the waits for each lock),
from memprint --json's rss_gap. docs/capture.md, "The allocator's own
figures: mallinfo2 samples", has the table it printed.

usage: python3 bench/stall.py [BUILD] [-r ROUNDS]"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

PERL = r"""
my %h; $h{$_} = "x" x ($_ % 200) for 1..400000;
delete $h{$_} for grep { $_ % 3 } 1..400000;
my @a; push @a, "y" x ($_ % 100) for 1..200000;
select(undef, undef, undef, 0.5);
"""

PYTHON = r"""
import time
d = {i: "x" * (i % 200) for i in range(400000)}
for i in range(0, 400000, 3):
    del d[i]
l = ["y" * (i % 100) for i in range(200000)]
time.sleep(0.5)
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", nargs="?", default=os.path.join(REPO, "build"))
    ap.add_argument("-r", "--rounds", type=int, default=3)
    a = ap.parse_args()
    memrec, memprint = os.path.join(a.build, "memrec"), os.path.join(a.build, "memprint")
    progs = os.path.join(a.build, "tests", "progs")
    tmp = tempfile.mkdtemp(prefix="memrec-stall.")
    try:
        cases = []
        if shutil.which("perl"):
            cases.append(("perl, fragmented hash", ["perl", "-e", PERL]))
        cases.append(("python3, fragmented dict", [sys.executable, "-c", PYTHON]))
        for name in ("rss_single", "rss_arenas", "rss_pinned"):
            cases.append((name, [os.path.join(progs, name)]))
        print("| program | samples | longest call, CPU (ms) | longest call, wall (ms) |")
        print("|---|---|---|---|")
        for label, argv in cases:
            rows = []
            for k in range(a.rounds):
                out = os.path.join(tmp, "r%d.zst" % k)
                subprocess.run([memrec, "-q", "-o", out, "--"] + argv, stdout=subprocess.DEVNULL, check=True)
                p = subprocess.run([memprint, "--json", out], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                g = json.loads(p.stdout).get("rss_gap", {})
                rows.append((g.get("heapinfo_samples", 0), g.get("heapinfo_cost_ns_max", 0) / 1e6,
                             g.get("heapinfo_wall_ns_max", 0) / 1e6))
                os.unlink(out)
            span = lambda i, f: "%s-%s" % (f % min(r[i] for r in rows), f % max(r[i] for r in rows))
            print("| %s | %s | %s | %s |" % (label, span(0, "%d"), span(1, "%.3f"), span(2, "%.3f")))
    finally:
        shutil.rmtree(tmp, True)


if __name__ == "__main__":
    main()
