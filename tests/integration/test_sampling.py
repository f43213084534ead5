# SPDX-License-Identifier: MIT
"""memrec --sample-rate: every call and byte is still counted exactly, and
the sampled stacks give per-site estimates within 10% of the truth
(tests/progs/sampled.c, whose figures are known by construction). The seed
is fixed, so the run is the same every time."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

d = tmpdir()
out = os.path.join(d, "sampled.zst")
env = dict(os.environ, MEMREC_SAMPLE_SEED="42")
r = record([prog("sampled")], out, extra=("--sample-rate", "16K"), env=env)
check_eq(r.returncode, 0, "memrec --sample-rate exit status")
j = report_json(out, top=50)
check(j["sampled"] is True and j["sample_rate"] == 16384, "the file says it is sampled, one per 16 KiB")
check_eq(j["allocations"], 401000, "allocations: exact")
check_eq(j["allocated_bytes"], 410000000, "allocated bytes: exact")
check(j["temporary"] is None, "temporaries are not claimed when sampling")


def site_bytes(name, section="most_allocated", field="allocated_bytes"):
    return sum(e[field] for e in j["sections"][section] if e["frames"] and e["frames"][0]["function"] == name)


for name, truth in (("site_a", 300000000), ("site_b", 100000000), ("site_c", 10000000)):
    est = site_bytes(name)
    check(abs(est - truth) <= truth * 0.10, "%s: estimated %d bytes allocated, truth %d (within 10%%)" % (name, est, truth))
est = site_bytes("site_c", "most_leaked", "leaked_bytes")
check(abs(est - 10000000) <= 1000000, "site_c: estimated %d bytes leaked, truth 10000000 (within 10%%)" % est)
check(abs(j["leaked_bytes"] - 10000000) <= 1000000, "total leaked estimate %d within 10%% of 10000000" % j["leaked_bytes"])

# The hooks count most allocations inline and hand only the sampled ones to
# the recorder: every form (calloc, realloc chains, aligned forms, C++ new
# and delete, threads) still counts every call and byte, as a full
# recording of the same program does.
for name in ("chain", "aligned", "cxx", "threads"):
    full = os.path.join(d, name + "-full.zst")
    part = os.path.join(d, name + "-sampled.zst")
    check_eq(record([prog(name)], full).returncode, 0, "%s: full recording exit status" % name)
    check_eq(record([prog(name)], part, extra=("--sample-rate", "4K"), env=env).returncode, 0,
             "%s: sampled recording exit status" % name)
    jf, jp = report_json(full), report_json(part)
    check_eq((jp["allocations"], jp["allocated_bytes"]), (jf["allocations"], jf["allocated_bytes"]),
             "%s: sampled calls and bytes equal the full recording's" % name)

# A program the recorded script merely runs inherits MEMREC_SAMPLE_RATE but
# is not recorded: it has no sampled-block filter, and its frees must not
# look for one.
script = os.path.join(d, "run.sh")
with open(script, "w") as f:
    f.write("#!/bin/sh\n\"%s\" || exit 9\n" % prog("chain"))
os.chmod(script, 0o755)
r = record([script], os.path.join(d, "script.zst"), extra=("--sample-rate", "16K"), env=env)
check_eq(r.returncode, 0, "a program run by the sampled script: exit status")

code, text, err = report_text(out)
check(code == 0 and "sampled: one stack per 16384 bytes" in text and "~" in text, "text report says it is sampled")
check("temporary allocations: not measured when sampling" in text, "text report says temporaries are not measured")
done()
