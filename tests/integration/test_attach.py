# SPDX-License-Identifier: MIT
"""memrec --pid: attach to a running multi-threaded program (which loads a
library after the attach), record, detach, and check that the file holds
every thread's and the late library's allocations, that the program runs
on unharmed with the same descriptors and threads, that attaching again
works, 20 times in a row; and the errors."""
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

PLUGIN = os.path.join(PROGS, "libplugin.so")


def start_target():
    p = subprocess.Popen([prog("attachee"), PLUGIN], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = p.stdout.readline().decode().strip()
    if line != "ready":
        p.kill()
        raise RuntimeError("attachee did not start: %r" % line)
    return p


def fds(pid):
    return sorted(os.listdir("/proc/%d/fd" % pid), key=int)


def tasks(pid):
    return len(os.listdir("/proc/%d/task" % pid))


def record_until_it_ends(proc, out, name, want_status):
    """memrec --pid on `proc` until `proc` ends: waits until memrec says it
    is attached, lets it record 0.3 s, sends the program SIGTERM. Checks
    both exit statuses and that the file is complete, ends "exited" and
    has the program's status (memrec is not its parent: the recorder says
    it). Returns the JSON report."""
    m, _ = start_attach(proc.pid, out)
    time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    check_eq(proc.wait(timeout=30), want_status, "%s: the program's exit status" % name)
    try:
        m.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        m.kill()
        m.wait()
    check_eq(m.returncode, 0, "%s: memrec exit status" % name)
    j = report_json(out, top=10)
    check(j["complete"] and j["end"] == "exited", "%s: complete, exited (%s)" % (name, j["end"]))
    check_eq(j["exit_value"], want_status, "%s: its exit status, from the recorder" % name)
    return j


def site_calls(j, function):
    return sum(e["calls"] for e in j["sections"]["most_calls"] if any(f["function"] == function for f in e["frames"]))


d = tmpdir()
target = start_target()
pid = target.pid
try:
    time.sleep(0.2)
    fds0, tasks0 = fds(pid), tasks(pid)

    # First attach; the library is loaded after it.
    out = os.path.join(d, "first.zst")
    rc, err = attach(pid, out, 1.0, before_stop=lambda: (time.sleep(0.3), target.send_signal(signal.SIGUSR1)))
    check_eq(rc, 0, "first attach: memrec exit status")
    m = re.search(r"stopped for ([0-9.]+) ms", err)
    check(m is not None, "first attach: memrec says how long the program was stopped")
    if m:
        print("note: the program was stopped for %s ms" % m.group(1))
        check(float(m.group(1)) < 1000, "first attach: stopped for less than 1 s")
    j = report_json(out, top=50)
    check(j["attached"], "first attach: the file says it was attached")
    check_eq(j["end"], "detached", "first attach: the process was still running")
    check(j["complete"], "first attach: recording complete")
    check(j["threads"] >= 5, "first attach: main thread and four workers (%d threads)" % j["threads"])
    check(site_calls(j, "worker") + site_calls(j, "worker_alloc") > 1000, "first attach: the workers' allocations")
    check(site_calls(j, "plugin_work") > 0, "first attach: the library loaded after the attach is recorded")
    check_eq(j["mapped_peak_bytes"], 1 << 20, "first attach: the 1 MiB the program maps after the attach")
    check(any(any((f.get("module") or "").endswith("libplugin.so") for f in e["frames"])
              for e in j["sections"]["most_calls"]), "first attach: frames in libplugin.so")
    # The allocator's own count at attach: at least the workers' kept blocks
    # (4 threads x 64 blocks of 100-103 bytes), far below a gigabyte.
    check(25600 <= j["baseline_in_use_bytes"] < (1 << 30) and j["baseline_arena_bytes"] >= j["baseline_in_use_bytes"],
          "first attach: mallinfo2 baseline (%d in use, %d held)" % (j["baseline_in_use_bytes"], j["baseline_arena_bytes"]))
    _, text, _ = report_text(out)
    check("attached to the running process" in text, "first attach: memprint says it was attached")
    check("heap in use at attach" in text, "first attach: memprint prints the baseline")

    time.sleep(0.2)
    check(target.poll() is None, "after detach: the program still runs")
    check_eq(fds(pid), fds0, "after detach: the program's descriptors are the ones it had")
    check_eq(tasks(pid), tasks0, "after detach: the program's threads are the ones it had")

    # Attach again, and then 20 times in a row: every one yields data.
    out = os.path.join(d, "second.zst")
    rc, err = attach(pid, out, 0.5)
    check_eq(rc, 0, "second attach: memrec exit status")
    j = report_json(out, top=50)
    check(j["allocations"] > 1000 and site_calls(j, "plugin_work") > 0, "second attach: workers and library recorded")
    good = 0
    for i in range(20):
        out = os.path.join(d, "cycle%02d.zst" % i)
        rc, err = attach(pid, out, 0.15)
        j = report_json(out, top=10) if rc == 0 else None
        if rc == 0 and j["allocations"] > 0 and j["complete"]:
            good += 1
        else:
            print("cycle %d: status %d, %s" % (i, rc, err.strip()))
    check_eq(good, 20, "20 attach/detach cycles, each with data")
    time.sleep(0.2)
    check_eq(fds(pid), fds0, "after 22 attaches: the program's descriptors are the ones it had")
    check_eq(tasks(pid), tasks0, "after 22 attaches: the program's threads are the ones it had")

    # The target ends while recorded: the file is complete and memrec exits.
    # The program checks its own blocks and exits 0; the recorder's on_exit
    # handler, registered after the first attach, gives the status.
    j = record_until_it_ends(target, os.path.join(d, "ends.zst"), "target ended while recorded", 0)
    # Its CPU time over the recording: what the recorder read as it exited
    # minus what /proc said at the attach (its workers ran meanwhile).
    check(0 < j["cpu_user_ns"] + j["cpu_sys_ns"] <= (j["runtime_ms"] + 50) * 2 * 1000000,
          "target ended while recorded: its CPU time over the recording (%d + %d ns in %d ms)"
          % (j["cpu_user_ns"], j["cpu_sys_ns"], j["runtime_ms"]))
finally:
    if target.poll() is None:
        target.kill()
        target.wait()

# A process that ends by _exit while recorded (tests/progs/busy with
# "_exit": on SIGTERM its threads free every block they keep, then
# _exit(7)). _exit skips the destructor that sends the last events: the
# recorder hooks it when attached too, so the file has every free up to
# the end (nothing allocated while recorded is left) and the status.
busy = subprocess.Popen([prog("busy"), "2", os.path.join(d, "busy.count"), "_exit"], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE)
try:
    check_eq(busy.stdout.readline().decode().strip(), "ready", "busy _exit: started")
    j = record_until_it_ends(busy, os.path.join(d, "exit.zst"), "busy _exit", 7)
    check(j["allocations"] > 1000, "busy _exit: its threads were recorded (%d allocations)" % j["allocations"])
    check_eq((j["leaked_bytes"], j["lost_events"]), (0, 0),
             "busy _exit: every block made while recorded was freed in the file, no event lost")
finally:
    if busy.poll() is None:
        busy.kill()
        busy.wait()


# Errors: one line, non-zero exit, never a hang.
def error_of(args):
    r = run([MEMREC] + args, timeout=30)
    return r.returncode, r.stderr.decode().strip()


rc, err = error_of(["--pid", "999999999"])
check(rc != 0 and "no such process" in err and err.count("\n") == 0, "no such process: %r" % err)
rc, err = error_of(["--pid", "abc"])
check(rc == 2 and "invalid process id" in err, "invalid pid: %r" % err)
rc, err = error_of(["--pid", str(os.getpid()), prog("chain")])
check(rc == 2 and "not both" in err, "--pid with a program: %r" % err)

# A tracer already attached.
sleeper = subprocess.Popen(["sleep", "30"])
tracer = subprocess.Popen(["strace", "-qq", "-o", "/dev/null", "-p", str(sleeper.pid)], stderr=subprocess.DEVNULL) \
    if os.path.exists("/usr/bin/strace") else None
if tracer:
    time.sleep(0.5)
    rc, err = error_of(["--pid", str(sleeper.pid)])
    check(rc != 0 and "already tracing" in err, "traced process: %r" % err)
    tracer.kill()
    tracer.wait()
else:
    skip_part("already-traced process", "strace is not installed")

# A static executable: no C library to load the recorder with.
src = os.path.join(d, "static.c")
with open(src, "w") as f:
    f.write("#include <unistd.h>\nint main(void) { sleep(30); return 0; }\n")
static_bin = os.path.join(d, "static-prog")
if run(["cc", "-static", "-o", static_bin, src], timeout=60).returncode == 0:
    sp = subprocess.Popen([static_bin])
    time.sleep(0.2)
    rc, err = error_of(["--pid", str(sp.pid)])
    check(rc != 0 and "static" in err, "static executable: %r" % err)
    sp.kill()
    sp.wait()
else:
    skip_part("static executable", "cannot link statically here")

# Another user's process, when we can run memrec as another user.
if os.geteuid() == 0 and os.path.exists("/usr/bin/setpriv"):
    r = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", MEMREC, "--pid", str(sleeper.pid)],
            timeout=30)
    rc, err = r.returncode, r.stderr.decode().strip()
    if "Permission denied" in err and "memrec" not in err:
        skip_part("another user's process", "user 65534 cannot run memrec from this build directory")
    else:
        check(rc != 0 and "another user" in err, "another user's process: %r" % err)
