# SPDX-License-Identifier: MIT
"""Shared helpers of the integration tests: run memrec and memprint from
the build tree, parse memprint --json, and report checks the way ctest
understands (exit 0 = pass, 77 = skipped, anything else = fail).

A skip says why on a line of its own, 'SKIP: <reason>' for the whole test
(skip()) and 'SKIP <what> (skipped: <reason>)' for a group of checks
(skip_part()); scripts/test.sh collects these lines from ctest's log and,
with every dependency installed (CI), fails the run on any skipped test
unless MEMREC_ALLOW_SKIP=1. A skip after a failed check is a failure.

check_timing() is a check of a timing assumption (a wall-clock limit on a
shared machine): with MEMREC_TIMING_CHECKS=0 it is printed and not
counted; tests/CMakeLists.txt runs such tests that way once, and once
more with the timing checks on under the ctest label `timing`, which
scripts/test.sh repeats until it passes (up to three runs)."""
import atexit
import json
import os
import re
import resource
import signal
import struct
import subprocess
import sys
import tempfile
import time

BUILD = os.environ.get("MEMREC_BUILD_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "build"))
SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MEMREC = os.path.join(BUILD, "memrec")
MEMPRINT = os.path.join(BUILD, "memprint")
PROGS = os.path.join(BUILD, "tests", "progs")
SKIP = 77

failures = []
skipped = []


def _descendants(pid):
    """The processes below `pid`, children before their children."""
    out = []
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for t in tasks:
        try:
            with open("/proc/%d/task/%s/children" % (pid, t)) as f:
                kids = [int(k) for k in f.read().split()]
        except (OSError, ValueError):
            continue
        for k in kids:
            out.append(k)
            out.extend(_descendants(k))
    return out


def _reap_left_behind():
    """A test that stopped early (a failed check, an exception) must not
    leave its programs running: the next tests would share the machine
    with a busy loop. Everything still below this process is killed."""
    for pid in reversed(_descendants(os.getpid())):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


atexit.register(_reap_left_behind)


def check(cond, what):
    """Record one named check; print it either way."""
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
    return cond


def check_eq(actual, expected, what):
    return check(actual == expected, "%s: %r (expected %r)" % (what, actual, expected))


def skip_part(what, why):
    """A group of checks this machine cannot run: named with its reason,
    printed, and counted in the summary, so a pass that skipped something
    says so instead of looking like a full pass."""
    name = "%s (skipped: %s)" % (what, why)
    print("SKIP " + name)
    skipped.append(name)


def check_timing(cond, what):
    """A check of a timing assumption (a wall-clock limit): a check, unless
    MEMREC_TIMING_CHECKS=0, where it is printed as a note only (the test's
    instance labelled `timing` checks it)."""
    if os.environ.get("MEMREC_TIMING_CHECKS", "1") == "0":
        print("note (timing, not counted here): %s %s" % ("ok" if cond else "over", what))
        return cond
    return check(cond, "timing: " + what)


def done():
    if skipped:
        print("%d group(s) of checks skipped: %s" % (len(skipped), "; ".join(skipped)))
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("all checks passed" + (" but %d group(s) skipped" % len(skipped) if skipped else ""))
    sys.exit(0)


def skip(why):
    """Skip the whole test, printing 'SKIP: why' (scripts/test.sh lists
    that line). After a failed check this is a failure: the checks that
    ran and failed are listed and the exit status is 1, never 77."""
    if failures:
        print("SKIP requested (%s) after %d failed check(s): a failure, not a skip" % (why, len(failures)))
        for f in failures:
            print("  failed: " + f)
        sys.exit(1)
    print("SKIP: " + why)
    sys.exit(SKIP)


def wait_for(pred, seconds=20, step=0.05):
    """Polls `pred` until it holds or `seconds` pass; its last answer."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(step)
    return bool(pred())


def busy_rounds(counter, nthreads=1):
    """The rounds tests/progs/busy.c's threads counted so far in the
    shared file `counter` (one 64-byte line per thread)."""
    with open(counter, "rb") as f:
        data = f.read(64 * nthreads)
    return sum(struct.unpack_from("<Q", data, 64 * i)[0] for i in range(nthreads))


def cpu_seconds(pid):
    """utime + stime of the whole process, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_fds(pid):
    """The process's descriptors and what each names."""
    out = {}
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            out[fd] = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            pass
    return out


def proc_threads(pid):
    return len(os.listdir("/proc/%d/task" % pid))


def tmpdir():
    return tempfile.mkdtemp(prefix="memrec-test-")


def prog(name):
    return os.path.join(PROGS, name)


def run(cmd, **kw):
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    kw.setdefault("timeout", 120)
    return subprocess.run(cmd, **kw)


def record(argv, out, extra=(), env=None, cwd=None):
    """memrec -q -o out argv...; returns the CompletedProcess."""
    return run([MEMREC, "-q", "-o", out] + list(extra) + ["--"] + list(argv), env=env, cwd=cwd)


def start_attach(pid, out, extra=(), exact=True):
    """memrec [extra] --pid PID -o OUT, started: returns (the memrec
    process, its first line of stderr) once memrec says it is attached, or
    has ended, or 20 s have passed. `exact`: with --max-wait none, so that
    a memrec slowed down by a loaded machine (or ASan) never drops events
    past the default bound of 100 ms: the tests check exact figures."""
    wait = ["--max-wait", "none"] if exact else []
    m = subprocess.Popen([MEMREC] + wait + list(extra) + ["--pid", str(pid), "-o", out], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    deadline = time.time() + 20
    first = b""
    while time.time() < deadline and m.poll() is None:
        first = m.stderr.readline()
        if b"attached to process" in first or first == b"":
            break
    return m, first


def attach(pid, out, seconds, extra=(), before_stop=None):
    """start_attach(), then before_stop, lets it record `seconds`, then
    Ctrl+C. Returns (exit status, stderr text); -1 when memrec hung after
    SIGINT (killed)."""
    m, first = start_attach(pid, out, extra)
    if before_stop:
        before_stop()
    time.sleep(seconds)
    m.send_signal(signal.SIGINT)
    try:
        rest = m.communicate(timeout=30)[1]
    except subprocess.TimeoutExpired:
        m.kill()
        m.wait()
        return -1, first.decode() + "memrec hung after SIGINT"
    return m.returncode, first.decode() + rest.decode()


def report_json(path, top=20, builtin_suppressions=False):
    """memprint --json. The figures the tests derive by construction count
    every leak, glibc's and the loader's too, so memprint's built-in
    suppressions are off unless asked for (test_gate.py tests them)."""
    extra = [] if builtin_suppressions else ["--no-builtin-suppressions"]
    r = run([MEMPRINT, "--json", "-n", str(top)] + extra + [path])
    if r.returncode != 0:
        raise RuntimeError("memprint failed on %s: %s" % (path, r.stderr.decode()))
    return json.loads(r.stdout.decode())


def report_text(path, top=20):
    r = run([MEMPRINT, "-n", str(top), path])
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def marker_line(relpath, marker):
    """Line number of the line carrying /* marker */ in a source file."""
    with open(os.path.join(SRC, relpath)) as f:
        for i, line in enumerate(f, 1):
            if "/* %s */" % marker in line:
                return i
    raise KeyError(marker)


def has_frame(entry, function, file_suffix=None, line=None, inlined=None):
    for fr in entry["frames"]:
        if fr["function"] != function:
            continue
        if file_suffix and not (fr["file"] or "").endswith(file_suffix):
            continue
        if line is not None and fr["line"] != line:
            continue
        if inlined is not None and fr["inlined"] != inlined:
            continue
        return True
    return False


# Cost type (memprint --cost) -> the summary's field in memprint --json: the
# figure an export of that cost must sum to.
SUMMARY_FIELD = {
    "calls": "allocations",
    "temporary": "temporary",
    "peak": "peak_heap_bytes",
    "leaked": "leaked_bytes",
    "allocated": "allocated_bytes",
    "mapped": "mapped_peak_bytes",
}


# ---- running a tool on hostile input: runaway memory shows as a check ----

def is_asan(binary):
    """True when `binary` was built with AddressSanitizer."""
    with open(binary, "rb") as f:
        return b"__asan_init" in f.read()


def memory_cap(gib, asan):
    """A preexec_fn capping the child's address space at `gib` GiB, so that
    a size taken from a bad file shows as a failed check, not as a machine
    in distress. ASan reserves terabytes of address space: its binaries are
    capped through ASAN_OPTIONS instead (capped_env)."""
    def cap():
        if not asan:
            resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))
    return cap


def capped_env(gib, asan):
    """The environment for a child capped at `gib` GiB: under ASan, its
    allocator returns NULL above that instead of the child being killed."""
    env = dict(os.environ)
    if asan:
        extra = "allocator_may_return_null=1:max_allocation_size_mb=%d" % (gib << 10)
        env["ASAN_OPTIONS"] = (env["ASAN_OPTIONS"] + ":" + extra) if env.get("ASAN_OPTIONS") else extra
    return env
