# SPDX-License-Identifier: MIT
"""memprint's CI gate and leak suppressions on recorded real programs
(tests/progs/gate_*.c, whose figures are derived in their header comments):
--check exit codes for passing, failing, malformed and unknown conditions;
every numeric JSON figure is a figure --check reads, with the same value;
--baseline/--max-increase just under and just over a limit (two recordings
of gate_count, whose allocation count is its argument), an old value of 0,
an unreadable and an incomplete recording; suppression counts exact for
patterns matching a function, a source file and a module name, for the
patterns a program embeds with __lsan_default_suppressions() (built here by
gcc and clang at -O0 and -O2, PIE and not, as C and C++), and for the
built-in list on and off."""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403


def mp(args):
    r = run([MEMPRINT] + args)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def mpj(args):
    rc, out, err = mp(["--json"] + args)
    try:
        return rc, json.loads(out), err
    except ValueError:
        return rc, None, err


def rec(name, argv, d):
    out = os.path.join(d, name + ".zst")
    r = record(argv, out)
    if r.returncode != 0:
        raise RuntimeError("memrec %s failed: %s" % (argv, r.stderr.decode()))
    return out


d = tmpdir()

# ---- --check on gate_count: 1000 allocations of 1001 bytes, peak 1001000 ----
base = rec("count1000", [prog("gate_count"), "1000"], d)
rc, out, err = mp(["--check", "allocations==1000", "--check", "peak_heap_bytes <= 1001000", "--check",
                   "peak_heap_bytes<1M", "--check", "leaked_bytes==0", base])
check_eq(rc, 0, "--check: every condition holds: exit 0 (%s)" % err.strip())
check("PASS  allocations == 1000: measured 1000" in out, "--check: the line names the condition and the value")
check("PASS  peak_heap_bytes < 1048576: measured 1001000" in out, "--check: 1M is 1024*1024")
check("gate: PASS (4 checks)" in out, "--check: the verdict line")
rc, out, err = mp(["--check", "allocations==1000", "--check", "peak_heap_bytes<1001000", base])
check_eq(rc, 1, "--check: one condition fails: exit 1")
check("FAIL  peak_heap_bytes < 1001000: measured 1001000" in out and "gate: FAIL (1 of 2 checks failed)" in out,
      "--check: the failed line and the verdict")
rc, out, err = mp(["--check", "allocations==1000", base])
check(rc == 0 and "gate: PASS (1 check)" in out, "--check: one check, one 'check' in the verdict")
rc, out, err = mp(["--check", "allocations==1", base])
check(rc == 1 and "gate: FAIL (1 of 1 check failed)" in out, "--check: one failed check in the verdict")
rc, out, err = mp(["--check", "peak_heap_bytes>=977.5K", "--check", "frees!=999", "--check", "allocations>999",
                   "--check", "threads==1", base])
check_eq(rc, 0, "--check: >=, !=, >, a decimal with a suffix (977.5K = 1000960)")
for bad in ("leaked_bytes=0", "leaked_bytes==", "leaked_bytes==1X", "==0", "leaked_bytes<<1", "leaked_bytes==--1"):
    rc, out, err = mp(["--check", bad, base])
    check(rc == 2 and "malformed" in err and out == "", "--check %r: malformed: exit 2, said (%d %r)" % (bad, rc, err))
rc, out, err = mp(["--check", "leaks==0", base])
check(rc == 2 and "unknown figure 'leaks'" in err and "leaked_bytes" in err and "peak_heap_bytes" in err,
      "--check with an unknown name: exit 2, the message lists the valid names (%r)" % err)
rc, out, err = mp(["--check", "leaks==0", os.path.join(d, "no-such.zst")])
check_eq(rc, 2, "--check: a bad condition is found before the file is read")

