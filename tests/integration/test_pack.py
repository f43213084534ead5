# SPDX-License-Identifier: MIT
"""memprint --pack: a packed recording reads the same where the program's
files are gone. A C++ program with inline functions and a shared library
of its own (tests/progs/pack_main.cpp, pack_lib.cpp) is built into a
temporary directory with the compiler the build uses, recorded, analyzed
in every mode, packed, and deleted with its library: the packed file then
gives the same output byte for byte (apart from the 'packed' line of the
summary and the 'packed' field of the JSON), memtui shows the deleted
program's function names, and the unpacked recording (the proof that the
check can fail) only module+offset. Then the errors: same input and
output, a cut or missing input, a bad command line."""
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

MEMTUI = os.path.join(BUILD, "memtui")
REC_TIME_TAG = 9  # format/memfmt.h
PROGS_SRC = os.path.join(SRC, "tests", "progs")


def cxx_compiler():
    """The C++ compiler of the build (CMakeCache.txt), or None."""
    try:
        with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("CMAKE_CXX_COMPILER:"):
                    path = line.split("=", 1)[1].strip()
                    return path if path and os.path.exists(path) else None
    except OSError:
        pass
    return None


CXX = cxx_compiler()
if not CXX:
    skip("the build has no C++ compiler (pack_main.cpp is C++)")

d = tmpdir()
work = os.path.join(d, "prog")
os.mkdir(work)
lib = os.path.join(work, "libpackdemo.so")
exe = os.path.join(work, "pack_demo")
# As tests/progs/ builds its programs: -O2 -g, no sanitizer.
r = run([CXX, "-O2", "-g", "-fPIC", "-shared", "-o", lib, os.path.join(PROGS_SRC, "pack_lib.cpp")])
check_eq(r.returncode, 0, "build libpackdemo.so: " + r.stderr.decode()[-300:])
r = run([CXX, "-O2", "-g", "-o", exe, os.path.join(PROGS_SRC, "pack_main.cpp"), "-L" + work, "-lpackdemo",
         "-Wl,-rpath,$ORIGIN"])
check_eq(r.returncode, 0, "build pack_demo: " + r.stderr.decode()[-300:])
if failures:
    done()

orig = os.path.join(d, "orig.zst")
packed = os.path.join(d, "packed.zst")
check_eq(record([exe], orig, cwd=work).returncode, 0, "memrec pack_demo: exit status")

# Every mode, each with its arguments; FILE is the recording.
MODES = [
    ("text", ["-n", "20", "FILE"]),
    ("json", ["--json", "-n", "20", "FILE"]),
    ("folded", ["--folded", "-", "FILE"]),
    ("folded calls", ["--folded", "-", "--cost", "calls", "FILE"]),
    ("svg", ["--svg", "-", "FILE"]),
    ("svg reverse", ["--svg", "-", "--reverse", "FILE"]),
    ("diff", ["--diff", "FILE", "FILE"]),
    ("diff json", ["--json", "--diff", "FILE", "FILE"]),
    ("group site", ["--group", "site", "FILE"]),
    ("group function", ["--group", "function", "FILE"]),
    ("threads", ["--threads", "FILE"]),
    ("sizes", ["--sizes", "--by-stack", "FILE"]),
    ("timeline", ["--timeline", "FILE"]),
    ("function filter", ["--function", "raw_block", "FILE"]),
    ("exclude json", ["--json", "--exclude", "keep_record", "FILE"]),
    ("pprof", ["--pprof", "-", "FILE"]),
    ("pprof peak", ["--pprof", "-", "--pprof-at", "peak", "FILE"]),
    ("massif", ["--massif", "-", "FILE"]),
]
BINARY = ("pprof", "pprof peak")  # gzip'd protobuf: compared byte for byte too


def outputs(path):
    res = {}
    for name, args in MODES:
        r = run([MEMPRINT] + [path if a == "FILE" else a for a in args])
        res[name] = (r.returncode, r.stdout.decode("latin-1" if name in BINARY else "utf-8"), r.stderr.decode())
    return res


