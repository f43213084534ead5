# SPDX-License-Identifier: MIT
"""Abrupt ends (tests/progs/crasher.c): a program that dies of SIGSEGV,
of abort() (from its own code, and from inside realloc while the recorder
holds its buffer), of SIGKILL, or ends with _exit, or whose own SIGSEGV
handler ends it. memrec exits as the program did; memprint reads the file
without error, says how the process ended, and every event up to the end
is there, the 3 blocks allocated just before it included (no flush period
of the recorder passes between them and the end, except for mode kill), and
those of another thread, still in its buffer."""
import os
import resource
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

# mode: (memrec exit status, end, exit value)
MODES = {
    "segv": (128 + signal.SIGSEGV, "signaled", signal.SIGSEGV),
    "abort": (128 + signal.SIGABRT, "signaled", signal.SIGABRT),
    "realloc": (128 + signal.SIGABRT, "signaled", signal.SIGABRT),
    "kill": (128 + signal.SIGKILL, "signaled", signal.SIGKILL),
    # Killed right after site_last: memrec reads the threads' buffers.
    "killnow": (128 + signal.SIGKILL, "signaled", signal.SIGKILL),
    "_exit": (3, "exited", 3),
    "handled": (5, "exited", 5),
}
# allocations, temporary, peak, leaked bytes, leaked blocks, allocated bytes,
# without the thread vector pthread_create allocates (found by its stack)
FIGURES = (1510, 0, 160000, 153900, 1010, 213900)
FIELDS = ("allocations", "temporary", "peak_heap_bytes", "leaked_bytes", "leaked_allocations", "allocated_bytes")


def no_core():
    # The crashes are meant; their core dumps are not wanted.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


d = tmpdir()
for mode, (status, end, value) in MODES.items():
    what = "crasher %s" % mode
    out = os.path.join(d, "crash-%s.zst" % mode)
    try:
        r = run([MEMREC, "-q", "-o", out, "--", prog("crasher"), mode], timeout=60, cwd=d, preexec_fn=no_core)
    except subprocess.TimeoutExpired:
        check(False, "%s: memrec ended within 60 s (a deadlock?)" % what)
        continue
    check_eq(r.returncode, status, "%s: memrec exit status" % what)
    code, text, err = report_text(out)
    check_eq(code, 0, "%s: memprint exit status" % what)
    lines = [l for l in err.splitlines() if l]
    if end == "signaled":
        says = "did not end normally: killed by signal %d" % value
        check(any(says in l for l in lines), "%s: memprint warns %r: %r" % (what, says, lines))
        check("killed by signal %d (" % value in text and "the process did not end normally" in text,
              "%s: the report says how the process ended" % what)
        check(all(l.startswith("memprint: warning: ") for l in lines), "%s: only warnings on stderr" % what)
    else:
        check_eq(lines, [], "%s: memprint says nothing on stderr" % what)
    j = report_json(out, top=100)
    dtv = [e for e in j["sections"]["most_calls"]
           if any("pthread_create" in (f["function"] or "") for f in e["frames"])]
    check_eq(sum(e["calls"] for e in dtv), 1, "%s: one thread-vector calloc in pthread_create" % what)
    dtv_bytes = sum(e["allocated_bytes"] for e in dtv)
    less = {"allocations": 1, "leaked_allocations": 1, "leaked_bytes": dtv_bytes, "allocated_bytes": dtv_bytes}
    for field, exp in zip(FIELDS, FIGURES):
        check_eq(j[field] - less.get(field, 0), exp, "%s: %s" % (what, field))
    check_eq((j["end"], j["exit_value"]), (end, value), "%s: how the process ended" % what)
    check(j["complete"], "%s: recording complete" % what)
    check_eq(j["unmatched_frees"], 0, "%s: every free matched" % what)
    last = [e for e in j["sections"]["most_leaked"] if has_frame(e, "site_last")]
    check_eq(sum(e["leaked_bytes"] for e in last), 9000, "%s: the 3 blocks made just before the end" % what)
    other = [e for e in j["sections"]["most_leaked"] if has_frame(e, "site_thread")]
    check_eq(sum(e["leaked_bytes"] for e in other), 4900, "%s: the other thread's blocks" % what)

# Sampling: the exact call counts travel with the events (COUNTS), and the
# crash handler sends the threads' latest ones too.
what = "crasher segv, sampled"
out = os.path.join(d, "crash-sampled.zst")
try:
    r = run([MEMREC, "-q", "-s", "4096", "-o", out, "--", prog("crasher"), "segv"], timeout=60, cwd=d,
            preexec_fn=no_core)
    check_eq(r.returncode, 128 + signal.SIGSEGV, "%s: memrec exit status" % what)
    j = report_json(out)
    check_eq(j["allocations"], FIGURES[0] + 1, "%s: every allocation counted, pthread_create's included" % what)
except subprocess.TimeoutExpired:
    check(False, "%s: memrec ended within 60 s (a deadlock?)" % what)
done()
