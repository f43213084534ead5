# SPDX-License-Identifier: MIT
"""memrec killed (SIGKILL) at any instant of an attach or a detach leaves
the program running, unchanged (docs/attach.md, "Guarantees"): the
injected calls return through a trampoline that puts the thread's
registers back itself, so nothing depends on memrec being alive.

tests/progs/busy (two threads of malloc, realloc and free, checking every
block it keeps) is attached to, and memrec is killed at 30 instants: 24
spread over the first 60 ms of `memrec --pid` (finding the C library,
stopping the thread, the dlopen, dlsym and memrec_attach calls) and 6 over
the detach. After each kill the program must keep running at a rate near
its own, get back to the threads and descriptors it had (the recorder,
finding memrec gone, disarms itself), print nothing, and end on SIGTERM
with status 0 (no block it kept was changed)."""
import os
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

d = tmpdir()


instants = [("attach", 0.0025 * i) for i in range(24)] + [("detach", 0.005 * i) for i in range(6)]
alive = 0
for n, (phase, delay) in enumerate(instants):
    what = "kill %d (%s + %.1f ms)" % (n + 1, phase, delay * 1000)
    counter = os.path.join(d, "c%d" % n)
    p = subprocess.Popen([prog("busy"), "2", counter], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.stdout.readline() != b"ready\n" or not wait_for(lambda: busy_rounds(counter, 2) > 100):
        check(False, "%s: the program started" % what)
        p.kill()
        continue
    nthreads, before_fds = proc_threads(p.pid), proc_fds(p.pid)
    out = os.path.join(d, "r%d.zst" % n)
    m = subprocess.Popen([MEMREC, "--pid", str(p.pid), "-o", out], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    if phase == "detach":
        # Attached: memrec prints its line, then Ctrl+C, then the kill.
        line = m.stderr.readline()
        if b"attached" not in line:
            check(False, "%s: memrec attached first: %r" % (what, line))
        time.sleep(0.2)
        m.send_signal(signal.SIGINT)
    time.sleep(delay)
    m.kill()
    m.wait()
    a = busy_rounds(counter, 2)
    time.sleep(0.3)
    ok = busy_rounds(counter, 2) > a
    check(ok, "%s: the program runs on" % what)
    back = wait_for(lambda: proc_threads(p.pid) == nthreads and proc_fds(p.pid) == before_fds)
    check(back, "%s: its threads (%d, %d before) and descriptors are its own again" %
          (what, proc_threads(p.pid), nthreads))
    p.send_signal(signal.SIGTERM)
    try:
        o, e = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        o, e = p.communicate()
    check_eq((p.returncode, o, e), (0, b"", b""), "%s: it ends on SIGTERM with status 0, its blocks intact, "
             "nothing printed" % what)
    alive += ok and back and p.returncode == 0
check_eq(alive, len(instants), "targets alive and unchanged after memrec was killed")
done()
