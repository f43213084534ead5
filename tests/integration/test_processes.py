# SPDX-License-Identifier: MIT
"""Processes in real life: exec (of the program memrec ran, and a shell
script ending in exec), fork (children not recorded by default; one file
each with --follow-fork), and descriptors closed or replaced by the
program. Exact figures: tests/progs/EXPECTED.md, "Processes"."""
import glob
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

FIELDS = ("allocations", "temporary", "peak_heap_bytes", "leaked_bytes", "leaked_allocations")


def summary(j):
    return tuple(j[f] for f in FIELDS)


def by_function(j, function):
    """(calls, leaked bytes) of the sites whose innermost frame is `function`."""
    calls = sum(e["calls"] for e in j["sections"]["most_calls"] if e["frames"] and e["frames"][0]["function"] == function)
    leaked = sum(e["leaked_bytes"] for e in j["sections"]["most_leaked"]
                 if e["frames"] and e["frames"][0]["function"] == function)
    return calls, leaked


d = tmpdir()

# exec: the program memrec ran execs itself; both images are one recording.
# Phase 1: 11 allocations, 4000 + 777 bytes still allocated at exec; phase
# 2: 8 allocations, 5 temporaries, 4000 bytes leaked. The 777-byte block is
# made right before exec: no event lost.
for mode in ("execv", "execl", "execvp"):
    out = os.path.join(d, "exec-%s.zst" % mode)
    r = record([prog("execself"), mode], out)
    check_eq(r.returncode, 0, "execself %s: exit status" % mode)
    j = report_json(out, top=50)
    check_eq(summary(j), (19, 5, 11077, 8777, 7), "execself %s: figures across exec" % mode)
    check_eq(by_function(j, "before_exec"), (11, 4777), "execself %s: first image's site" % mode)
    check_eq(by_function(j, "after_exec"), (8, 4000), "execself %s: second image's site" % mode)
    check(j["complete"] and j["end"] == "exited", "execself %s: complete, exited" % mode)
    check_eq(j["unmatched_frees"], 0, "execself %s: no unmatched frees" % mode)
    _, text, err = report_text(out)
    check("execself phase2" in text, "execself %s: the report names the program after exec" % mode)

# A shell script that runs a program and then execs another: the script
# and what it execs are recorded, the program it merely runs is not.
script = os.path.join(d, "run.sh")
with open(script, "w") as f:
    f.write("#!/bin/sh\n\"%s\" >/dev/null || exit 9\nexec \"%s\" phase2\n" % (prog("forker"), prog("execself")))
os.chmod(script, 0o755)
out = os.path.join(d, "script.zst")
r = record([script], out)
check_eq(r.returncode, 0, "run.sh: exit status")
j = report_json(out, top=200)
check_eq(by_function(j, "after_exec"), (8, 4000), "run.sh: the exec'd server's site")
check_eq(by_function(j, "parent_work")[0], 0, "run.sh: a program the script only runs is not recorded")
check_eq(sorted(os.listdir(d)).count("script.zst"), 1, "run.sh: one file")
check_eq([n for n in os.listdir(d) if n.startswith("script.") and n != "script.zst"], [], "run.sh: no other files")

out = os.path.join(d, "script-f.zst")
r = record([script], out, extra=["--follow-fork"])
check_eq(r.returncode, 0, "run.sh --follow-fork: exit status")
j = report_json(out, top=200)
check_eq(by_function(j, "after_exec"), (8, 4000), "run.sh --follow-fork: the exec'd server's site")
kids = sorted(glob.glob(os.path.join(d, "script-f.*.zst")))
check_eq(len(kids), 4, "run.sh --follow-fork: the spawned program and its three children have files")
found = [report_json(k, top=50) for k in kids]
check(any(by_function(k, "parent_work") == (3, 42) for k in found), "run.sh --follow-fork: the spawned program's figures")
# The shell forked and exec'd forker, whose main returned 0: its status
# comes from the recorder (memrec is not its parent), the wrapped main.
check_eq([(k["end"], k["exit_value"]) for k in found if by_function(k, "parent_work") == (3, 42)],
         [("exited", 0)], "run.sh --follow-fork: the spawned program's end, status 0 from main")

# fork: without --follow-fork only the parent; its figures exclude the
# children's. Parent: parent_work 5000 (freed at the end), 100 (temporary),
# 42 (leaked).
out = os.path.join(d, "fork.zst")
r = record([prog("forker")], out)
check_eq(r.returncode, 0, "forker: exit status")
check_eq(summary(report_json(out)), (3, 1, 5100, 42, 1), "forker: the parent's figures")
check_eq(glob.glob(os.path.join(d, "fork.*.zst")), [], "forker: no files for children by default")

out = os.path.join(d, "ff.zst")
r = run([MEMREC, "-o", out, "--follow-fork", prog("forker")])
check_eq(r.returncode, 0, "forker --follow-fork: exit status")
check_eq(summary(report_json(out)), (3, 1, 5100, 42, 1), "forker --follow-fork: the parent's figures")
kids = glob.glob(os.path.join(d, "ff.*.zst"))
check_eq(len(kids), 3, "forker --follow-fork: one file per child")
err = r.stderr.decode()
for k in kids:
    check(k in err, "forker --follow-fork: memrec names %s" % os.path.basename(k))
