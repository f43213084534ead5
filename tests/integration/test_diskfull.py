# SPDX-License-Identifier: MIT
"""A full disk must never freeze the program (docs/capture.md, "When
writing fails"). memrec records tests/progs/busy into a 1 MiB tmpfs, launched
and with --pid: once the disk is full, memrec says so once, keeps draining
the program's events, the program keeps its pace (rounds per CPU second,
against the same program recorded to a normal disk in the same run) and
ends with its own status, memrec's exit status says the recording failed,
and memprint reads the file up to where the disk filled."""
import json
import os
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

d = tmpdir()


def pace(counter, pid, wall=1.0):
    """(rounds in `wall` seconds, rounds per CPU second of the program)."""
    a, c = busy_rounds(counter), cpu_seconds(pid)
    time.sleep(wall)
    b, dc = busy_rounds(counter), cpu_seconds(pid) - c
    return b - a, (b - a) / dc if dc > 0 else 0.0


def wait_ready(p):
    return p.stdout.readline() == b"ready\n"


full = os.path.join(d, "full")
os.mkdir(full)
mounted = os.geteuid() == 0 and subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", full],
                                                stderr=subprocess.PIPE).returncode == 0
if not mounted:
    skip_part("a full disk", "mounting a 1 MiB tmpfs needs root")
    done()

try:
    # The pace the program keeps under memrec when the disk has room.
    counter = os.path.join(d, "normal.count")
    m = subprocess.Popen([MEMREC, "-q", "-o", os.path.join(d, "normal.zst"), prog("busy"), "1", counter],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check(wait_ready(m), "normal disk: the program started")
    check(wait_for(lambda: busy_rounds(counter) > 1000), "normal disk: the program runs")
    pid = int(subprocess.run(["pgrep", "-f", "-n", counter], stdout=subprocess.PIPE).stdout.split()[0])
    _, normal = pace(counter, pid)
    m.send_signal(signal.SIGTERM)
    m.communicate(timeout=60)
    check(normal > 0, "normal disk: %.0f rounds per CPU second" % normal)

    # ---- launched: memrec busy, into the full disk ----
    out = os.path.join(full, "launch.zst")
    counter = os.path.join(d, "launch.count")
    m = subprocess.Popen([MEMREC, "-o", out, prog("busy"), "1", counter], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    check(wait_ready(m), "launch: the program started")
    pid = int(subprocess.run(["pgrep", "-f", "-n", counter], stdout=subprocess.PIPE).stdout.split()[0])
    filled = wait_for(lambda: os.path.getsize(out) >= 1000 * 1024, 60)
    check(filled, "launch: the disk filled (%d bytes)" % os.path.getsize(out))
    time.sleep(0.3)  # memrec meets the full disk at its next write
    rounds, full_pace = pace(counter, pid)
    check(rounds > 1000, "launch: the program goes on once the disk is full (%d rounds in 1 s)" % rounds)
    check(full_pace >= normal / 3, "launch: at its pace (%.0f rounds per CPU second, %.0f with room)" %
          (full_pace, normal))
    m.send_signal(signal.SIGTERM)
    try:
        _, err = m.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        m.kill()
        _, err = m.communicate()
        check(False, "launch: memrec ends after the program")
    err = err.decode()
    check_eq(m.returncode, 1, "launch: memrec's exit status says the recording failed")
    check_eq(err.count("No space left on device"), 1, "launch: the failure said once: %r" % err)
    check("the program ran on to its end" in err, "launch: the summary says the recording failed: %r" % err)
    r = run([MEMPRINT, "--json", out])
    check_eq(r.returncode, 3, "launch: memprint reads the file, not whole (exit 3)")
    j = json.loads(r.stdout.decode() or "{}")
    check(j.get("complete") is False and j.get("allocations", 0) > 1000,
          "launch: memprint reports what came before (%s allocations)" % j.get("allocations"))
    os.unlink(out)

    # ---- --pid: attached to a running program, into the full disk ----
    counter = os.path.join(d, "attach.count")
    p = subprocess.Popen([prog("busy"), "1", counter], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check(wait_ready(p), "attach: the program started")
    out = os.path.join(full, "attach.zst")
    m, first = start_attach(p.pid, out)
    check(b"attached to process" in first, "attach: memrec attached: %r" % first)
    check(wait_for(lambda: os.path.getsize(out) >= 1000 * 1024, 60),
          "attach: the disk filled (%d bytes)" % os.path.getsize(out))
    time.sleep(0.3)
    rounds, full_pace = pace(counter, p.pid)
    check(rounds > 1000, "attach: the program goes on once the disk is full (%d rounds in 1 s)" % rounds)
    check(full_pace >= normal / 3, "attach: at its pace (%.0f rounds per CPU second, %.0f recorded with room)" %
          (full_pace, normal))
    m.send_signal(signal.SIGINT)
    try:
        _, err = m.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        m.kill()
        _, err = m.communicate()
        check(False, "attach: memrec detaches")
    check_eq(m.returncode, 1, "attach: memrec's exit status says the recording failed")
    check_eq(err.decode().count("No space left on device"), 1, "attach: the failure said once")
    check(p.poll() is None, "attach: the program runs on after the detach")
    p.send_signal(signal.SIGTERM)
    out_p, _ = p.communicate(timeout=60)
    check_eq(p.returncode, 0, "attach: the program ends with its own status")
finally:
    subprocess.run(["umount", "-l", full])
done()
