#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""memtui's opening time and key response on benchmark recordings, seen
from outside as a person sees them: memtui runs in a tmux session of its
own (120x40), the screen is read with capture-pane in a tight loop, and a
time is taken when the screen shows what the step waits for. Each figure
therefore includes one capture-pane round trip (a few milliseconds).

usage: bench/memtui.py [--runs N] RECORDING...   (MEMREC_BUILD_DIR: the build, default build/)
Prints, per recording: the open time (start to the summary on screen,
median of N runs) and each key's response (key sent to the screen changed,
median of N)."""
import os
import statistics
import subprocess
import sys
import time

BUILD = os.environ.get("MEMREC_BUILD_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build")
MEMTUI = os.path.join(BUILD, "memtui")
SOCKET = "memtui-bench-%d" % os.getpid()

# Each step: keys, and what the screen must then contain.
STEPS = [
    (["2"], "function (callees below)"),
    (["Right"], None),
    (["Down"], None),
    (["*"], None),
    (["3"], "allocation site"),
    (["Right"], None),
    (["4"], "function (sorted by"),
    (["Enter"], "CALLERS"),
    (["BSpace"], "function (sorted by"),
    (["s"], "sorted by self"),
    (["c"], "cost: leaked"),
    (["c"], "cost: allocated"),
    (["5"], "FLAME GRAPH"),
    (["Down"], None),
    (["Enter"], None),
    (["BSpace"], None),
    (["6"], "OVER TIME"),
    (["Right"], None),
    # A time window: one more pass over the file, then a new call tree.
    (["w", "1", "0", "0", "-", "3", "0", "0", "Enter"], "WINDOW 0.100-0.300 s"),
    (["x"], None),
    (["v"], "mapped memory"),
    (["1"], "SUMMARY"),
    (["/"], "search:"),
]


def tmux(*args):
    return subprocess.run(["tmux", "-L", SOCKET] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True).stdout


def screen():
    return tmux("capture-pane", "-e", "-p", "-t", "b")


def wait(pred, timeout=300):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        s = screen()
        if pred(s):
            return time.monotonic()
    raise RuntimeError("timed out; screen:\n" + screen())


def one_run(path):
    tmux("new-session", "-d", "-s", "keep", "sleep 3600")
    t0 = time.monotonic()
    tmux("new-session", "-d", "-s", "b", "-x", "120", "-y", "40", "env TERM=screen LANG=C.UTF-8 %s %s; sleep 600" %
         (MEMTUI, path))
    t1 = wait(lambda s: "MOST CALLS TO ALLOCATION FUNCTIONS" in s)
    times = []
    for keys, want in STEPS:
        before = screen()
        start = time.monotonic()
        tmux("send-keys", "-t", "b", *keys)
        if want:
            t = wait(lambda s: want in s and s != before)
        else:
            t = wait(lambda s: s != before)
        times.append(t - start)
    tmux("send-keys", "-t", "b", "Escape", "q")
    tmux("kill-server")
    return t1 - t0, times


def main():
    args = sys.argv[1:]
    runs = 3
    if args[:1] == ["--runs"]:
        runs = int(args[1])
        args = args[2:]
    for path in args:
        opens, keys = [], []
        for _ in range(runs):
            o, k = one_run(os.path.abspath(path))
            opens.append(o)
            keys.append(k)
        med = [statistics.median(k[i] for k in keys) for i in range(len(STEPS))]
        print("%s: %.1f MB, open %.2f s (runs: %s)" % (os.path.basename(path), os.path.getsize(path) / 1e6,
                                                     statistics.median(opens), " ".join("%.2f" % x for x in opens)))
        print("  keys, median ms: " + ", ".join("%s %.0f" % ("+".join(s[0]), m * 1000) for s, m in zip(STEPS, med)))
        print("  slowest key: %.0f ms; median of all keys: %.0f ms" % (max(med) * 1000, statistics.median(med) * 1000))


if __name__ == "__main__":
    main()
