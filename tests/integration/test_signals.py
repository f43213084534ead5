# SPDX-License-Identifier: MIT
"""Signals and threads under the recorder. sigalloc: a signal handler that
allocates while the interrupted code is inside malloc, free or the recorder
must not deadlock; the interrupted code's calls and the handler's are all
recorded, exactly as many as the program counted (those interrupting the
recorder are queued and sent by the thread afterwards). forkmt: fork() while 4 threads allocate must deadlock
neither parent nor child; the parent's figures are exact and no child is
recorded. (Threads ending while others allocate: test_stress.)"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403


def calls_where(j, function, without=None):
    """Calls of the most_calls entries whose stack names `function` (and not
    `without`)."""
    n = 0
    for e in j["sections"]["most_calls"]:
        if has_frame(e, function) and not (without and has_frame(e, without)):
            n += e["calls"]
    return n


def record_timed(argv, out, what):
    try:
        return run([MEMREC, "-q", "-o", out, "--"] + argv, timeout=60)
    except subprocess.TimeoutExpired:
        check(False, "%s: ended within 60 s (a deadlock?)" % what)
        return None


d = tmpdir()
for n in range(2):
    what = "sigalloc run %d" % (n + 1)
    out = os.path.join(d, "sigalloc%d.zst" % n)
    r = record_timed([prog("sigalloc")], out, what)
    if r is None:
        continue
    check_eq(r.returncode, 0, "%s: exit status" % what)
    m = re.fullmatch(r"handler (\d+)\n", r.stdout.decode())
    if not check(m is not None, "%s: the program says how often its handler ran: %r" % (what, r.stdout)):
        continue
    handled = int(m.group(1))
    j = report_json(out, top=10000)
    check(j["complete"], "%s: complete" % what)
    check_eq(j["unmatched_frees"], 0, "%s: every free matched" % what)
    check_eq(j["leaked_bytes"], 0, "%s: nothing leaked" % what)
    loop = calls_where(j, "main_loop", without="on_alarm")
    check_eq(loop, 200000, "%s: every call of the interrupted loop" % what)
    in_handler = calls_where(j, "on_alarm")
    check_eq(in_handler, handled, "%s: every call of the handler recorded, as many as the program counted" % what)
    check_eq(j["allocations"], 200000 + handled + 1, "%s: loop + handler + warm-up, nothing else" % what)
    check_eq(r.stderr.decode(), "", "%s: nothing on stderr (no call lost)" % what)

# Sampling: the handler's queued calls are counted and sampled when sent;
# a queued block its handler frees at once must not be taken for an
# unsampled one (unmatched frees, a block left live), nor may a block the
# handler gets back be added to the sampled set before the queue's free of
# its address is sent (one run in six failed so): six runs.
for n in range(6):
    what = "sigalloc --sample-rate 64, run %d" % (n + 1)
    out = os.path.join(d, "sigalloc-sampled%d.zst" % n)
    try:
        r = run([MEMREC, "-q", "--sample-rate", "64", "-o", out, "--", prog("sigalloc")], timeout=60)
    except subprocess.TimeoutExpired:
        check(False, "%s: ended within 60 s (a deadlock?)" % what)
        continue
    check_eq(r.returncode, 0, "%s: exit status" % what)
    m = re.fullmatch(r"handler (\d+)\n", r.stdout.decode())
    if not check(m is not None, "%s: the program says how often its handler ran: %r" % (what, r.stdout)):
        continue
    j = report_json(out, top=10)
    check_eq(j["allocations"], 200000 + int(m.group(1)) + 1, "%s: every call counted" % what)
    check_eq((j["unmatched_frees"], j["leaked_bytes"]), (0, 0), "%s: no unmatched free, nothing leaked" % what)

for n in range(3):
    what = "forkmt run %d" % (n + 1)
    out = os.path.join(d, "forkmt%d.zst" % n)
    r = record_timed([prog("forkmt")], out, what)
    if r is None:
        continue
    check_eq(r.returncode, 0, "%s: exit status (0: all 20 children exited with 0)" % what)
    j = report_json(out, top=1000)
    check(j["complete"], "%s: complete" % what)
    check_eq(j["unmatched_frees"], 0, "%s: every free matched" % what)
    check_eq(calls_where(j, "worker"), 200000, "%s: the workers' calls" % what)
    check_eq(calls_where(j, "keep_one"), 20, "%s: one block per fork in the parent" % what)
    check_eq(calls_where(j, "child_work"), 0, "%s: the children are not recorded" % what)
    dtv = sum(e["calls"] for e in j["sections"]["most_calls"]
              if any("pthread_create" in (f["function"] or "") for f in e["frames"]))
    check_eq(dtv, 4, "%s: one thread-vector calloc per pthread_create" % what)
    check_eq(j["allocations"], 200000 + 20 + dtv, "%s: nothing else" % what)
    leaked = [e for e in j["sections"]["most_leaked"] if has_frame(e, "keep_one")]
    check_eq(sum(e["leaked_bytes"] for e in leaked), 20 * 3001, "%s: the parent's kept blocks leak" % what)
done()
