# SPDX-License-Identifier: MIT
"""The progress bar of memprint and memtui (util/progress.c), in tmux at
80x24: a recording big enough that reading it takes over a second shows one
line that fits the terminal and is erased before the output; none when
memprint's output goes to a file; memtui's bar before its screen."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

if not shutil.which("tmux"):
    skip("tmux is not installed (scripts/deps.sh installs it)")

SOCKET = "memrec-progress-%d" % os.getpid()


def tmux(*args):
    return subprocess.run(["tmux", "-L", SOCKET] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE).stdout.decode()


def run_in_tmux(name, command, timeout=120, until="END-OF-RUN"):
    """Runs `command` in an 80x24 pane; returns every distinct screen seen
    (captured every 20 ms) until one holds `until` (the shell's end mark by
    default), and the seconds that took."""
    r = subprocess.run(["tmux", "-L", SOCKET, "new-session", "-d", "-s", name, "-x", "80", "-y", "24",
                        "sh -c '%s; echo END-OF-RUN; sleep 30'" % command], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        check(False, "tmux new-session %s: %s" % (name, r.stderr.decode().strip()))
        return [], 0.0
    screens, start = [], time.time()
    while time.time() - start < timeout:
        s = tmux("capture-pane", "-p", "-t", name)
        if not screens or s != screens[-1]:
            screens.append(s)
        if until in s:
            break
        time.sleep(0.02)
    took = time.time() - start
    tmux("kill-session", "-t", name)
    check(screens and until in screens[-1], "%s: reached %r in tmux within %d s (last screen: %r)" %
          (name, until, timeout, screens[-1][-400:] if screens else None))
    return screens, took


d = tmpdir()
try:
    # busy's rounds are three calls each (malloc, realloc, free): some 20M
    # allocation calls make a file that --timeline reads for over a second.
    counter = os.path.join(d, "busy.count")
    out = os.path.join(d, "big.zst")
    m = subprocess.Popen([MEMREC, "-q", "-o", out, prog("busy"), "1", counter], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    check(wait_for(lambda: os.path.exists(counter) and os.path.getsize(counter) >= 64 and busy_rounds(counter) > 7000000,
                   120), "busy made 7M rounds")
    subprocess.run(["pkill", "-TERM", "-P", str(m.pid)])
    m.communicate(timeout=120)
    check_eq(m.returncode, 0, "memrec busy: exit status")

    # memprint to the terminal: the bar, then the report on clean lines.
    # MEMREC_PROGRESS_DELAY_MS=20 shows it on a read of a few tenths of a
    # second; the default second is checked by the run to a file below
    # (none) and by the second run here.
    screens, took = run_in_tmux("mp", "MEMREC_PROGRESS_DELAY_MS=20 %s --timeline %s" % (MEMPRINT, out))
    bars = [line for s in screens for line in s.splitlines() if "memprint: reading [" in line]
    print("note: memprint --timeline took %.2f s; %d screens showed the bar" % (took, len(set(bars))))
    check(bars, "memprint: a run of %.2f s with the bar after 20 ms shows it" % took)
    check(all(len(b.rstrip()) <= 79 for b in bars), "memprint: the bar fits 80 columns: %r" % bars[:1])
    check(all("%" in b and "of" in b for b in bars), "memprint: the bar says how far: %r" % bars[:1])
    last = screens[-1] if screens else ""
    check("reading [" not in last, "memprint: the bar is erased before the report")
    lines = last.splitlines()
    end = [i for i, line in enumerate(lines) if "END-OF-RUN" in line]
    check(end and end[0] > 0 and re.search(r"[\d.]+ s$", lines[end[0] - 1].rstrip())
          and "reading" not in lines[end[0] - 1],
          "memprint: the report's last line, whole, just above the shell's: %r" % lines[end[0] - 1:end[0]] if end else [])

    # The default delay: no bar on a read shorter than a second.
    screens, took = run_in_tmux("mpq", "%s %s" % (MEMPRINT, out))
    if took < 0.8:
        check(not any("reading [" in s for s in screens), "memprint: no bar on a read of %.2f s" % took)

    # memprint into a file: no bar on the terminal, none in the file.
    txt = os.path.join(d, "report.txt")
    screens, took = run_in_tmux("mpf", "%s --timeline %s > %s" % (MEMPRINT, out, txt))
    check(not any("reading [" in s for s in screens), "memprint > file: no bar (%.1f s)" % took)
    with open(txt, "rb") as f:
        body = f.read()
    check(b"\r" not in body and b"reading [" not in body, "memprint > file: the file holds the report only")

    # memtui: its bar before the screen (after 300 ms), within 80 columns.
    screens, took = run_in_tmux("tui", "%s %s" % (os.path.join(BUILD, "memtui"), out), timeout=60, until="Summary")
    check(screens and "Summary" in screens[-1], "memtui: its screen after the bar")
    bars = [line for s in screens for line in s.splitlines() if "memtui: reading [" in line]
    print("note: memtui showed %d bar screens before its own" % len(set(bars)))
    check(all(len(b.rstrip()) <= 79 for b in bars), "memtui: the bar fits 80 columns: %r" % bars[:1])
finally:
    tmux("kill-server")
done()