def without_notice(name, text):
    """The output with memprint's packed notice taken out: the summary
    line 'packed: ...' and the JSON field 'packed' (checked separately)."""
    if name.endswith("json"):
        obj = json.loads(text)
        obj.pop("packed", None)
        for side in ("base", "new"):
            if isinstance(obj.get(side), dict):
                obj[side].pop("packed", None)
        return json.dumps(obj, sort_keys=True)
    if name in BINARY:
        return text
    return "\n".join(ln for ln in text.split("\n") if not ln.startswith("packed: "))


before = outputs(orig)
for name, (rc, out, err) in before.items():
    check_eq(rc, 0, "original, %s: memprint exit status (%s)" % (name, err.strip()[:200]))
text = before["text"][1]
js = json.loads(before["json"][1])
check_eq((js["allocations"], js["temporary"], js["leaked_bytes"], js["leaked_allocations"]), (4, 1, 30018, 2),
         "original: allocations, temporary, leaked bytes and blocks (pack_main.cpp)")
check_eq(js["packed"], False, "original: JSON packed is false")
check("packed: " not in text, "original: no packed line in the summary")

# What the symbolizer gives where the files are: the names the packed
# file must carry (so that the comparison below cannot pass on two
# outputs of bare offsets).
inline_main = marker_line("tests/progs/pack_main.cpp", "LINE_MAIN_INLINE")
call_main = marker_line("tests/progs/pack_main.cpp", "LINE_MAIN_CALL")
inline_lib = marker_line("tests/progs/pack_lib.cpp", "LINE_LIB_INLINE")
call_lib = marker_line("tests/progs/pack_lib.cpp", "LINE_LIB_CALL")
WANT_TEXT = [
    "(inlined) make_record at %s:%d in pack_demo" % (os.path.join(PROGS_SRC, "pack_main.cpp"), inline_main),
    "keep_record(…) at %s:%d in pack_demo" % (os.path.join(PROGS_SRC, "pack_main.cpp"), call_main),
    "(inlined) packlib::raw_block at %s:%d in libpackdemo.so" % (os.path.join(PROGS_SRC, "pack_lib.cpp"), inline_lib),
    "packlib::Store::grab(…) at %s:%d in libpackdemo.so" % (os.path.join(PROGS_SRC, "pack_lib.cpp"), call_lib),
]
for want in WANT_TEXT:
    check(want in text, "original text shows: %s" % want)

# ---- pack ----
r = run([MEMPRINT, "--pack", orig, packed])
check_eq(r.returncode, 0, "--pack: exit status (%s)" % r.stderr.decode().strip())
m = re.search(r"frames of (\d+) addresses", r.stdout.decode())
check(m is not None and int(m.group(1)) > 0, "--pack: says how many addresses it packed: %s" % r.stdout.decode().strip())
check_eq(sorted(os.listdir(d)), ["orig.zst", "packed.zst", "prog"], "--pack: no temporary file left next to the output")


# ---- a recording cut short (memrec killed) is packed up to the cut ----
cutdir = os.path.join(d, "cut")
os.mkdir(cutdir)
cut_in, cut_out = os.path.join(cutdir, "cut.zst"), os.path.join(cutdir, "cut-packed.zst")
if not shutil.which("zstd"):
    skip_part("packing a recording cut short", "the zstd command is not installed")
