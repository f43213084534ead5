# SPDX-License-Identifier: MIT
"""memtui on a recording still being written, in tmux at 80x24: the
reload runs in the background while the keys are answered on the old
figures (issue 22, item 2). tests/progs/slow.c, with a burst, makes millions of
allocations at once, so that each reload of its file takes a while, then
one a millisecond, so that the file keeps growing. Keys sent while the
title says "reloading" must be answered while it still says so; the title
says LIVE while the file grows; once memrec has ended the file, memtui's
figures are memprint's. The key times are measured: checked against
100 ms by the test's `timing` instance only (tests/README.md)."""
import os
import re
import signal
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

if not shutil.which("tmux"):
    skip("tmux is not installed (scripts/deps.sh installs it)")
if not os.path.exists(os.path.join(BUILD, "memtui")):
    skip("memtui is not built")

from tmuxtui import *  # noqa: E402,F403

BURST = 8000000  # allocations at once: a reload of the file takes about a second
VIEWS = ("Summary", "Top-down")


def title(s):
    return (s or "").split("\n")[0]


d = tmpdir()
tmux("new-session", "-d", "-s", "keeper", "sleep 3600")
rec = None
try:
    live = os.path.join(d, "live.zst")
    rec = subprocess.Popen([MEMREC, "-q", "-o", live, "--", prog("slow"), "600000", "exit", str(BURST)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.time() + 60
    while time.time() < end and (not os.path.exists(live) or os.path.getsize(live) < 200):
        time.sleep(0.1)
    t = Tui(["-c", "calls", "live.zst"], cwd=d, width=80, height=24)
    s = t.wait(lambda x: re.search(r" LIVE\s*$", title(x)) is not None, "LIVE in the title")
    check(s is not None, "live: the title says LIVE while the file grows")
    check("NO END RECORD" not in title(s), "live: not NO END RECORD while the file grows")

    # Keys while a reload runs: each answered before the reload ends.
    during, latencies, view = 0, [], 0
    end = time.time() + 240
    while time.time() < end and during < 5:
        if "reloading" not in title(t.screen()):
            time.sleep(0.02)
            continue
        view = 1 - view
        sent = time.time()
        t.keys(str(view + 1))
        want = "|  %s  |" % VIEWS[view]
        answered = None
        while time.time() < sent + 30:
            x = t.screen()
            if want in title(x):
                answered = x
                break
        if answered is None:
            check(False, "live: key %d answered" % (view + 1))
            break
        latencies.append(time.time() - sent)
        if "reloading" in title(answered):
            during += 1
    check(during >= 5, "live: 5 keys answered while a reload was running (got %d)" % during)
    print("key to screen during reloads: %s ms" % ", ".join("%.0f" % (x * 1000) for x in latencies))
    if latencies:
        check_timing(sorted(latencies)[len(latencies) // 2] < 0.1,
                     "live: keys answered in under 100 ms during reloads (median %.0f ms)" %
                     (sorted(latencies)[len(latencies) // 2] * 1000))

    # q during a reload: memtui ends at once, not when the reload does.
    t2 = Tui(["live.zst"], cwd=d, width=80, height=24)
    quit_s = None
    end = time.time() + 240
    while time.time() < end:
        if "reloading" in title(t2.screen()):
            sent = time.time()
            t2.keys("q")
            code, _ = t2.finished()
            quit_s = time.time() - sent
            check_eq(code, 0, "live: q during a reload: exit status")
            break
        time.sleep(0.02)
    check(quit_s is not None, "live: q sent while a reload was running")
    if quit_s is not None:
        print("q to exit during a reload: %.0f ms" % (quit_s * 1000))
        check_timing(quit_s < 0.5, "live: q during a reload ends memtui in under 500 ms (%.0f ms)" % (quit_s * 1000))
    t2.close()

    # The end: memrec finishes the file, memtui shows memprint's figures.
    rec.send_signal(signal.SIGINT)
    check_eq(rec.wait(timeout=120) != 0, True, "live: memrec ends with the program's signal status")
    rec = None
    t.keys("1")
    rc, printed, _ = report_text(live)
    m = re.search(r"^calls to allocation functions: (\d+) ", printed, re.M)
    calls = m.group(0) if m else "(memprint printed no calls)"
    s = t.wait(lambda x: calls in x and "LIVE" not in title(x) and "NO END" not in title(x)
               and "reloading" not in title(x), "the final figures", timeout=120)
    check(s is not None, "live: after the end, memtui shows memprint's '%s' and no LIVE" % calls)
    for line in printed.split("\n\n")[0].split("\n")[:6]:
        check(line[:70] in (s or ""), "live: summary line as memprint prints it: %s" % line[:70])
    t.keys("q")
    restored(t, "live, q", 0)
    t.close()
finally:
    if rec is not None:
        rec.send_signal(signal.SIGINT)
        rec.wait(timeout=120)
    tmux("kill-server", check_rc=False)
done()
