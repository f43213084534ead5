# SPDX-License-Identifier: MIT
"""memrec --pid on the programs that used to hang or be refused (issue 10):
a single busy thread, 8 busy threads, a non-PIE executable with canonical
PLT entries for malloc and free, programs blocked in read, accept, a futex,
open on a FIFO and inside dlopen, and Debian's python3 where installed.
Each gets attach/detach cycles; after every cycle the detach must have
taken less than a second after SIGINT, the program must have its threads
and descriptors back, and at the end its progress rate must be what it was
before the first attach, its output untouched and its exit status 0.
Also: memrec killed while attached (the recorder disarms itself), a failed
attach leaves no file, and SIGINT while memrec waits for a safe stop.

MEMREC_ATTACH_CYCLES sets the number of cycles per program (default 12;
bench/soak.py runs 100). The wall-clock limits (detach within a second,
the progress rate after the detach) are check_timing(): ctest runs this
test once with them as notes (MEMREC_TIMING_CHECKS=0) and once more as
test_attach_safety_timing, label `timing`, with them checked."""
import os
import signal
import socket
import statistics
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

CYCLES = int(os.environ.get("MEMREC_ATTACH_CYCLES", "12"))
d = tmpdir()


def settled(pid, threads0, fds0, timeout=1.0):
    """Threads and descriptors back to what they were, within `timeout`."""
    end = time.time() + timeout
    while True:
        t, f = proc_threads(pid), proc_fds(pid)
        if (t == threads0 and f == fds0) or time.time() > end:
            return t, f
        time.sleep(0.01)


def rate(counter_file, nthreads, pid, samples=5, window=0.4):
    """Median rounds per second of CPU time the program used, over a few
    windows: what the hooks would cost if they stayed. Per CPU second, not
    per second: the machine is shared, and how much CPU the program gets
    moved by a factor of two between measurements."""
    rates = []
    for _ in range(samples):
        a, c = busy_rounds(counter_file, nthreads), cpu_seconds(pid)
        time.sleep(window)
        dc = cpu_seconds(pid) - c
        if dc > 0.05:
            rates.append((busy_rounds(counter_file, nthreads) - a) / dc)
    return statistics.median(rates) if rates else 0.0