else:
    raw = run(["zstd", "-qdc", orig]).stdout

    def compressed(data, path):
        with open(path, "wb") as f:
            f.write(run(["zstd", "-qc"], input=data).stdout)

    # The data ends 3 bytes before its end: inside the END record.
    compressed(raw[:-3], cut_in)
    r = run([MEMPRINT, "--pack", cut_in, cut_out])
    err = r.stderr.decode()
    check_eq(r.returncode, 3, "--pack of a file cut short: exit status 3 (written, not the whole run)")
    check(re.fullmatch(r"memprint: warning: '%s' is cut short at byte \d+ of its data: '%s' holds what comes before, "
                       r"and has no end either\n" % (re.escape(cut_in), re.escape(cut_out)), err) is not None,
          "--pack of a file cut short: one warning line: " + err.strip())
    a, b = run([MEMPRINT, "-n", "20", cut_in]), run([MEMPRINT, "-n", "20", cut_out])
    check_eq((a.returncode, b.returncode), (3, 3), "cut file and its packed copy: memprint exit status 3")
    check_eq(without_notice("text", b.stdout.decode()), without_notice("text", a.stdout.decode()),
             "cut file and its packed copy: the same report")
    check("ends before memrec finished it" in b.stderr.decode(), "the packed copy of a cut file says it has no end")
    # Cut after its END record, or corrupt: refused, nothing written.
    for what, data in (("cut after its end record", raw + bytes([REC_TIME_TAG, 5, 1])),
                       ("corrupt", raw + bytes([64, 1, 0]))):
        path = os.path.join(cutdir, "bad.zst")
        compressed(data, path)
        r = run([MEMPRINT, "--pack", path, os.path.join(cutdir, "bad-packed.zst")])
        err = r.stderr.decode()
        check_eq(r.returncode, 1, "--pack of a file %s: exit status" % what)
        check(err.startswith("memprint: cannot pack '%s'" % path) and err.count("\n") == 1,
              "--pack of a file %s: one line: %s" % (what, err.strip()))
        os.unlink(path)
    check_eq(sorted(os.listdir(cutdir)), ["cut-packed.zst", "cut.zst"], "refused packs leave nothing")

# ---- a packed file is read without its modules, even where they are ----
if not shutil.which("strace"):
    skip_part("no module file opened for a packed file", "strace is not installed")
else:
    def touched(path):
        """The module files memprint opens or stats reading `path` (strace)."""
        log = os.path.join(d, "strace.log")
        run(["strace", "-f", "-o", log, "-e", "trace=open,openat,stat,lstat,newfstatat,statx", MEMPRINT, path])
        with open(log) as f:
            text = f.read()
        os.unlink(log)
        return [name for name in (exe, lib) if '"%s"' % name in text]

    check_eq(touched(orig), [exe, lib], "strace: memprint opens the program and its library for the original")
    check_eq(touched(packed), [], "strace: memprint opens neither for the packed file, though they are there")

# ---- the program and its library are gone ----
shutil.rmtree(work)
check(not os.path.exists(exe) and not os.path.exists(lib), "pack_demo and libpackdemo.so deleted")

after = outputs(packed)
for name, args in MODES:
    rc, out, err = after[name]
    check_eq(rc, 0, "packed, %s: memprint exit status (%s)" % (name, err.strip()[:200]))
    same = without_notice(name, out) == without_notice(name, before[name][1])
    if not same and name not in BINARY:
        import difflib
        print("".join(difflib.unified_diff(before[name][1].splitlines(True), out.splitlines(True), "original", "packed")))
    check(same, "packed, %s: the same output as the original with its files present" % name)
    check_eq(err, before[name][2], "packed, %s: the same messages on stderr" % name)
ptext = after["text"][1]
check(re.search(r"^packed: the file carries the frames of \d+ addresses", ptext, re.M) is not None,
      "packed text: the summary says the file is packed")
check_eq(json.loads(after["json"][1])["packed"], True, "packed JSON: packed is true")
for want in WANT_TEXT:
    check(want in ptext, "packed text, program deleted, shows: %s" % want)

if os.path.exists(cut_out):
    r = run([MEMPRINT, "-n", "20", cut_out])
    check(all(want in r.stdout.decode() for want in WANT_TEXT), "the packed copy of the cut file, program deleted: "
          "the names, files and lines")

# The proof that the comparison can fail: the unpacked recording, read
# now, has only module+offset for the deleted program and library.
gone = outputs(orig)
gtext = gone["text"][1]
check(re.search(r"\?\? in pack_demo\+0x[0-9a-f]+", gtext) is not None, "unpacked, program deleted: ?? in pack_demo+0x...")
check(re.search(r"\?\? in libpackdemo\.so\+0x[0-9a-f]+", gtext) is not None,
      "unpacked, program deleted: ?? in libpackdemo.so+0x...")