got = {}
for k in kids:
    j = report_json(k)
    got[j["allocations"]] = (summary(j), j["end"], j["exit_value"], j["unmatched_frees"], j["complete"])
# child i: i + 2 blocks of 1000 bytes, i + 1 of them temporaries, one
# leaked; children 0 and 1 free the parent's block (unknown to them);
# child 0 returns 0 from main, child 1 calls exit(5), child 2 _exit(3).
# memrec is not their parent: the recorder reports each status.
check_eq(got.get(2), ((2, 1, 2000, 1000, 1), "exited", 0, 1, True), "forker child 0 (returns 0 from main)")
check_eq(got.get(3), ((3, 2, 2000, 1000, 1), "exited", 5, 1, True), "forker child 1 (exit(5))")
check_eq(got.get(4), ((4, 3, 2000, 1000, 1), "exited", 3, 0, True), "forker child 2 (_exit(3))")

# A followed child that dies of a signal: memrec is not its parent, so the
# recorder's crash handler says which signal; the child's recording ends
# "signaled" with its figures (crasher: 1510 calls, 153900 bytes leaked,
# besides its thread's one calloc) and memprint warns.
out = os.path.join(d, "crashkid.zst")
r = record(["/bin/sh", "-c", "\"%s\" segv; exit 0" % prog("crasher")], out, extra=["--follow-fork"])
check_eq(r.returncode, 0, "sh -c 'crasher segv' --follow-fork: exit status of the shell")
kids = [k for k in glob.glob(os.path.join(d, "crashkid.*.zst"))]
ends = [report_json(k) for k in kids]
dead = [j for j in ends if j["end"] == "signaled"]
check_eq(len(dead), 1, "followed crasher: one child recording ends signaled")
if dead:
    check_eq(dead[0]["exit_value"], 11, "followed crasher: killed by SIGSEGV")
    check(dead[0]["allocations"] >= 1510 and dead[0]["leaked_bytes"] >= 153900,
          "followed crasher: its figures up to the crash (%d calls, %d leaked)" % (dead[0]["allocations"], dead[0]["leaked_bytes"]))
    code, text, err = report_text(next(k for k, j in zip(kids, ends) if j is dead[0]))
    check(code == 0 and "did not end normally" in err, "followed crasher: memprint warns")

# Descriptors: a daemon-like close of every descriptor, dup2 of the
# program's file over every descriptor, close_range, closefrom. The
# program checks its own file; the recording stays whole.
mine = os.path.join(d, "own-data.txt")
out = os.path.join(d, "fd.zst")
r = record([prog("fdcloser"), mine], out)
check_eq(r.returncode, 0, "fdcloser: exit status (its own file holds only its own data)")
with open(mine, "rb") as f:
    check_eq(f.read(), b"the program's own data\n", "fdcloser: its file")
j = report_json(out)
check_eq(summary(j), (10005, 10000, 500, 500, 5), "fdcloser: figures")
check(j["complete"], "fdcloser: recording complete")
check_eq(j["unmatched_frees"], 0, "fdcloser: no unmatched frees")

# A followed child that execs a set-user-ID program: the kernel drops
# LD_PRELOAD there, so no recorder comes up; memrec says so instead of
# taking the silence for a crash (the recorder said it was about to exec).
if os.geteuid() != 0:
    skip_part("exec of a set-user-ID program", "making a set-user-ID copy of true needs root")
else:
    sdir = tmpdir()
    os.chmod(sdir, 0o755)
    su = os.path.join(sdir, "su_true")
    shutil.copy("/bin/true", su)
    os.chown(su, 65534, 65534)
    os.chmod(su, 0o4755)
    out = os.path.join(sdir, "su.zst")
    # bash allocates in the forked child before its exec (dash does not,
    # and a child that never allocates gets no file at all).
    r = run([MEMREC, "-f", "-o", out, "bash", "-c", "%s; exit 0" % su])
    err = r.stderr.decode()
    check_eq(r.returncode, 0, "set-user-ID child: memrec exits with the shell's status")
    check("went on in a program memrec cannot record (set-user-ID" in err and "killed or crashed" not in err,
          "set-user-ID child: memrec says why it lost the child: %r" % err)
    kids = [f for f in os.listdir(sdir) if f.startswith("su.") and f != "su.zst"]
    check_eq(len(kids), 1, "set-user-ID child: the child's file: %s" % kids)
    if kids:
        jk = report_json(os.path.join(sdir, kids[0]))
        check_eq(jk["end"], "exec_unrecorded", "set-user-ID child: the file says how it ended")
        text = run([MEMPRINT, os.path.join(sdir, kids[0])]).stdout.decode()
        check("went on in a program that cannot be recorded" in text, "set-user-ID child: memprint says so")

done()
