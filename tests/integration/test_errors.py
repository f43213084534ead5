# SPDX-License-Identifier: MIT
"""Bad input to memprint and memrec: every case must end with one line on
stderr naming what failed and where (the file or the program), a non-zero
exit (3 with a warning where a recording is partly readable: the report is
printed but incomplete), never a crash
(exit >= 128 or a signal), never a hang, never an output file left behind.

Damaged recordings are made here from a real one (cut or bytes flipped);
recordings that need valid zstd around invalid content are committed under
tests/data/bad/ (see tests/data/README.md)."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

BAD = os.path.join(SRC, "tests", "data", "bad")
TIMEOUT = 15  # seconds for any one command; everything here takes well under 1 s but slow

d = tmpdir()


# ---- running, with protection against hangs and runaway memory ----

ASAN = is_asan(MEMPRINT)


# 4 GiB: a real recording of a few MiB, damaged.
limit_memory = memory_cap(4, ASAN)


def tool_env():
    return capped_env(4, ASAN)


def run_tool(cmd, cwd=None, timeout=TIMEOUT, rss=None):
    """Run; returns (code, stdout, stderr lines); code None = timed out,
    negative = killed by that signal. With `rss` (a list), appends the
    command's peak resident size in KiB."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd, env=tool_env(), preexec_fn=limit_memory)
        deadline = time.monotonic() + timeout
        while True:
            # wait4, not wait: it tells this child's own peak memory.
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                break
            if time.monotonic() > deadline:
                p.kill()
                os.wait4(p.pid, 0)
                p.returncode = -9  # reaped here: keep Popen from waiting again
                return None, "", []
            time.sleep(0.005)
        p.returncode = os.waitstatus_to_exitcode(status)
        if rss is not None:
            rss.append(usage.ru_maxrss)
        out.seek(0)
        err.seek(0)
        return (p.returncode, out.read().decode(errors="replace"), err.read().decode(errors="replace").splitlines())


def no_crash(what, code):
    """Not hung, not killed by a signal, no 128+N exit."""
    if code is None:
        return check(False, "%s: hangs (killed after %d s)" % (what, TIMEOUT))
    return check(0 <= code < 128, "%s: no crash or hang (exit status %d)" % (what, code))


def expect_error(what, cmd, code, prog, subject, patterns, cwd=None):
    """A failing command: exit `code` (or any 1..125 if None), exactly one
    stderr line '<prog>: ...' that quotes `subject` and matches every
    regular expression of `patterns` (case-insensitive)."""
    rc, _, err = run_tool(cmd, cwd=cwd)
    if not no_crash(what, rc):
        return err
    if code is None:
        check(1 <= rc <= 125, "%s: fails (exit status %d)" % (what, rc))
    else:
        check_eq(rc, code, "%s: exit status" % what)
    check_eq(len(err), 1, "%s: one line on stderr %r" % (what, err))
    line = err[0] if err else ""
    check(line.startswith(prog + ": "), "%s: message starts with '%s: '" % (what, prog))
    if subject is not None:
        check("'%s'" % subject in line, "%s: message names '%s'" % (what, subject))
    for p in patterns:
        check(re.search(p, line, re.I) is not None, "%s: message says /%s/: %r" % (what, p, line))
    return err


def memprint_json(path, rss=None):
    """(exit status, parsed report or None, stderr lines) for memprint --json."""
    rc, out, err = run_tool([MEMPRINT, "--json", "-n", "3", path], rss=rss)
    rep = None
    if rc in (0, 3):
        try:
            rep = json.loads(out)
        except ValueError:
            rep = None
    return rc, rep, err


def files_in(dirname):
    return sorted(os.listdir(dirname))


# ---- zstd frame layout, to cut and flip recordings at meaningful places ----