check("keep_record" not in gtext and "packlib::" not in gtext, "unpacked, program deleted: no name of the program")
check(without_notice("text", gtext) != without_notice("text", text), "unpacked, program deleted: the output differs")

# Said once on stderr, with the way out: which files are gone, and --pack.
gerr = [ln for ln in gone["text"][2].splitlines() if "cannot be symbolized here" in ln]
check_eq(len(gerr), 1, "unpacked, program deleted: one warning on the modules: %r" % gone["text"][2])
gline = gerr[0] if gerr else ""
check(gline.startswith("memprint: warning: '%s': 2 modules" % orig) and "'%s' (missing)" % exe in gline
      and "'%s' (missing)" % lib in gline and "memprint --pack" in gline,
      "unpacked, program deleted: the warning names both files, missing, and --pack: %r" % gline)
check_eq(gone["text"][0], 0, "unpacked, program deleted: still exit 0 (a warning, the report is whole)")

# Rebuilt: another executable at the program's path (its build-id is not
# the recorded one): said so, the library still missing.
os.mkdir(work)
shutil.copy(prog("aligned"), exe)
r = run([MEMPRINT, "-n", "3", orig])
rerr = [ln for ln in r.stderr.decode().splitlines() if "cannot be symbolized here" in ln]
check(len(rerr) == 1 and "'%s' (rebuilt: its build-id differs)" % exe in rerr[0] and "'%s' (missing)" % lib in rerr[0],
      "unpacked, another program at its path: rebuilt and missing: %r" % r.stderr.decode())
r = run([MEMPRINT, "-n", "3", packed])
check("cannot be symbolized" not in r.stderr.decode(), "packed, another program at its path: no warning (%r)"
      % r.stderr.decode())
shutil.rmtree(work)

# ---- packing a packed file: the same file ----
again = os.path.join(d, "again.zst")
r = run([MEMPRINT, "--pack", packed, again])
check_eq(r.returncode, 0, "--pack of a packed file: exit status (%s)" % r.stderr.decode().strip())
with open(packed, "rb") as f1, open(again, "rb") as f2:
    check(f1.read() == f2.read(), "--pack of a packed file: byte for byte the same file")
os.unlink(again)

# ---- memtui on the packed file, program deleted ----
if not shutil.which("tmux") or not os.path.exists(MEMTUI):
    skip_part("memtui on the packed file", "tmux or memtui missing")
else:
    sock = "memtui-pack-%d" % os.getpid()

    def tmux(*args):
        return subprocess.run(["tmux", "-L", sock] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=30)

    tmux("new-session", "-d", "-s", "p", "-x", "120", "-y", "40",
         "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen %s %s; echo MEMTUI-EXIT=$?; sleep 600" % (MEMTUI, packed))
    try:
        screen, end = "", time.time() + 60
        while time.time() < end:
            screen = tmux("capture-pane", "-p", "-t", "p").stdout
            if "packlib::raw_block" in screen and "make_record" in screen:
                break
            time.sleep(0.1)
        check("packlib::raw_block" in screen and "make_record" in screen,
              "memtui, packed file, program deleted: shows packlib::raw_block and make_record")
        check("packed: the file carries the frames" in screen, "memtui: the summary says the file is packed")
        tmux("send-keys", "-t", "p", "q")
        end = time.time() + 30
        while time.time() < end and "MEMTUI-EXIT=" not in screen:
            time.sleep(0.1)
            screen = tmux("capture-pane", "-p", "-t", "p").stdout
        check("MEMTUI-EXIT=0" in screen, "memtui: quits with status 0")
    finally:
        tmux("kill-server")

# ---- errors: one line, no output file passed off as complete ----
r = run([MEMPRINT, "--pack", packed, packed])
check_eq(r.returncode, 1, "--pack IN IN: exit status")
check("both the input and the output" in r.stderr.decode(), "--pack IN IN: says why: " + r.stderr.decode().strip())
link = os.path.join(d, "link.zst")
os.symlink(packed, link)
r = run([MEMPRINT, "--pack", packed, link])
check_eq(r.returncode, 1, "--pack IN (a link to IN): exit status")
os.unlink(link)