# Every numeric figure of the JSON summary is a --check figure, with the
# same value (one computation: analyzer/figures.c).
rc, j, err = mpj([base])
nums = [k for k, v in j.items() if isinstance(v, int) and not isinstance(v, bool)]
check(len(nums) >= 25 and "suppressed_leaked_bytes" in nums, "JSON: %d numeric summary figures" % len(nums))
args = []
for k in nums:
    args += ["--check", "%s==%d" % (k, j[k])]
rc, jj, err = mpj(args + [base])
check_eq(rc, 0, "--check NAME==VALUE for every numeric JSON figure holds (%s)" % err.strip())
if jj:
    g = jj["gate"]
    check_eq((g["result"], g["exit_code"], len(g["checks"])), ("pass", 0, len(nums)), "--json --check: the gate member")
    check(all(c["pass"] and c["measured"] == j[c["figure"]] for c in g["checks"]),
          "--json --check: each check's measured value is the JSON figure")
    check_eq(jj["allocations"], 1000, "--json --check: the report is there too")
rc, jj, err = mpj(["--check", "allocations<1000", base])
check(rc == 1 and jj and jj["gate"]["result"] == "fail" and jj["gate"]["checks"][0] ==
      {"check": "allocations<1000", "kind": "condition", "figure": "allocations", "op": "<", "value": 1000,
       "measured": 1000, "pass": False}, "--json --check: a failed check as JSON (%r)" % (jj and jj["gate"]))

# A figure the recording does not measure fails its check: temporaries
# when sampling (the JSON shows null).
sampled = os.path.join(d, "sampled.zst")
r = record([prog("gate_count"), "1000"], sampled, extra=["--sample-rate", "4096"])
check_eq(r.returncode, 0, "memrec --sample-rate")
rc, out, err = mp(["--check", "temporary==0", "--check", "allocations==1000", sampled])
check(rc == 1 and "FAIL  temporary == 0: not measured in this recording" in out and
      "PASS  allocations == 1000: measured 1000" in out, "sampled: temporary not measured fails, exact calls pass")
rc, jj, err = mpj(["--check", "temporary==0", sampled])
check(jj is not None and jj["temporary"] is None and jj["gate"]["checks"][0]["measured"] is None,
      "sampled --json: temporary and its check's measured value are null")

# ---- --baseline: 1000 -> 1100 (+10.0%) and 1101 (+10.1%) ----
n1100 = rec("count1100", [prog("gate_count"), "1100"], d)
n1101 = rec("count1101", [prog("gate_count"), "1101"], d)
rc, out, err = mp(["--baseline", base, "--max-increase", "allocations=10%", n1100])
check_eq(rc, 0, "baseline: +100 allocations under a 10%% limit of 1000: exit 0 (%s)" % err.strip())
check("PASS  allocations may grow by 10%: old 1000, new 1100, increase +100 (+10.00%), limit 100" in out,
      "baseline: the line gives old, new, increase and limit: " + repr(out))
rc, out, err = mp(["--baseline", base, "--max-increase", "allocations=10%", n1101])
check_eq(rc, 1, "baseline: +101 allocations over a 10% limit: exit 1")
check("FAIL  allocations may grow by 10%: old 1000, new 1101, increase +101" in out, "baseline: the failed line")
# Absolute amounts: the peak grows by 100 x 1001 = 100100 bytes.
rc, out, err = mp(["--baseline", base, "--max-increase", "peak_heap_bytes=100100", n1100])
check_eq(rc, 0, "baseline: peak +100100 bytes, limit 100100: exit 0")
rc, out, err = mp(["--baseline", base, "--max-increase", "peak_heap_bytes=100099", n1100])
check_eq(rc, 1, "baseline: peak +100100 bytes, limit 100099: exit 1")
rc, out, err = mp(["--baseline", base, "--max-increase", "peak_heap_bytes=98K", "--max-increase",
                   "allocations=10%", "--check", "leaked_bytes==0", n1100])