else:
    skip_part("another user's process", "not root, or no setpriv: the check needs a second user")
# Two memrec attaching at once: one records; the other says that memrec
# is there, never that a debugger is or that a capability is missing.
for n in range(3):
    bz = subprocess.Popen([prog("busy"), "1", os.path.join(d, "two%d.count" % n)], stdout=subprocess.PIPE)
    check_eq(bz.stdout.readline(), b"ready\n", "two memrec, run %d: the program started" % (n + 1))
    ms = [subprocess.Popen([MEMREC, "-q", "--pid", str(bz.pid), "-o", os.path.join(d, "two%d-%d.zst" % (n, k))],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE) for k in range(2)]
    # No fixed pause: the loser ends by itself; the winner is stopped once
    # its file has grown (it attached and records).
    outs = [os.path.join(d, "two%d-%d.zst" % (n, k)) for k in range(2)]
    deadline = time.time() + 60
    while time.time() < deadline and all(m.poll() is None for m in ms):
        time.sleep(0.02)
    for m, out in zip(ms, outs):
        while time.time() < deadline and m.poll() is None and not (os.path.exists(out) and os.path.getsize(out) > 0):
            time.sleep(0.02)
        if m.poll() is None:
            m.send_signal(signal.SIGINT)
    errs = [m.communicate(timeout=60)[1].decode().strip() for m in ms]
    rcs = sorted(m.returncode for m in ms)
    check_eq(rcs, [0, 1], "two memrec, run %d: one recorded, one refused (%r)" % (n + 1, errs))
    refused = [e for m, e in zip(ms, errs) if m.returncode == 1]
    check(len(refused) == 1 and re.search(r"another memrec \(pid \d+\) is attaching to it|memrec is already "
                                          r"recording it", refused[0]) is not None,
          "two memrec, run %d: the refusal names memrec: %r" % (n + 1, refused))
    bz.send_signal(signal.SIGTERM)
    check_eq(bz.wait(timeout=60), 0, "two memrec, run %d: the program ends with its own status" % (n + 1))

print("note: kernel.yama.ptrace_scope and a missing CAP_SYS_PTRACE cannot be provoked on this machine "
      "(no Yama, tests run as root); the messages are in inject.c")
sleeper.kill()
sleeper.wait()

done()
