# SPDX-License-Identifier: MIT
"""RTLD_DEEPBIND (tests/progs/deepbind.c and libdeepbind.cpp): the library
opened with RTLD_NOW|RTLD_DEEPBIND|RTLD_LOCAL keeps binding its own
which_impl (the program checks it and exits 0), its allocations are
recorded with its function in the stacks, and blocks crossing between the
program and the library match. The library is named three ways: by path,
by bare name found through the program's RUNPATH $ORIGIN, and as
"$ORIGIN/libdeepbind.so": glibc resolves both of the latter from the caller
of dlopen, which must stay the program."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

exe = prog("deepbind")
lib = os.path.join(PROGS, "libdeepbind.so")
if not (os.path.exists(exe) and os.path.exists(lib)):
    skip("tests/progs/deepbind is built only with a C++ compiler")

# The program's and the library's own calls (EXPECTED.md): ld.so allocates
# inside dlopen too, so the figures below are those of the entries whose
# innermost frame is in the program or the library.
CALLS, TEMPORARY, ALLOCATED, LEAKED, LEAKED_BLOCKS, PEAK = 8, 3, 108010, 32002, 2, 48003
SIZES = [10001, 11001, 12003, 13001, 14001, 15001, 16001, 17001]
LIB_SIZES = [11001, 12003, 13001, 14001, 15001, 16001]

d = tmpdir()
for how, name in (("path", lib), ("bare name", "libdeepbind.so"), ("$ORIGIN", "$ORIGIN/libdeepbind.so")):
    # Without memrec first: the program's own check passes.
    check_eq(run([exe, name]).returncode, 0, "%s: exit status without memrec" % how)
    out = os.path.join(d, "deepbind-%d.zst" % len(os.listdir(d)))
    r = record([exe, name], out)
    check_eq(r.returncode, 0, "%s: exit status under memrec (the library called its own which_impl)" % how)
    j = report_json(out, top=200)
    check(j["complete"], "%s: recording complete" % how)
    check_eq(j["unmatched_frees"], 0, "%s: no unmatched frees" % how)

    def own(e):
        m = (e["frames"][0]["module"] or "") if e["frames"] else ""
        return m.endswith("/deepbind") or m.endswith("/libdeepbind.so")

    mine = [e for e in j["sections"]["most_calls"] if own(e)]
    check_eq(sum(e["calls"] for e in mine), CALLS, "%s: calls" % how)
    check_eq(sorted(e["allocated_bytes"] for e in mine), SIZES, "%s: one entry per allocation, sizes" % how)
    check_eq(sum(e["temporary"] for e in mine), TEMPORARY, "%s: temporary" % how)
    check_eq(sum(e["allocated_bytes"] for e in mine), ALLOCATED, "%s: allocated bytes" % how)
    check_eq(sum(e["leaked_bytes"] for e in mine), LEAKED, "%s: leaked bytes" % how)
    check_eq(sum(e["leaked_allocations"] for e in mine), LEAKED_BLOCKS, "%s: leaked blocks" % how)
    check_eq(sum(e["peak_bytes"] for e in mine), PEAK, "%s: bytes live at the peak" % how)
    in_lib = sorted(e["allocated_bytes"] for e in mine if has_frame(e, "deepbind_work", "libdeepbind.cpp") and
                    (e["frames"][0]["module"] or "").endswith("/libdeepbind.so") and has_frame(e, "main", "deepbind.c"))
    check_eq(in_lib, LIB_SIZES, "%s: the library's allocations name deepbind_work in libdeepbind.so, called from main" % how)
    ours = [f["function"] for e in j["sections"]["most_calls"] for f in e["frames"]
            if (f["module"] or "").endswith("/libmemrec_preload.so")]
    check_eq(ours, [], "%s: no frame of the recorder in any stack (deepbind_dlopen is ours)" % how)
    leak_line = marker_line("tests/progs/libdeepbind.cpp", "LINE_LIB_LEAK")
    leak = [e for e in j["sections"]["most_leaked"] if e["leaked_bytes"] == 15001]
    check(leak and has_frame(leak[0], "deepbind_work", "libdeepbind.cpp", leak_line),
          "%s: the new'ed leak is at libdeepbind.cpp:%d" % (how, leak_line))
done()
