# SPDX-License-Identifier: MIT
"""memprint --folded on recorded real programs: for every cost type the
folded counts sum exactly to the summary's figure (the call tree's root
equals the summary), inlined frames are entries of their own, and, where
heaptrack is installed, heaptrack_print -F's totals differ from ours only
by the documented differences (docs/definitions.md)."""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

SUMMARY = SUMMARY_FIELD


def folded(path, cost, out):
    r = run([MEMPRINT, "--folded", out, "--cost", cost, path])
    if r.returncode != 0:
        raise RuntimeError("memprint --folded failed: " + r.stderr.decode())
    lines = {}
    with open(out) as f:
        for line in f:
            stack, count = line.rstrip("\n").rsplit(" ", 1)
            check(stack not in lines, "%s: one line per stack (%s)" % (out, stack))
            lines[stack] = int(count)
    return lines


d = tmpdir()
for name in ("chain", "aligned", "cxx", "inlined", "temporaries", "threads", "mapper", "atexit_free", "nothing"):
    path = os.path.join(d, name + ".zst")
    check_eq(record([prog(name)], path).returncode, 0, "%s: memrec exit status" % name)
    j = report_json(path)
    for cost, field in sorted(SUMMARY.items()):
        lines = folded(path, cost, os.path.join(d, "%s.%s.folded" % (name, cost)))
        check_eq(sum(lines.values()), j[field], "%s: folded %s sums to the summary's %s" % (name, cost, field))
        check(all(v > 0 for v in lines.values()), "%s: folded %s has no zero line" % (name, cost))

# The inlined make_block() is its own frame under each caller.
path = os.path.join(d, "inlined.zst")
calls = folded(path, "calls", os.path.join(d, "inlined.calls.folded"))
check_eq(calls.get("main;build_table;make_block"), 1, "inlined: the leak's stack, inlined frame last")
check_eq(calls.get("main;build_index;make_block"), 1, "inlined: the temporary's stack")
leaked = folded(path, "leaked", os.path.join(d, "inlined.leaked.folded"))
check_eq(leaked, {"main;build_table;make_block": 10001}, "inlined: leaked folded")

# The mapper's library maps 40 MiB under mapper_lib_map (tests/progs/EXPECTED.md).
mapped = folded(os.path.join(d, "mapper.zst"), "mapped", os.path.join(d, "mapper.mapped.folded"))
check_eq(mapped.get("main;mapper_lib_map"), 41943040, "mapper: mapper_lib_map's mapped bytes at the peak")

# Usage errors: a bad cost type, an unwritable output (no file left behind).
r = run([MEMPRINT, "--folded", os.path.join(d, "x.folded"), "--cost", "bogus", path])
check_eq(r.returncode, 2, "bad --cost: usage exit status")
check("invalid cost 'bogus'" in r.stderr.decode(), "bad --cost: message names it")
r = run([MEMPRINT, "--cost", "calls", path])
check_eq(r.returncode, 2, "--cost without --folded: usage exit status")
r = run([MEMPRINT, "--folded", os.path.join(d, "no", "such", "dir.folded"), path])
check_eq(r.returncode, 1, "unwritable --folded: exit status 1")
check(not os.path.exists(os.path.join(d, "no")), "unwritable --folded: nothing written")
r = run([MEMPRINT, "--folded", "-", "--cost", "leaked", path])
check_eq(r.stdout.decode(), "main;build_table;make_block 10001\n", "--folded -: to stdout")

# heaptrack_print's flame graph on the same program: same totals but for
# the documented differences (heaptrack's own emergency pool in a C program).
if shutil.which("heaptrack") and shutil.which("heaptrack_print"):
    out = os.path.join(d, "ht_inlined")
    r = run(["heaptrack", "-o", out, prog("inlined")])
    check_eq(r.returncode, 0, "heaptrack inlined: exit status")
    for cost, ours, delta in (("allocations", "calls", 1), ("peak", "peak", 72704), ("leaked", "leaked", 0)):
        fg = os.path.join(d, "ht_inlined.%s" % cost)
        r = run(["heaptrack_print", "--flamegraph-cost-type", cost, "-F", fg, out + ".zst"])
        check_eq(r.returncode, 0, "heaptrack_print -F %s" % cost)
        with open(fg) as f:
            ht = sum(int(line.rsplit(" ", 1)[1]) for line in f if line.strip())
        mine = sum(folded(path, ours, os.path.join(d, "inlined.%s.folded" % ours)).values())
        check_eq(ht - mine, delta, "inlined: heaptrack_print -F %s minus memprint --folded %s" % (cost, ours))
else:
    print("heaptrack is not installed: cross-check of the flame graph totals not run")

done()
