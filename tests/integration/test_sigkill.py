# SPDX-License-Identifier: MIT
"""A process killed outright loses nothing (docs/capture.md, "Killed
outright"): memrec reads what the threads' buffers held from the area they
share with it. tests/progs/crasher.c in mode wait makes its known
allocations on two threads and says "ready PID"; the test sends SIGKILL at
once, with the recorder's flush period at its longest (100 ms), so that no
flush round passes between the last allocation and the kill. Every event
before the kill is in the file, exactly once. The same with sampling: the
threads' exact call and byte counts come from the area too."""
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

# As in test_crash.py: allocations, temporary, peak, leaked bytes, leaked
# blocks, allocated bytes, without pthread_create's thread vector.
FIGURES = (1510, 0, 160000, 153900, 1010, 213900)
FIELDS = ("allocations", "temporary", "peak_heap_bytes", "leaked_bytes", "leaked_allocations", "allocated_bytes")
SLOW_FLUSH = dict(os.environ, MEMREC_FLUSH_MS="100")


def start_and_kill(cmd, what):
    """Run cmd (memrec ... crasher wait), SIGKILL the program as soon as
    it says ready; returns memrec's exit status, or None on a timeout."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=SLOW_FLUSH, cwd=d)
    line = p.stdout.readline().decode()
    check(line.startswith("ready "), "%s: the program says it is ready: %r" % (what, line))
    if line.startswith("ready "):
        os.kill(int(line.split()[1]), signal.SIGKILL)
    try:
        p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        check(False, "%s: memrec ended within 60 s" % what)
        return None
    return p.returncode


def check_figures(out, what, sampled=False):
    j = report_json(out, top=100)
    dtv = [e for e in j["sections"]["most_calls"]
           if any("pthread_create" in (f["function"] or "") for f in e["frames"])]
    if sampled:
        # Only the counts are exact: every call and byte, pthread_create's included.
        check_eq(j["allocations"], FIGURES[0] + 1, "%s: every allocation counted" % what)
        check_eq((j["end"], j["exit_value"]), ("signaled", signal.SIGKILL), "%s: how the process ended" % what)
        return
    check_eq(sum(e["calls"] for e in dtv), 1, "%s: one thread-vector calloc in pthread_create" % what)
    dtv_bytes = sum(e["allocated_bytes"] for e in dtv)
    less = {"allocations": 1, "leaked_allocations": 1, "leaked_bytes": dtv_bytes, "allocated_bytes": dtv_bytes}
    for field, exp in zip(FIELDS, FIGURES):
        check_eq(j[field] - less.get(field, 0), exp, "%s: %s" % (what, field))
    check_eq((j["end"], j["exit_value"]), ("signaled", signal.SIGKILL), "%s: how the process ended" % what)
    check_eq(j["unmatched_frees"], 0, "%s: every free matched (nothing twice)" % what)
    last = [e for e in j["sections"]["most_leaked"] if has_frame(e, "site_last")]
    check_eq(sum(e["leaked_bytes"] for e in last), 9000, "%s: the 3 blocks made just before the kill" % what)
    other = [e for e in j["sections"]["most_leaked"] if has_frame(e, "site_thread")]
    check_eq(sum(e["leaked_bytes"] for e in other), 4900, "%s: the other thread's blocks" % what)


d = tmpdir()

what = "crasher wait, killed from outside"
out = os.path.join(d, "killed.zst")
rc = start_and_kill([MEMREC, "-q", "-o", out, "--", prog("crasher"), "wait"], what)
if rc is not None:
    check_eq(rc, 128 + signal.SIGKILL, "%s: memrec exit status" % what)
    check_figures(out, what)

what = "crasher wait, sampled, killed from outside"
out = os.path.join(d, "killed-sampled.zst")
rc = start_and_kill([MEMREC, "-q", "-s", "4096", "-o", out, "--", prog("crasher"), "wait"], what)
if rc is not None:
    check_eq(rc, 128 + signal.SIGKILL, "%s: memrec exit status" % what)
    check_figures(out, what, sampled=True)

done()