check_eq(rc, 0, "baseline: 98K (100352) and 10% and a --check together")
rc, jj, err = mpj(["--baseline", base, "--max-increase", "allocations=10%", n1101])
c = jj["gate"]["checks"][0] if jj else {}
check_eq((c.get("old"), c.get("new"), c.get("increase"), c.get("allowed"), c.get("limit_percent"), c.get("pass")),
         (1000, 1101, 101, 100, 10, False), "baseline --json: old, new, increase, allowed, percent, pass")
# An old value of 0: a percentage allows no increase; an amount does.
leaky = rec("lsan", [prog("gate_lsan")], d)
rc, out, err = mp(["--baseline", base, "--max-increase", "leaked_bytes=50%", leaky])
check_eq(rc, 1, "baseline: leaked 0 -> 777 under a percentage: exit 1 (a percentage of 0 is 0)")
rc, out, err = mp(["--baseline", base, "--max-increase", "leaked_bytes=1K", leaky])
check_eq(rc, 0, "baseline: leaked 0 -> 777 under 1K: exit 0")
rc, out, err = mp(["--baseline", base, "--max-increase", "leaked_bytes=10%", base])
check_eq(rc, 0, "baseline: 0 -> 0 under a percentage: exit 0")
for args, what in ((["--max-increase", "allocations=10%"], "--max-increase without --baseline"),
                   (["--baseline", base], "--baseline without --max-increase"),
                   (["--baseline", base, "--max-increase", "allocations"], "--max-increase without a limit"),
                   (["--baseline", base, "--max-increase", "allocations=x%"], "--max-increase with a bad limit"),
                   (["--check", "allocations>0", "--svg", "-"], "--check with --svg")):
    rc, out, err = mp(args + [n1100])
    check_eq(rc, 2, "%s: exit 2 (%s)" % (what, err.strip()))

# ---- recordings that cannot be read, or not whole ----
rc, out, err = mp(["--check", "allocations>=0", os.path.join(d, "no-such.zst")])
check_eq(rc, 4, "--check on a missing file: exit 4, not 1 (a failed check)")
junk = os.path.join(d, "junk.zst")
with open(junk, "wb") as f:
    f.write(b"not a recording at all")
rc, out, err = mp(["--check", "allocations>=0", junk])
check_eq(rc, 4, "--check on a file that is no recording: exit 4")
rc, out, err = mp(["--baseline", junk, "--max-increase", "allocations=1%", base])
check_eq(rc, 4, "--baseline that cannot be read: exit 4")
slow = rec("slow", [prog("slow"), "300"], d)
with open(slow, "rb") as f:
    data = f.read()
cut = os.path.join(d, "cut.zst")
with open(cut, "wb") as f:
    f.write(data[:-2])
rc, out, err = mp(["--check", "allocations>=0", cut])
check(rc in (3, 4), "--check on a cut recording: exit 3 or 4, never 0 or 1 (%d)" % rc)
if rc == 3:
    check("PASS  allocations >= 0" in out and "gate: INCOMPLETE" in out,
          "--check on a cut recording: the checks are shown, the gate fails as incomplete")
rc, jj, err = mpj(["--check", "allocations>=0", cut])
check(rc in (3, 4) and (rc == 4 or jj["gate"]["result"] == "incomplete"), "--json --check on a cut recording")
rc, out, err = mp(["--baseline", cut, "--max-increase", "allocations=100%", slow])
check(rc in (3, 4), "--baseline cut: exit 3 or 4 (%d)" % rc)

# ---- suppressions from files: gate_leaks ----
leaks = rec("leaks", [prog("gate_leaks")], d)
s1 = os.path.join(d, "one.supp")
with open(s1, "w") as f:
    f.write("# gate_leaks' suppressions\n\nleak:gate_leak_by_function\n   leak:gate_leaks_file.c  \n"
            "leak:libgate_module.so\nrace:not_for_us\n")
s2 = os.path.join(d, "two.supp")
with open(s2, "w") as f:
    f.write("leak:^leak_kept\nleak:^gate_leak_kept$\n")