def zstd_blocks(data):
    """(start, end) of every block of the first zstd frame, end exclusive,
    and the frame's end (checksum included). Bounds-checked: returns what
    it could parse if the data is cut."""
    if data[:4] != b"\x28\xb5\x2f\xfd" or len(data) < 6:
        return [], 0
    fhd = data[4]
    pos = 5
    if not (fhd >> 5) & 1:
        pos += 1  # window descriptor
    pos += (0, 1, 2, 4)[fhd & 3]
    pos += ((1 if (fhd >> 5) & 1 else 0), 2, 4, 8)[fhd >> 6]
    blocks = []
    while pos + 3 <= len(data):
        h = int.from_bytes(data[pos:pos + 3], "little")
        size = 1 if (h >> 1) & 3 == 1 else h >> 3
        blocks.append((pos, pos + 3 + size))
        pos += 3 + size
        if h & 1:
            break
    if (fhd >> 2) & 1:
        pos += 4
    return blocks, pos


def write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


# ---- the slow target program (tests/progs/slow.c) ----

def slow_prog():
    """Path of the built slow program, or compiled here when the build has
    not got it yet; None when no compiler works."""
    p = prog("slow")
    if os.path.exists(p):
        return p
    out = os.path.join(d, "slow")
    for cc in ("cc", "gcc", "clang"):
        try:
            r = run([cc, "-std=gnu11", "-O2", "-g", "-o", out, os.path.join(SRC, "tests", "progs", "slow.c")],
                    timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0:
            return out
    return None


SLOW = slow_prog()


# =====================================================================
# memprint
# =====================================================================

missing = os.path.join(d, "missing.zst")
expect_error("memprint missing file", [MEMPRINT, missing], 1, "memprint", missing, [r"no such file"])
expect_error("memprint directory", [MEMPRINT, d], 1, "memprint", d, [r"directory"])

empty = write_bytes(os.path.join(d, "empty.zst"), b"")
expect_error("memprint empty file", [MEMPRINT, empty], 1, "memprint", empty, [r"empty"])

text = write_bytes(os.path.join(d, "text.zst"), b"This is a text file, not a recording.\n" * 4)
expect_error("memprint text file", [MEMPRINT, text], 1, "memprint", text, [r"not a memrec recording"])
expect_error("memprint an executable", [MEMPRINT, MEMPRINT], 1, "memprint", MEMPRINT, [r"not a memrec recording"])

for name in ("not-memrec.mrec", "not-memrec-short.mrec"):
    path = os.path.join(BAD, name)
    expect_error("memprint zstd but not memrec (%s)" % name, [MEMPRINT, path], 1, "memprint", path,
                 [r"not a memrec recording"])

v99 = os.path.join(BAD, "version99.mrec")
expect_error("memprint version 99", [MEMPRINT, v99], 1, "memprint", v99, [r"newer"])


# memprint's peak resident size on a small file is a few MiB (the reader's
# window is 2.3 MiB); far more means a size was taken from the data.
RSS_LIMIT_KIB = 128 << 10


def expect_corrupt(what, path):
    """Corrupt data: an error exit, or exit 3 with a report and warnings;
    either way what is said names the file and calls it corrupt, never 'not
    a memrec recording', and memory stays small."""
    rss = []
    rc, rep, err = memprint_json(path, rss=rss)
    if not no_crash(what, rc):
        return
    check(rss[0] < RSS_LIMIT_KIB, "%s: memory stays small (peak %d KiB)" % (what, rss[0]))
    check(rc in (1, 3), "%s: exit status 3 (incomplete, with a warning) or 1 (%d)" % (what, rc))
    if rc == 3:
        check(rep is not None, "%s: the report is valid JSON" % what)
    check(1 <= len(err) <= 2, "%s: one message on stderr (at most a second warning) %r" % (what, err))
    check(all(l.startswith("memprint: ") for l in err), "%s: messages start with 'memprint: '" % what)
    check(any("'%s'" % path in l for l in err), "%s: a message names the file" % what)
    said = " ".join(err)
    check(re.search(r"corrupt|checksum|larger than", said, re.I) is not None, "%s: says corrupt: %r" % (what, said))
    check("not a memrec recording" not in said, "%s: does not call it 'not a memrec recording'" % what)


# Valid zstd, valid header, then a record that cannot be valid.
for name in ("record-too-long.mrec", "bad-thread-index.mrec", "pair-freed-twice.mrec"):
    expect_corrupt("memprint corrupt record (%s)" % name, os.path.join(BAD, name))

# Usage errors: exit 2.
expect_error("memprint unknown option", [MEMPRINT, "--no-such-option", empty], 2, "memprint", "--no-such-option",
             [r"unknown option"])
expect_error("memprint unknown short option", [MEMPRINT, "-Z", empty], 2, "memprint", "-Z", [r"unknown option"])
expect_error("memprint -n abc", [MEMPRINT, "-n", "abc", empty], 2, "memprint", "abc", [r"invalid"])
rc, _, err = run_tool([MEMPRINT])
if no_crash("memprint without a file", rc):
    check_eq(rc, 2, "memprint without a file: exit status")
    check(bool(err) and err[0].startswith("usage: memprint"), "memprint without a file: usage on stderr")

# ---- damaged real recordings ----

if SLOW is None:
    skip_part("damaged real recordings", "no C compiler to build tests/progs/slow.c")
else:
    # About one second of steady allocations: memrec flushes every 100 ms,
    # so the file has a first block with the header and modules, then one
    # small block per flush.
    full = os.path.join(d, "slow.zst")
    r = record([SLOW, "1000"], full)
    check_eq(r.returncode, 0, "slow recording: memrec exit status")
    rc, rep, err = memprint_json(full)
    check(rc == 0 and rep is not None and not err, "slow recording: memprint reads it without a message %r" % err)
    full_allocs = rep["allocations"] if rep else 0
    full_rep = rep
    check(full_allocs > 100, "slow recording: %d allocations" % full_allocs)
    with open(full, "rb") as f:
        data = f.read()
    blocks, frame_end = zstd_blocks(data)
    check(len(blocks) >= 4 and frame_end == len(data),
          "slow recording: one zstd frame of several flushed blocks (%d)" % len(blocks))

    if len(blocks) >= 4:
        first_end = blocks[0][1]  # the first block holds the header

        # Cut before the header's block is complete: nothing to report, or,
        # when that block is stored raw (zstd hands out the start of a raw
        # block before its end) and the cut leaves the header whole, the
        # report of what is there. Either way an incomplete recording, exit
        # 3 as memprint(1) says (with --check too: 3, not 4, which is for a
        # file that cannot be read), and one line that says truncated.
        for off in (3, blocks[0][0] + 2, first_end // 2, first_end - 1):
            cut = write_bytes(os.path.join(d, "cut-%d.zst" % off), data[:off])
            expect_error("memprint recording cut at byte %d (inside the header's block)" % off, [MEMPRINT, cut],
                         3, "memprint", cut, [r"truncated"])
            expect_error("memprint --check on a recording cut at byte %d (inside the header's block)" % off,
                         [MEMPRINT, "--check", "leaked_bytes==0", cut], 3, "memprint", cut, [r"truncated"])

        # Cut after it: report what comes before, exit 3 (incomplete), one warning.
        mid = blocks[len(blocks) // 2]
        offsets = [first_end, first_end + 1, mid[0] + (mid[1] - mid[0]) // 2, blocks[-1][0], frame_end - 2]
        last_allocs = 0
        for off in offsets:
            what = "memprint recording cut at byte %d of %d" % (off, len(data))
            cut = write_bytes(os.path.join(d, "cut-%d.zst" % off), data[:off])
            rc, rep, err = memprint_json(cut)
            if not no_crash(what, rc):
                continue
            check_eq(rc, 3, "%s: exit status" % what)
            check_eq(len(err), 1, "%s: one line on stderr %r" % (what, err))
            line = err[0] if err else ""
            check(line.startswith("memprint: warning: ") and ("'%s'" % cut) in line and "truncated" in line,
                  "%s: warning names the file and says truncated: %r" % (what, line))
            allocs = rep["allocations"] if rep else -1
            check(0 <= allocs <= full_allocs and allocs >= last_allocs,
                  "%s: %d allocations (more than with a shorter cut, at most %d)" % (what, allocs, full_allocs))
            last_allocs = max(last_allocs, allocs)
        check(last_allocs > 0, "cut recordings: the longer cuts report allocations (%d)" % last_allocs)

        # Flip bytes inside compressed data: in the header's block, in the
        # frame checksum.
        flips = [("in the first block", blocks[0][0] + 3 + (first_end - blocks[0][0] - 3) // 2),
                 ("in the checksum", frame_end - 2)]
        for where, off in flips:
            bad = bytearray(data)
            bad[off] ^= 0xFF
            path = write_bytes(os.path.join(d, "flip-%d.zst" % off), bytes(bad))
            expect_corrupt("memprint recording with byte %d flipped (%s)" % (off, where), path)

        # Every byte of a middle block flipped, one at a time. A few bytes of
        # zstd's encoding decode the same when flipped (a block's table
        # modes byte 0x00, predefined tables, read as 0xff: "repeat the
        # previous tables", which were the same predefined ones), so the
        # content checksum agrees and no reader can tell: for those the
        # report must be the untouched file's. Every other flip is reported
        # corrupt. (Flipping only the middle byte failed about 1 run in 6:
        # it is near the modes byte, and some recordings put it there.)
        silent = []
        for off in range(mid[0] + 3, mid[1]):
            bad = bytearray(data)
            bad[off] ^= 0xFF
            path = write_bytes(os.path.join(d, "flip-%d.zst" % off), bytes(bad))
            rc, rep, err = memprint_json(path)
            if rc == 0 and not err:
                silent.append(off)
                check(rep is not None and rep == full_rep,
                      "memprint recording with byte %d flipped (in a middle block): read without a message, "
                      "so it decodes to the same report" % off)
            else:
                expect_corrupt("memprint recording with byte %d flipped (in a middle block)" % off, path)
            os.unlink(path)
        size = mid[1] - mid[0] - 3
        check(len(silent) * 10 <= size,
              "middle block: at most a tenth of its %d bytes decode the same flipped (%s)" % (size, silent))

# =====================================================================
# memrec
# =====================================================================


def memrec_error(what, args, code, subject, patterns):
    """memrec in an empty directory must fail without leaving a file there."""
    cwd = os.path.join(d, "cwd-" + re.sub(r"\W+", "-", what))
    os.mkdir(cwd)
    expect_error(what, [MEMREC] + args, code, "memrec", subject, patterns, cwd=cwd)
    check_eq(files_in(cwd), [], "%s: no file left in the directory" % what)


memrec_error("memrec unknown option", ["--no-such-option", "true"], 2, "--no-such-option", [r"unknown option"])
memrec_error("memrec unknown short option", ["-Z", "true"], 2, "-Z", [r"unknown option"])
for bad in ("abc", "-5", "10x", "2h"):
    memrec_error("memrec --max-wait %s" % bad, ["--max-wait", bad, "true"], 2, bad, [r"invalid --max-wait"])
rc, _, err = run_tool([MEMREC])
if no_crash("memrec without a program", rc):
    check_eq(rc, 2, "memrec without a program: exit status")
    check(bool(err) and err[0].startswith("usage: memrec"), "memrec without a program: usage on stderr")

memrec_error("memrec missing program by path", ["./no-such-program"], 127, "./no-such-program",
             [r"no such file|not found"])
memrec_error("memrec missing program on PATH", ["no-such-program-memrec-test"], 127, "no-such-program-memrec-test",
             [r"not found"])
memrec_error("memrec directory as program", [d], 126, d, [r"directory"])

noexec = write_bytes(os.path.join(d, "not-executable"), b"#!/bin/sh\nexit 0\n")
os.chmod(noexec, 0o644)  # no x bit: not even root may run it
memrec_error("memrec non-executable file", [noexec], 126, noexec, [r"permission denied|not executable"])

junk = write_bytes(os.path.join(d, "junk-executable"), b"\x00\x01junk, neither ELF nor script\n")
os.chmod(junk, 0o755)
memrec_error("memrec executable of unknown format", [junk], 126, junk, [r"exec format"])

# A statically linked program: nothing can be preloaded into it.
static_src = write_bytes(os.path.join(d, "static.c"),
                         b"#include <stdlib.h>\nint main(void) { void *p = malloc(10001); free(p); return 0; }\n")
static_bin = os.path.join(d, "static-prog")
try:
    built = run(["cc", "-static", "-o", static_bin, static_src], timeout=60).returncode == 0
except (OSError, subprocess.TimeoutExpired):
    built = False
if not built:
    skip_part("statically linked program", "cannot link statically here (no libc.a?)")
else:
    memrec_error("memrec statically linked program", [static_bin], None, static_bin, [r"statically linked"])
    memrec_error("memrec statically linked program with -o", ["-o", "out.zst", static_bin], None, static_bin,
                 [r"statically linked"])

# -o onto an existing file: refuse, leave it as it was, do not run the program.
existing = write_bytes(os.path.join(d, "existing.zst"), b"precious data\n")
os.utime(existing, (1000000000, 1000000000))
ran = os.path.join(d, "ran-existing")
expect_error("memrec -o existing file", [MEMREC, "-o", existing, "sh", "-c", "touch '%s'" % ran], 1, "memrec",
             existing, [r"exists"])
with open(existing, "rb") as f:
    check(f.read() == b"precious data\n" and os.stat(existing).st_mtime == 1000000000,
          "memrec -o existing file: the file is untouched")
check(not os.path.exists(ran), "memrec -o existing file: the program did not run")

# -o onto a symlink (to an existing file, and dangling): refuse, follow nothing.
target = write_bytes(os.path.join(d, "link-target"), b"precious target\n")
link = os.path.join(d, "link.zst")
os.symlink(target, link)
expect_error("memrec -o symlink", [MEMREC, "-o", link, "true"], 1, "memrec", link, [])
with open(target, "rb") as f:
    check(f.read() == b"precious target\n", "memrec -o symlink: the link's target is untouched")
check(os.path.islink(link), "memrec -o symlink: the link is still a link")
dangling = os.path.join(d, "dangling.zst")
dtarget = os.path.join(d, "dangling-target")
os.symlink(dtarget, dangling)
expect_error("memrec -o dangling symlink", [MEMREC, "-o", dangling, "true"], 1, "memrec", dangling, [])
check(not os.path.exists(dtarget), "memrec -o dangling symlink: nothing created through the link")

ran = os.path.join(d, "ran-nodir")
nodir = os.path.join(d, "no-such-dir", "out.zst")
expect_error("memrec -o in a missing directory", [MEMREC, "-o", nodir, "sh", "-c", "touch '%s'" % ran], 1, "memrec",
             nodir, [r"no such file"])
check(not os.path.exists(ran), "memrec -o in a missing directory: the program did not run")

# The program's exit status is memrec's.
out = os.path.join(d, "exit3.zst")
rc, _, err = run_tool([MEMREC, "-q", "-o", out, "sh", "-c", "exit 3"])
if no_crash("memrec sh -c 'exit 3'", rc):
    check_eq(rc, 3, "memrec sh -c 'exit 3': exit status passed through")
    check_eq(err, [], "memrec sh -c 'exit 3': nothing on stderr with -q")
    rc, rep, err = memprint_json(out)
    check(rc == 0 and rep is not None and rep.get("complete") and not err,
          "memrec sh -c 'exit 3': the recording is complete and reads without a message %r" % err)

# A program killed by a signal: memrec exits 128+N, the recording says so
# and holds the allocations made before.
if SLOW is None:
    skip_part("killed program", "no C compiler to build tests/progs/slow.c")
else:
    for end, sig in (("kill", signal.SIGKILL), ("segv", signal.SIGSEGV)):
        what = "memrec on a program killed by %s" % sig.name
        out = os.path.join(d, "killed-%s.zst" % end)
        rc, _, err = run_tool([MEMREC, "-q", "-o", out, SLOW, "200", end])
        if rc is None:
            check(False, "%s: hangs (killed after %d s)" % (what, TIMEOUT))
            continue
        check_eq(rc, 128 + sig.value, "%s: exit status 128+%d" % (what, sig.value))
        rc, rep, err = memprint_json(out)
        check_eq(rc, 0, "%s: memprint exit status" % what)
        check(any("did not end normally" in l for l in err), "%s: memprint warns it did not end normally %r" % (what, err))
        check(all(l.startswith("memprint: warning: ") for l in err), "%s: only warnings on stderr" % what)
        check(rep is not None and rep["allocations"] > 0, "%s: allocations before the crash are in the report (%s)" %
              (what, rep and rep["allocations"]))

    # memrec itself killed: the file stops at its last flush.
    what = "recording of a killed memrec"
    out = os.path.join(d, "memrec-killed.zst")
    p = subprocess.Popen([MEMREC, "-q", "-o", out, SLOW, "2000"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(0.5)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    try:
        # The program runs on without memrec; end it (memrec's process group).
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    check(os.path.exists(out), "%s: the file exists" % what)
    rc, rep, err = memprint_json(out)
    if no_crash("%s: memprint" % what, rc):
        check_eq(rc, 3, "%s: memprint exit status (incomplete)" % what)
        check_eq(len(err), 1, "%s: one warning %r" % (what, err))
        line = err[0] if err else ""
        check(line.startswith("memprint: warning: ") and "'%s'" % out in line and
              re.search(r"truncated|ends before", line) is not None,
              "%s: the warning names the file and says it stops early: %r" % (what, line))
        check(rep is not None and not rep.get("complete") and rep["allocations"] > 0,
              "%s: incomplete, with allocations (%s)" % (what, rep and rep["allocations"]))

# A recording read from a FIFO (a process substitution, a pipe from ssh):
# the modes that read it twice (a second pass, --massif, --timeline) work
# on a copy memprint makes, instead of waiting for a writer that has gone.
if os.path.exists(os.path.join(d, "slow.zst")):
    fifo = os.path.join(d, "input.fifo")
    os.mkfifo(fifo)
    want = memprint_json(os.path.join(d, "slow.zst"))[1]
    for mode in (["--json"], ["--massif", os.path.join(d, "fifo.massif")], ["--timeline"],
                 ["--function", "main", "--json"]):
        what = "memprint %s FIFO" % " ".join(mode)
        feeder = subprocess.Popen(["sh", "-c", "cat \"$0\" > \"$1\"", os.path.join(d, "slow.zst"), fifo])
        rc, out, err = run_tool([MEMPRINT] + mode + [fifo])
        feeder.wait()
        if no_crash(what, rc):
            check_eq(rc, 0, "%s: exit status (no hang: %r)" % (what, err))
        if mode == ["--json"] and rc == 0:
            got = json.loads(b"".join(out) if isinstance(out, list) else out)
            check_eq(got.get("allocations"), want.get("allocations") if want else None,
                     "%s: the figures of the file itself" % what)
    check(not [f for f in os.listdir(os.environ.get("TMPDIR", "/tmp")) if f.startswith("memprint-")],
          "memprint FIFO: no temporary copy left behind")

if not failures:
    shutil.rmtree(d, ignore_errors=True)
else:
    print("files of this run kept in %s" % d)
done()