def attach_cycle(pid, out, hold, threads0=None):
    """memrec --pid for `hold` seconds, then SIGINT. Returns (exit status,
    stderr, seconds from SIGINT until the program has `threads0` threads
    again (the recorder's thread ended: the detach is complete), seconds to
    attach)."""
    if os.path.exists(out):
        os.unlink(out)
    t0 = time.time()
    m = subprocess.Popen([MEMREC, "--max-wait", "none", "--pid", str(pid), "-o", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = b""
    deadline = time.time() + 30
    while time.time() < deadline:
        first = m.stderr.readline()
        if b"attached to process" in first or first == b"":
            break
    attached = time.time() - t0
    time.sleep(hold)
    t1 = time.time()
    m.send_signal(signal.SIGINT)
    detached = None
    while threads0 is not None and time.time() < t1 + 10:
        if proc_threads(pid) == threads0:
            detached = time.time() - t1
            break
        time.sleep(0.002)
    try:
        rest = m.communicate(timeout=60)[1]
    except subprocess.TimeoutExpired:
        m.kill()
        m.wait()
        return -1, first.decode() + "memrec hung after SIGINT", 60.0, attached
    if detached is None:
        detached = time.time() - t1
    return m.returncode, first.decode() + rest.decode(), detached, attached


def rate_again(counter, nthreads, before, pid):
    """The rate after a detach; measured again (up to three times) when it
    looks low."""
    after = rate(counter, nthreads, pid)
    for _ in range(3):
        if after > 0.75 * before:
            break
        time.sleep(0.5)
        after = max(after, rate(counter, nthreads, pid))
    return after


def cycles(name, p, n, hold, counter=None, nthreads=1, expect_allocs=True):
    """n attach/detach cycles on the running program p; its progress rate
    per CPU second before and after."""
    pid = p.pid
    time.sleep(0.3)
    threads0, fds0 = proc_threads(pid), proc_fds(pid)
    before = rate(counter, nthreads, pid) if counter else None
    detach_times, attach_times, bad = [], [], []
    allocs = []
    for i in range(n):
        out = os.path.join(d, "%s-%d.zst" % (name, i))
        rc, err, dt, at = attach_cycle(pid, out, hold, threads0)
        detach_times.append(dt)
        attach_times.append(at)
        t, f = settled(pid, threads0, fds0)
        if rc != 0 or "cannot detach" in err or t != threads0 or f != fds0:
            bad.append("cycle %d: rc %d, %d threads (%d before), fds %s (%s before): %s" %
                       (i, rc, t, threads0, sorted(f), sorted(fds0), err.strip()[-300:]))
            if rc != 0:
                break
            continue
        if i in (0, n - 1):
            j = report_json(out, top=3)
            if not (j["complete"] and j["attached"] and j["end"] == "detached"):
                bad.append("cycle %d: file not complete/attached/detached: %r" % (i, j["end"]))
            allocs.append(j["allocations"])
    check(not bad, "%s: %d attach/detach cycles, each exit 0 with threads and descriptors back%s" %
          (name, n, "" if not bad else ": " + bad[0]))
    if detach_times:
        print("note: %s: detach (SIGINT to the end of the recorder's thread) took median %.3f s, max %.3f s; "
              "attach median %.3f s" %
              (name, statistics.median(detach_times), max(detach_times), statistics.median(attach_times)))
        # A second is the promise; a loaded 2-core machine gets some slack
        # on the slowest of many, none on the median.
        check_timing(statistics.median(detach_times) < 1.0 and max(detach_times) < 2.0,
                     "%s: detach completes within a second of SIGINT" % name)
    if expect_allocs:
        check(len(allocs) == 2 and min(allocs) > 0, "%s: first and last recordings hold allocations: %r" % (name, allocs))
    if counter:
        after = rate_again(counter, nthreads, before, pid)
        print("note: %s: %.3g rounds per CPU second before the first attach, %.3g after the last detach" %
              (name, before, after))
        check_timing(after > 0.75 * before, "%s: progress rate after the detach is that of before (within noise)" % name)


def finish(name, p, expect_out, wake=None, sig=signal.SIGTERM):
    if wake:
        wake()
    elif sig:
        p.send_signal(sig)
    try:
        out, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        check(False, "%s: the program ends after the cycles (it hung)" % name)
        return
    check_eq(p.returncode, 0, "%s: the program's exit status" % name)
    check_eq(out.decode(), expect_out, "%s: the program's stdout" % name)
    check_eq(err.decode(), "", "%s: the program's stderr" % name)


def busy(name, exe, nthreads, n):
    counter = os.path.join(d, name + ".count")
    p = subprocess.Popen([prog(exe), str(nthreads), counter], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check_eq(p.stdout.readline(), b"ready\n", "%s: started" % name)
    try:
        cycles(name, p, n, 0.3, counter=counter, nthreads=nthreads)
    finally:
        finish(name, p, "")


# 1. The detach deadlock: one thread, all the time in malloc/free.
busy("busy single thread", "busy", 1, CYCLES)
# 2. Eight busy threads (more than the CPUs).
busy("8 busy threads", "busy", 8, max(CYCLES // 2, 4))
# 3. A non-PIE executable whose malloc and free are canonical PLT stubs.
busy("non-PIE with canonical PLT", "busy_nopie", 1, max(CYCLES // 2, 4))


# 4. Idle programs, blocked in a system call, with stale malloc return
# addresses on their stacks.
def idle(mode, n=3):
    name = "idle in " + mode
    extra = []
    if mode == "open":
        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)
        extra = [fifo]
    elif mode == "dlopen":
        extra = [prog("libidlector.so")]
    p = subprocess.Popen([prog("idle"), mode] + extra, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    port = None
    line = p.stdout.readline()
    expect = ""
    if mode == "accept":
        port = int(line.split()[1])
        line = p.stdout.readline()
    check_eq(line, b"ready\n", "%s: started" % name)
    expect += "done\n"

    def wake():
        if mode == "accept":
            socket.create_connection(("127.0.0.1", port)).close()
        elif mode == "open":
            fd = os.open(fifo, os.O_WRONLY)
            os.close(fd)
        else:
            p.stdin.write(b"x")
            p.stdin.flush()

    try:
        cycles(name, p, n, 0.2, expect_allocs=False)
    finally:
        finish(name, p, expect, wake=wake)


for mode in ("read", "accept", "futex", "open", "dlopen"):
    idle(mode)

# 5. Debian's python3 (a non-PIE executable with canonical PLT entries) in a loop.
py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else None
if py:
    counter = os.path.join(d, "py.count")
    code = ("import mmap,os,struct\n"
            "f=open(%r,'w+b'); f.truncate(4096); m=mmap.mmap(f.fileno(),4096)\n"
            "n=0\n"
            "while True:\n"
            "    x=[bytes(600+i) for i in range(20)]; n+=1\n"
            "    if n%%64==0: struct.pack_into('<Q',m,0,n)\n" % counter)
    p = subprocess.Popen([py, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.5)
    try:
        cycles("python3", p, max(CYCLES // 2, 4), 0.3, counter=counter, nthreads=1)
    finally:
        p.kill()
        out, err = p.communicate()
        check_eq((out, err), (b"", b""), "python3: nothing written to its stdout/stderr")
else:
    print("note: /usr/bin/python3 not installed: python3 attach not checked")

# 6. memrec killed while attached: the recorder in the program disarms
# itself (hooks out, service thread ended, pipe closed) and a new attach works.
counter = os.path.join(d, "killed.count")
p = subprocess.Popen([prog("busy"), "1", counter], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
p.stdout.readline()
try:
    time.sleep(0.3)
    threads0, fds0 = proc_threads(p.pid), proc_fds(p.pid)
    before = rate(counter, 1, p.pid)
    out = os.path.join(d, "killed.zst")
    m = subprocess.Popen([MEMREC, "--max-wait", "none", "--pid", str(p.pid), "-o", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    m.stderr.readline()
    time.sleep(0.3)
    check_eq(proc_threads(p.pid), threads0 + 1, "memrec killed: the recorder's service thread ran while attached")
    m.kill()
    m.wait()
    t, f = settled(p.pid, threads0, fds0, timeout=2.0)
    check_eq((t, f == fds0), (threads0, True), "memrec killed: threads and descriptors back within 2 s")
    after = rate_again(counter, 1, before, p.pid)
    print("note: memrec killed: %.3g rounds per CPU second before, %.3g after" % (before, after))
    check_timing(after > 0.75 * before, "memrec killed: the hooks are gone (progress rate as before)")
    rc, err, dt, at = attach_cycle(p.pid, os.path.join(d, "after-kill.zst"), 0.2)
    check_eq(rc, 0, "memrec killed: a new attach and detach work afterwards")
finally:
    finish("memrec killed", p, "")

# 7. A failed attach leaves no file: the process is recorded already.
p = subprocess.Popen([prog("busy"), "1", os.path.join(d, "twice.count")], stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE)
p.stdout.readline()
try:
    first = os.path.join(d, "twice-1.zst")
    second = os.path.join(d, "twice-2.zst")
    m = subprocess.Popen([MEMREC, "--max-wait", "none", "--pid", str(p.pid), "-o", first], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    m.stderr.readline()
    r = run([MEMREC, "--pid", str(p.pid), "-o", second])
    check(r.returncode != 0 and b"already recording" in r.stderr,
          "second attach refused: %r" % r.stderr.decode().strip())
    check(not os.path.exists(second), "a failed attach leaves no output file")
    m.send_signal(signal.SIGINT)
    m.communicate(timeout=30)
    check_eq(m.returncode, 0, "the first attach detaches normally")
finally:
    finish("attached twice", p, "")

# 8. SIGINT while memrec waits for a safe stop: a thread spinning over
# stale malloc return addresses never looks safe; memrec must give up at
# SIGINT at once, leaving no file and the program as it was.
p = subprocess.Popen([prog("idle"), "spin"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
p.stdout.readline()
try:
    out = os.path.join(d, "spin.zst")
    m = subprocess.Popen([MEMREC, "--max-wait", "none", "--pid", str(p.pid), "-o", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(1.0)
    t = time.time()
    m.send_signal(signal.SIGINT)
    try:
        err = m.communicate(timeout=10)[1]
        waited = time.time() - t
    except subprocess.TimeoutExpired:
        m.kill()
        err, waited = m.communicate()[1], 10.0
    print("note: memrec ended %.2f s after SIGINT: %s" % (waited, err.decode().strip()))
    check(waited < 10.0, "SIGINT while memrec waits for a safe stop ends memrec (%.2f s)" % waited)
    check_timing(waited < 1.0, "SIGINT while memrec waits for a safe stop is answered within a second")
    check_eq(m.returncode, 130, "interrupted attach: exit status")
    check(not os.path.exists(out), "the interrupted attach leaves no output file")
    check_eq(proc_threads(p.pid), 1, "the interrupted attach left the program as it was")
finally:
    finish("spinning", p, "done\n")

# 9. A stopped process is refused with the reason, at once.
p = subprocess.Popen([prog("busy"), "1", os.path.join(d, "stopped.count")], stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE)
p.stdout.readline()
try:
    p.send_signal(signal.SIGSTOP)
    time.sleep(0.1)
    out = os.path.join(d, "stopped.zst")
    r = run([MEMREC, "--pid", str(p.pid), "-o", out], timeout=10)
    check(r.returncode == 1 and b"it is stopped" in r.stderr, "a stopped process is refused: %r" %
          r.stderr.decode().strip())
    check(not os.path.exists(out), "the refused attach leaves no output file")
finally:
    p.send_signal(signal.SIGCONT)
    finish("stopped", p, "")

done()
