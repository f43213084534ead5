# SPDX-License-Identifier: MIT
"""memtui at 80x24 in tmux, on what issue 22 found (items 5, 7 and 8 and
the cuts of item 3): each check here failed before its fix. The figures
are memprint's on the same file, or known by construction
(tests/progs/phases.c, mapper.c, deep.c)."""
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

if not shutil.which("tmux"):
    skip("tmux is not installed (scripts/deps.sh installs it)")
if not os.path.exists(os.path.join(BUILD, "memtui")):
    skip("memtui is not built")

from tmuxtui import *  # noqa: E402,F403

HOSTILE = os.path.join(SRC, "tests", "data", "hostile")


def title(s):
    return (s or "").split("\n")[0]


def costs_offered(t):
    """The costs `c` goes round, from the title, starting at the current one."""
    seen = []
    for _ in range(9):
        s = t.wait(lambda x: re.search(r"cost: (\w+)", title(x)) is not None, "a cost in the title")
        c = re.search(r"cost: (\w+)", title(s)).group(1)
        if c in seen:
            break
        seen.append(c)
        t.keys("c")
        t.wait(lambda x, c=c: "cost: %s " % c not in title(x), "the cost after %s" % c)
    return seen


def rchar(pid):
    with open("/proc/%d/io" % pid) as f:
        for line in f:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    return None


d = tmpdir()
tmux("new-session", "-d", "-s", "keeper", "sleep 3600")
try:
    phases = os.path.join(d, "phases.zst")
    check_eq(record([prog("phases")], phases).returncode, 0, "phases: memrec exit status")
    mapper = os.path.join(d, "mapper.zst")
    check_eq(record([prog("mapper")], mapper).returncode, 0, "mapper: memrec exit status")

    # ---- item 8: a corrupt file says so, as memprint does ----
    rc, _, err = report_text(os.path.join(HOSTILE, "packed-corrupt.mrec"))
    m = re.search(r"is corrupt data at byte (\d+) of its data", err)
    check(m is not None, "corrupt: memprint's warning: %r" % err.strip())
    t = Tui(["packed-corrupt.mrec"], cwd=HOSTILE, width=80, height=24)
    want = "warning: 'packed-corrupt.mrec' is corrupt data at byte %s of its data" % (m.group(1) if m else "?")
    s = t.wait_text(want, timeout=30)
    check(s is not None, "corrupt: memtui shows memprint's warning: %s" % want)
    t.keys("q")
    t.finished()
    t.close()

    # ---- item 8: the mapped cost only where something was mapped ----
    t = Tui(["-c", "calls", "phases.zst"], cwd=d, width=80, height=24)
    seen = costs_offered(t)
    check_eq(seen, ["calls", "temporary", "peak", "leaked", "allocated"], "phases (nothing mapped): costs offered")
    t.keys("q")
    t.finished()
    t.close()
    t = Tui(["-c", "calls", "mapper.zst"], cwd=d, width=80, height=24)
    seen = costs_offered(t)
    check_eq(seen, ["calls", "temporary", "peak", "leaked", "allocated", "mapped"], "mapper: costs offered")
    t.keys("q")
    t.finished()
    t.close()

    # ---- item 8: the detail overlay reads the source once, not at every draw ----
    t = Tui(["phases.zst"], cwd=d, width=80, height=24)
    t.wait_text("Summary")
    t.keys("4", "d")
    s = t.wait_text(re.compile(r"^>\s*\d+\s+\S", re.M))
    check(s is not None, "detail: the source line shown")
    pid = t.memtui_pid()
    before = rchar(pid)
    # Four redraws at least (the screen draws every 250 ms when idle).
    time.sleep(2)
    after = rchar(pid)
    size = os.path.getsize(os.path.join(SRC, "tests", "progs", "phases.c"))
    check(before is not None and after - before < size,
          "detail: %s bytes read in 2 s of idle with the overlay open (phases.c is %d bytes)" %
          (None if before is None else after - before, size))
    t.keys("q")
    t.finished()
    t.close()
finally:
    tmux("kill-server", check_rc=False)
done()
