# SPDX-License-Identifier: MIT
"""The recorded program must not see memrec (docs/capture.md, "What the
program sees"). envdump writes its environ, main()'s envp, getenv() of
memrec's names and the number its first open() returns, through exec(),
execve() with its own environment, posix_spawn() and fork()+exec(): its
output under memrec must be byte for byte its native output, with and
without --follow-fork, and the recordings must still follow what they
follow. daemon (built without unwind tables, so that libunwind checks
addresses through a pipe of its own) closes every descriptor and opens its
logs, which must land on 3 and 4 and keep every byte written to them.
env, sh and perl must see the environment of a native run."""
import glob
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

d = tmpdir()
BASE_ENV = {"PATH": "/usr/bin:/bin", "A": "1", "MEMREC_VERBOSE": "0"}
DEBUG_MALLOC = "/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0"


def leaked(path):
    j = report_json(path, top=50)
    return j["leaked_bytes"]


def compare(argv, what, env, extra=(), files=None):
    """Run argv natively and under memrec; their stdout must be identical.
    Returns the memrec run's output file names (main one first)."""
    native = run(argv, env=env)
    base = os.path.join(d, "%s.zst" % files)
    rec = record(argv, base, extra=extra, env=env)
    check_eq(rec.returncode, native.returncode, "%s: exit status as native" % what)
    same = rec.stdout == native.stdout
    if not check(same, "%s: output identical to a native run's" % what):
        print("native:\n" + native.stdout.decode(errors="replace"))
        print("memrec:\n" + rec.stdout.decode(errors="replace"))
    stem = base[:-len(".zst")]
    kids = sorted(glob.glob(stem + ".*.zst"))
    return [base] + kids


envdump = prog("envdump")
n = 0
for preload in (None, DEBUG_MALLOC):
    if preload and not os.path.exists(DEBUG_MALLOC):
        print("note: %s missing, the user-LD_PRELOAD case is not run" % DEBUG_MALLOC)
        continue
    if preload and run([MEMREC, "--version"], env=dict(BASE_ENV, LD_PRELOAD=preload)).returncode != 0:
        # An AddressSanitizer build of memrec refuses to start with another
        # library preloaded in front of its runtime.
        print("note: memrec itself does not start with LD_PRELOAD=%s (a sanitized build?), "
              "the user-LD_PRELOAD case is not run" % preload)
        continue
    env = dict(BASE_ENV)
    if preload:
        env["LD_PRELOAD"] = preload
    tag = " (LD_PRELOAD of its own)" if preload else ""
    for mode in ("exec", "own", "spawn", "fork", "system", "popen"):
        for follow in (False, True):
            n += 1
            extra = ["--follow-fork"] if follow else []
            if mode == "exec":
                extra += ["-d", "64"]  # one option variable to hide too
            what = "envdump %s%s%s" % (mode, " -f" if follow else "", tag)
            files = compare([envdump, mode], what, env, extra=extra, files="env%d" % n)
            # Each image leaks one block of 10001 bytes.
            if mode in ("exec", "own"):
                check_eq(leaked(files[0]), 20002, "%s: both images recorded (the exec is followed)" % what)
                check_eq(len(files), 1, "%s: one file" % what)
            else:
                check_eq(leaked(files[0]), 10001, "%s: the parent recorded" % what)
                if follow:
                    # system() and popen() run it through sh -c: a file for
                    # the shell too (with whatever dash leaves at exit).
                    kids = [leaked(f) for f in files[1:]]
                    check_eq((len(kids), kids.count(10001)), (1 if mode in ("spawn", "fork") else 2, 1),
                             "%s: the child followed, a file of its own (leaks: %r)" % (what, kids))
                else:
                    check_eq(len(files), 1, "%s: the child not recorded" % what)

# Programs that print their environment.
for argv, name in ((["env"], "env"), (["/bin/sh", "-c", "env; exec env"], "sh -c 'env; exec env'"),
                   (["perl", "-e", 'print "$_=$ENV{$_}\\n" for sort keys %ENV'], "perl %ENV")):
    if not shutil.which(argv[0]):
        print("note: %s not installed, not run" % argv[0])
        continue
    n += 1
    compare(argv, name, BASE_ENV, files="env%d" % n)

# The daemon: its first open() and its logs on 3 and 4, every byte kept.
log1, log2 = os.path.join(d, "log1"), os.path.join(d, "log2")
native = run([prog("daemon"), log1, log2])
check_eq(native.returncode, 0, "daemon natively: exit status")
want = "first 3 logs 3 4 bytes 58000\n"
check_eq(native.stdout.decode(), want, "daemon natively: its descriptors")
for attempt in range(2):
    for f in (log1, log2):
        if os.path.exists(f):
            os.unlink(f)
    out = os.path.join(d, "daemon%d.zst" % attempt)
    r = record([prog("daemon"), log1, log2], out)
    check_eq(r.returncode, 0, "daemon under memrec (run %d): exit status (3: its logs lost bytes or moved)" % attempt)
    check_eq(r.stdout.decode(), want, "daemon under memrec (run %d): the same descriptors and log bytes" % attempt)
    check_eq(r.stderr.decode(), "", "daemon under memrec (run %d): nothing on stderr" % attempt)
    check_eq([os.path.getsize(log1), os.path.getsize(log2)], [58000, 58000], "daemon (run %d): log sizes" % attempt)
    j = report_json(out, top=50)
    grind = sum(e["calls"] for e in j["sections"]["most_calls"] if has_frame(e, "grind"))
    check_eq(grind, 2000, "daemon (run %d): grind()'s calls all recorded" % attempt)

# The program line quotes its arguments as a shell would.
out = os.path.join(d, "quoted.zst")
r = record([envdump, "a b", "", "it's", "-x=1"], out)
check_eq(r.returncode, 0, "envdump with odd arguments: exit status")
line = "%s 'a b' '' 'it'\\''s' -x=1" % envdump
check_eq(report_json(out)["program"], line, "JSON program: the arguments quoted as a shell would")
_, text, _ = report_text(out)
check(text.startswith("program: %s (pid " % line), "text report: the same program line: %r" % text.split("\n")[0])
done()