with open(orig, "rb") as f:
    data = f.read()
cut = os.path.join(d, "cut.zst")
with open(cut, "wb") as f:
    f.write(data[:len(data) // 2])
out = os.path.join(d, "out.zst")
r = run([MEMPRINT, "--pack", cut, out])
err = r.stderr.decode()
check_eq(r.returncode, 1, "--pack of a cut file: exit status")
check(re.match(r"memprint: cannot (pack|read) '%s'" % re.escape(cut), err) is not None and err.count("\n") == 1,
      "--pack of a cut file: one line naming the file: " + err.strip())
check(not os.path.exists(out), "--pack of a cut file: no output file")
r = run([MEMPRINT, "--pack", os.path.join(d, "missing.zst"), out])
check_eq(r.returncode, 1, "--pack of a missing file: exit status")
check("No such file" in r.stderr.decode(), "--pack of a missing file: says so: " + r.stderr.decode().strip())
r = run([MEMPRINT, "--pack", orig, os.path.join(d, "no-such-dir", "out.zst")])
check_eq(r.returncode, 1, "--pack into a missing directory: exit status")
check(r.stderr.decode().startswith("memprint: cannot create"), "--pack into a missing directory: says so: "
      + r.stderr.decode().strip())
check_eq(sorted(os.listdir(d)), ["cut", "cut.zst", "orig.zst", "packed.zst"], "errors: no output or temporary file left")
with open(orig, "rb") as f:
    r = run([MEMPRINT, "--pack", "/dev/stdin", out], input=f.read())
check_eq(r.returncode, 1, "--pack of a pipe: exit status")
check("not a regular file" in r.stderr.decode(), "--pack of a pipe: says why: " + r.stderr.decode().strip())
r = run([MEMPRINT, "--pack", orig])
check_eq(r.returncode, 2, "--pack with one file: usage error")
r = run([MEMPRINT, "--pack", "--json", orig, out])
check_eq(r.returncode, 2, "--pack with another option: usage error")
check(not os.path.exists(out), "usage errors: no output file")

shutil.rmtree(d)
# A record of a kind this build does not know (tag 70: readers skip it, so
# --pack copies it), and a file whose data ends cleanly with no END record
# (memrec stopped between records): packed, the second with a warning and
# exit 3, as its report says it is incomplete.
sys.path.insert(0, os.path.join(SRC, "tests", "data"))
import make_hostile as mh  # noqa: E402

d = tmpdir()
ops = [mh.op(mh.OP_THREAD, 0, 1), mh.op(mh.OP_ALLOC | mh.OP_NEW, mh.K_MALLOC, 10001, 0)]
for name, raw, want_rc in (("unknown-tag", mh.start() + mh.record(70, 1, 2, 3) + mh.events(ops) + mh.end_exited(), 0),
                           ("no-end", mh.start() + mh.events(ops), 3)):
    src = os.path.join(d, name + ".mrec")
    with open(src, "wb") as f:
        f.write(mh.window_frame(17, raw))
    dst = os.path.join(d, name + ".packed.zst")
    r = run([MEMPRINT, "--pack", src, dst])
    check_eq(r.returncode, want_rc, "--pack %s: exit status (%s)" % (name, r.stderr.decode().strip()))
    check(os.path.exists(dst), "--pack %s: the copy is written" % name)
    if want_rc == 3:
        check("has no end record" in r.stderr.decode(), "--pack %s: a warning says the input has no end" % name)
    r = run([MEMPRINT, "--json", dst])
    check_eq(r.returncode, want_rc, "--pack %s: the copy's report exits as its input's" % name)
    j = json.loads(r.stdout.decode() or "{}")
    check_eq((j.get("allocations"), j.get("complete")), (1, name != "no-end"),
             "--pack %s: the copy reads as its input" % name)

done()
