# SPDX-License-Identifier: MIT
"""The fast stack walker's claim, checked on every run: with
MEMREC_CHECK_UNWIND=1 the recorder walks each stack twice, with its own
walker and with libunwind, and counts the walks that differ. Over the test
programs (plain C, C++, threads, deep recursion, inlining, dlopen, signals,
a threaded stress run) no walk may differ, and each program must have had
walks checked (a run that checked nothing would prove nothing)."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import PROGS, check, check_eq, done, prog, record, tmpdir  # noqa: E402

PROGRAMS = [
    ("chain", []),
    ("aligned", []),
    ("cxx", []),
    ("threads", []),
    ("deep", []),
    ("inlined", []),
    ("dlopener", [os.path.join(PROGS, "libplugin.so")]),
    ("sigalloc", []),
    ("stress", []),
]

LINE = re.compile(r"unwind check \(checked/differing\): (\d+)/(\d+)")


def main():
    d = tmpdir()
    env = dict(os.environ, MEMREC_CHECK_UNWIND="1")
    for name, args in PROGRAMS:
        out = os.path.join(d, name + ".zst")
        r = record([prog(name)] + args, out, env=env)
        check_eq(r.returncode, 0, "%s: exit status under MEMREC_CHECK_UNWIND=1" % name)
        found = LINE.findall(r.stderr.decode(errors="replace"))
        if not check(len(found) >= 1, "%s: the recorder reported its unwind check" % name):
            continue
        checked = sum(int(c) for c, _ in found)
        differing = sum(int(x) for _, x in found)
        check(checked > 0, "%s: %d stacks checked" % (name, checked))
        check_eq(differing, 0, "%s: stacks where the fast walk differs from libunwind" % name)
    done()


if __name__ == "__main__":
    main()
