# SPDX-License-Identifier: MIT
"""Pools reported through include/memrec.h (tests/progs/pool.c,
pool_cxx.cpp): exact figures under memrec, in a PIE and a non-PIE build,
with and without sampling; the programs run natively and link nothing of
memrec; the recorder exports the table the header looks for."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

d = tmpdir()
FIELDS = ("allocations", "temporary", "peak_heap_bytes", "leaked_bytes", "leaked_allocations", "allocated_bytes")
# See the step list at the top of tests/progs/pool.c.
TOTALS = (9, 2, 107008, 104010, 4, 112021)
# Per site, summed over its stacks: calls, temporary, allocated, leaked, live at the peak.
SITES = {"alloc_a": (4, 1, 4010, 2005, 1001), "alloc_b": (4, 1, 8010, 2004, 6006), "main": (1, 0, 100001, 100001, 100001)}


def site_of(entry):
    names = [f["function"] for f in entry["frames"]]
    for s in ("alloc_a", "alloc_b"):
        if s in names:
            return s
    return names[0] if names else None


def sites(j):
    got = {}
    for e in j["sections"]["most_calls"]:
        s = site_of(e)
        c = got.setdefault(s, [0, 0, 0, 0, 0])
        for i, k in enumerate(("calls", "temporary", "allocated_bytes", "leaked_bytes", "peak_bytes")):
            c[i] += e[k]
    return {k: tuple(v) for k, v in got.items()}


for name in ("pool", "pool_nopie"):
    r = run([prog(name)])
    check_eq(r.returncode, 0, "%s: runs natively (no memrec), exit status" % name)
    out = os.path.join(d, name + ".zst")
    check_eq(record([prog(name)], out).returncode, 0, "%s: memrec exit status" % name)
    j = report_json(out, top=50)
    for field, value in zip(FIELDS, TOTALS):
        check_eq(j[field], value, "%s: %s" % (name, field))
    check_eq(j["frees"], 5, "%s: frees (a2, a3, and the reset's three)" % name)
    check_eq(j["unmatched_frees"], 0, "%s: no unmatched frees (ignored pool frees are not counted)" % name)
    got = sites(j)
    for s, exp in sorted(SITES.items()):
        check_eq(got.get(s), exp, "%s: site %s (calls, temporary, allocated, leaked, at peak)" % (name, s))
    check_eq(sorted(got), sorted(SITES), "%s: no other sites" % name)
    leaks = j["sections"]["most_leaked"]
    check(any(e["leaked_bytes"] == 2004 and has_frame(e, "alloc_b", "pool.c") for e in leaks),
          "%s: b4 (2004 bytes, same address as the malloc'ed chunk) leaked at alloc_b" % name)

# The non-PIE build is the case a weak symbol would miss.
r = run(["readelf", "-h", prog("pool_nopie")])
check(r.returncode == 0 and b"EXEC (Executable file)" in r.stdout, "pool_nopie: is a non-PIE executable")

# No link to memrec: no NEEDED entry, no memrec symbol imported.
for name in ("pool", "pool_nopie"):
    r = run(["readelf", "-d", prog(name)])
    needed = [l for l in r.stdout.decode().splitlines() if "(NEEDED)" in l]
    check(r.returncode == 0 and needed and not any("memrec" in l for l in needed),
          "%s: NEEDED entries name no memrec library (%s)" % (name, ", ".join(l.split()[-1] for l in needed)))
    r = run(["nm", "-D", "--undefined-only", prog(name)])
    check(r.returncode == 0 and b"memrec" not in r.stdout, "%s: imports no memrec symbol" % name)

r = run(["nm", "-D", "--defined-only", os.path.join(BUILD, "libmemrec_preload.so")])
check(r.returncode == 0 and b" memrec_pool_api_v1\n" in r.stdout, "libmemrec_preload.so exports memrec_pool_api_v1")

# Sampling: pool blocks go through the same sampling as malloc. At one
# sample per byte on average, a block of 1001 bytes or more is sampled
# with probability 1 - exp(-1001), which is 1.0 in a double, and weighs 1:
# the figures are exact again; temporaries are not measured.
out = os.path.join(d, "pool-sampled.zst")
check_eq(record([prog("pool")], out, extra=["--sample-rate", "1"]).returncode, 0, "sampled: memrec exit status")
j = report_json(out, top=50)
check_eq(j["sampled"], True, "sampled: recording is sampled")
for field, value in zip(FIELDS, TOTALS):
    if field != "temporary":
        check_eq(j[field], value, "sampled: %s" % field)
check_eq(j["frees"], 5, "sampled: frees")
check_eq(j["unmatched_frees"], 0, "sampled: no unmatched frees")

# The header compiled as C++.
cxx = prog("pool_cxx")
if os.path.exists(cxx):
    check_eq(run([cxx]).returncode, 0, "pool_cxx: runs natively, exit status")
    out = os.path.join(d, "pool_cxx.zst")
    check_eq(record([cxx], out).returncode, 0, "pool_cxx: memrec exit status")
    j = report_json(out, top=50)
    mine = [e for e in j["sections"]["most_calls"] if has_frame(e, "(anonymous namespace)::use(unsigned long)")]
    check_eq([(e["calls"], e["allocated_bytes"], e["leaked_bytes"], e["peak_bytes"], e["temporary"]) for e in mine],
             [(3, 9006, 0, 9006, 1)], "pool_cxx: use(): 3 blocks, 9006 bytes, all freed by the reset (newest first: 1 temporary)")
    # libstdc++'s emergency pool (72704 bytes, freed at exit) is there only
    # when the program links libstdc++.
    other = j["allocated_bytes"] - 9006
    check(other in (0, 72704), "pool_cxx: nothing else allocated but maybe libstdc++'s pool (%d)" % other)
    check_eq(j["leaked_bytes"], 0, "pool_cxx: nothing leaked")
else:
    print("no C++ compiler: pool_cxx not built")

done()
