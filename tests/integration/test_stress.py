# SPDX-License-Identifier: MIT
"""Threads under the recorder (tests/progs/stress.c): cross-thread frees,
reallocs, threads ending and starting while others allocate. Every free
must find its allocation (the file's order puts it after), nothing of the
program may look leaked, and the exact number of its allocations must be
there; three runs, since ordering bugs show up only sometimes. Also run
with MEMREC_TSC_ORDER=1 (TSC ordering, where the kernel trusts the TSC)."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

d = tmpdir()
runs = [("", {}), ("", {}), ("", {}), (" (TSC order)", {"MEMREC_TSC_ORDER": "1"})]
for n, (label, extra_env) in enumerate(runs):
    out = os.path.join(d, "stress%d.zst" % n)
    env = dict(os.environ, **extra_env)
    r = record([prog("stress")], out, env=env)
    what = "stress run %d%s" % (n + 1, label)
    check_eq(r.returncode, 0, "%s: exit status" % what)
    j = report_json(out, top=1000)
    check(j["complete"], "%s: complete" % what)
    check_eq(j["unmatched_frees"], 0, "%s: every free matched an allocation" % what)
    check_eq(j["lost_events"], 0, "%s: no event lost" % what)
    mine = [e for e in j["sections"]["most_calls"]
            if any((f["function"] or "") == "worker" for f in e["frames"])]
    calls = sum(e["calls"] for e in mine)
    # 480,000 mallocs and 60,000 reallocs, all from worker()
    check_eq(calls, 480000 + 60000, "%s: the program's calls, all threads" % what)
    leaked = sum(e["leaked_allocations"] for e in mine)
    check_eq(leaked, 0, "%s: none of the program's blocks look leaked" % what)
    check(j["threads"] >= 1 + 4 * 6, "%s: every thread seen (%d)" % (what, j["threads"]))
done()