rc, j, err = mpj(["--suppressions", s1, "--suppressions", s2, leaks])
check_eq(rc, 0, "suppressions: exit 0")
check("'%s' line 6: 'race:' is not a leak suppression: line ignored" % s1 in err,
      "suppressions: another sanitizer's line is warned about (%r)" % err)
pats = {(p["pattern"], p["origin"]): p for p in j["suppressions"]["patterns"]}
for pat, blocks, size in (("gate_leak_by_function", 3, 3003), ("gate_leaks_file.c", 2, 4004),
                          ("libgate_module.so", 1, 3003), ("^leak_kept", 0, 0), ("^gate_leak_kept$", 1, 4004)):
    p = pats.get((pat, "file"), {})
    check_eq((p.get("allocations"), p.get("bytes")), (blocks, size), "suppression leak:%s: blocks and bytes" % pat)
check_eq(pats.get(("gate_leak_by_function", "file"), {}).get("source"), s1 + ":3", "suppression: its file and line")
b = pats.get(("^_IO_file_doallocate$", "builtin"), {})
check_eq((b.get("allocations"), b.get("bytes")), (1, 4096), "built-in: stdout's buffer (a pipe: 4096 bytes)")
check_eq((j["leaked_bytes"], j["leaked_allocations"]), (0, 0), "suppressions: nothing left leaked")
check_eq((j["suppressed_leaked_bytes"], j["suppressed_leaked_allocations"]), (3003 + 4004 + 3003 + 4004 + 4096, 8),
         "suppressions: the suppressed figures")
check_eq(j["suppressions"]["allocations"], 8, "suppressions: the total")
check(all(not any("gate_leak" in (fr["function"] or "") for fr in e["frames"])
          for e in j["sections"]["most_leaked"]), "suppressions: no suppressed stack in most_leaked")
rc, j, err = mpj(["--suppressions", s1, leaks])
check_eq((j["leaked_bytes"], j["leaked_allocations"]), (4004, 1), "one file: gate_leak_kept stays leaked")
check_eq(j["sections"]["most_leaked"][0]["leaked_bytes"] if j["sections"]["most_leaked"] else 0, 4004,
         "one file: most_leaked holds it")
rc, out, err = mp(["--suppressions", s1, "--check", "leaked_bytes==0", leaks])
check(rc == 1 and "measured 4004" in out, "--check leaked_bytes==0 counts the unsuppressed leak only")
rc, out, err = mp(["--suppressions", s1, "--suppressions", s2, "--check", "leaked_bytes==0", "--check",
                   "suppressed_leaked_allocations==8", leaks])
check_eq(rc, 0, "--check leaked_bytes==0 passes when every leak is suppressed")
rc, out, err = mp(["--suppressions", s1, "-n", "5", leaks])
check("SUPPRESSED LEAKS" in out and "leak:gate_leak_by_function (%s:3): 2.93 KiB (3003 bytes) in 3 blocks" % s1 in out,
      "text: the suppressed leaks apart, with counts")
check("leaks suppressed: " in out and "not suppressed: 3.91 KiB (4004 bytes) in 1 block" in out,
      "text: the summary says what was suppressed")
leaked_sec = out.split("MOST MEMORY LEAKED")[1].split("MOST MEMORY ALLOCATED")[0]
check("gate_leak_kept" in leaked_sec and "gate_leak_by_function" not in leaked_sec,
      "text: MOST MEMORY LEAKED keeps only the unsuppressed stack")
# The built-ins off: stdout's buffer counts again.
rc, j, err = mpj(["--suppressions", s1, "--no-builtin-suppressions", leaks])
check_eq((j["leaked_bytes"], j["leaked_allocations"]), (4004 + 4096, 2), "--no-builtin-suppressions: stdout's buffer leaked")
check(not any(p["origin"] == "builtin" for p in j["suppressions"]["patterns"]), "--no-builtin-suppressions: none listed")
rc, j, err = mpj([leaks])
check_eq((j["leaked_bytes"], j["suppressed_leaked_bytes"]), (3003 + 4004 + 3003 + 4004, 4096),
         "built-ins only: every leak of the program's own kept")
bad = os.path.join(d, "bad.supp")
with open(bad, "w") as f:
    f.write("leak:ok\nnot a suppression\n")
rc, out, err = mp(["--suppressions", bad, leaks])
check(rc == 2 and "'%s' line 2 is not a suppression" % bad in err, "a malformed suppressions file: exit 2 (%r)" % err)
rc, out, err = mp(["--suppressions", os.path.join(d, "none.supp"), leaks])
check(rc == 2 and "cannot read" in err, "a missing suppressions file: exit 2")
with open(bad, "w") as f:
    f.write("leak:\n")
rc, out, err = mp(["--suppressions", bad, leaks])
check(rc == 2 and "empty pattern" in err, "an empty pattern: exit 2")


# ---- patterns embedded with __lsan_default_suppressions() ----
def embedded(path, what):
    rc, j, err = mpj([path])
    if not check(rc == 0 and j is not None, "%s: memprint exit 0 (%s)" % (what, err.strip())):
        return
    check_eq(err, "", "%s: nothing on stderr" % what)
    p = [p for p in j["suppressions"]["patterns"] if p["origin"] == "program"]
    check_eq([(x["pattern"], x["allocations"], x["bytes"]) for x in p],
             [("gate_embedded_leak", 4, 2220), ("gate_no_such_function", 0, 0)],
             "%s: the program's two patterns, with what they matched" % what)
    check_eq((j["leaked_bytes"], j["suppressed_leaked_bytes"]), (777, 2220), "%s: leaked and suppressed" % what)
    rc, j, err = mpj(["--no-program-suppressions", path])
    check_eq((j["leaked_bytes"], j["suppressed_leaked_bytes"]), (2997, 0), "%s: --no-program-suppressions" % what)


embedded(leaky, "gate_lsan (C, the build's -O2)")
if os.path.exists(prog("gate_lsan_cxx")):
    embedded(rec("lsan_cxx", [prog("gate_lsan_cxx")], d), "gate_lsan_cxx (C++, the build's -O2)")
src = os.path.join(SRC, "tests", "progs", "gate_lsan.c")
for cc in ("gcc", "clang", "g++", "clang++"):
    if not shutil.which(cc):
        skip_part("__lsan_default_suppressions built by %s" % cc, "%s not installed" % cc)
        continue
    lang = ["-x", "c++"] if cc.endswith("++") else []
    for opt in ("-O0", "-O2"):
        for pie in ([], ["-no-pie", "-fno-pie"]):
            exe = os.path.join(d, "lsan-%s%s%s" % (cc, opt, "-nopie" if pie else ""))
            r = run([cc, opt, "-g"] + pie + lang + [src, "-o", exe])
            if not check(r.returncode == 0, "%s %s %s builds gate_lsan.c" % (cc, opt, " ".join(pie))):
                continue
            embedded(rec(os.path.basename(exe), [exe], d), "%s %s %s" % (cc, opt, " ".join(pie) or "PIE"))
# The executable rebuilt since the recording: its patterns are not used.
if shutil.which("gcc"):
    exe = os.path.join(d, "rebuilt")
    run(["gcc", "-O0", "-g", src, "-o", exe])
    r0 = rec("rebuilt", [exe], d)
    run(["gcc", "-O2", "-g", "-DGATE_REBUILT=1", src, "-o", exe])
    rc, j, err = mpj([r0])
    check("is not the executable that was recorded (its build-id differs)" in err,
          "an executable rebuilt since: said (%r)" % err)
    check_eq(j["suppressed_leaked_bytes"] if j else None, 0, "an executable rebuilt since: its patterns not used")

done()
