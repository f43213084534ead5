# SPDX-License-Identifier: MIT
"""A process killed outright loses nothing (docs/capture.md, "Killed
outright"): memrec reads what the threads' buffers held from the area they
share with it. tests/progs/crasher.c in mode wait makes its known
allocations on two threads and says "ready PID"; the test sends SIGKILL at
once, with the recorder's flush period at its longest (100 ms), so that no
flush round passes between the last allocation and the kill. Every event
before the kill is in the file, exactly once. The same with sampling: the
threads' exact call and byte counts come from the area too. And the area
is untrusted input: a process that hands memrec a forged one (bad
header, slots out of bounds, garbage batches, a file shorter than it
claims, a descriptor that is no file) and dies never crashes or hangs
memrec, and the file stays readable."""
import os
import signal
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

# As in test_crash.py: allocations, temporary, peak, leaked bytes, leaked
# blocks, allocated bytes, without pthread_create's thread vector.
FIGURES = (1510, 0, 160000, 153900, 1010, 213900)
FIELDS = ("allocations", "temporary", "peak_heap_bytes", "leaked_bytes", "leaked_allocations", "allocated_bytes")
SLOW_FLUSH = dict(os.environ, MEMREC_FLUSH_MS="100")


def start_and_kill(cmd, what):
    """Run cmd (memrec ... crasher wait), SIGKILL the program as soon as
    it says ready; returns memrec's exit status, or None on a timeout."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=SLOW_FLUSH, cwd=d)
    line = p.stdout.readline().decode()
    check(line.startswith("ready "), "%s: the program says it is ready: %r" % (what, line))
    if line.startswith("ready "):
        os.kill(int(line.split()[1]), signal.SIGKILL)
    try:
        p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        check(False, "%s: memrec ended within 60 s" % what)
        return None
    return p.returncode


def check_figures(out, what, sampled=False):
    j = report_json(out, top=100)
    dtv = [e for e in j["sections"]["most_calls"]
           if any("pthread_create" in (f["function"] or "") for f in e["frames"])]
    if sampled:
        # Only the counts are exact: every call and byte, pthread_create's included.
        check_eq(j["allocations"], FIGURES[0] + 1, "%s: every allocation counted" % what)
        check_eq((j["end"], j["exit_value"]), ("signaled", signal.SIGKILL), "%s: how the process ended" % what)
        return
    check_eq(sum(e["calls"] for e in dtv), 1, "%s: one thread-vector calloc in pthread_create" % what)
    dtv_bytes = sum(e["allocated_bytes"] for e in dtv)
    less = {"allocations": 1, "leaked_allocations": 1, "leaked_bytes": dtv_bytes, "allocated_bytes": dtv_bytes}
    for field, exp in zip(FIELDS, FIGURES):
        check_eq(j[field] - less.get(field, 0), exp, "%s: %s" % (what, field))
    check_eq((j["end"], j["exit_value"]), ("signaled", signal.SIGKILL), "%s: how the process ended" % what)
    check_eq(j["unmatched_frees"], 0, "%s: every free matched (nothing twice)" % what)
    last = [e for e in j["sections"]["most_leaked"] if has_frame(e, "site_last")]
    check_eq(sum(e["leaked_bytes"] for e in last), 9000, "%s: the 3 blocks made just before the kill" % what)
    other = [e for e in j["sections"]["most_leaked"] if has_frame(e, "site_thread")]
    check_eq(sum(e["leaked_bytes"] for e in other), 4900, "%s: the other thread's blocks" % what)


d = tmpdir()

what = "crasher wait, killed from outside"
out = os.path.join(d, "killed.zst")
rc = start_and_kill([MEMREC, "-q", "-o", out, "--", prog("crasher"), "wait"], what)
if rc is not None:
    check_eq(rc, 128 + signal.SIGKILL, "%s: memrec exit status" % what)
    check_figures(out, what)

what = "crasher wait, sampled, killed from outside"
out = os.path.join(d, "killed-sampled.zst")
rc = start_and_kill([MEMREC, "-q", "-s", "4096", "-o", out, "--", prog("crasher"), "wait"], what)
if rc is not None:
    check_eq(rc, 128 + signal.SIGKILL, "%s: memrec exit status" % what)
    check_figures(out, what, sampled=True)

# ---- a batch on its way into a full pipe ----

# filler counts its pairs on stdout; memrec is stopped, so the pipe fills
# and filler blocks inside a recorded call, in write(2); killed then, the
# batch it was writing is in neither the pipe nor the buffer's complete
# events, but in flight, and memrec takes it from the area.
what = "filler, killed while memrec is stopped"
out = os.path.join(d, "filler.zst")
p = subprocess.Popen([MEMREC, "-q", "-o", out, "--", prog("filler")], stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, cwd=d)
counts = [0]


def reader():
    while True:
        b = p.stdout.read(8)
        if len(b) < 8:
            return
        counts[0] = struct.unpack("=Q", b)[0]


t = threading.Thread(target=reader, daemon=True)
t.start()
wait_for(lambda: counts[0] > 1000, seconds=20)
os.kill(p.pid, signal.SIGSTOP)
# Blocked once the count stops moving (the pipe holds 1 MiB: some 40,000 pairs).
last, still = -1, 0
deadline = time.time() + 30
while still < 10 and time.time() < deadline:
    time.sleep(0.05)
    still = still + 1 if counts[0] == last else 0
    last = counts[0]
kids = open("/proc/%d/task/%d/children" % (p.pid, p.pid)).read().split()
check_eq(len(kids), 1, "%s: memrec's one child" % what)
blocked = counts[0]
for k in kids:
    os.kill(int(k), signal.SIGKILL)
time.sleep(0.2)
os.kill(p.pid, signal.SIGCONT)
try:
    p.wait(timeout=60)
except subprocess.TimeoutExpired:
    p.kill()
    check(False, "%s: memrec ended within 60 s" % what)
t.join(5)
check(still >= 10, "%s: the program blocked on the full pipe (count %d)" % (what, blocked))
check_eq(p.returncode, 128 + signal.SIGKILL, "%s: memrec exit status" % what)
j = report_json(out)
calls = sum(e["calls"] for e in j["sections"]["most_calls"] if has_frame(e, "fill_alloc"))
check(calls in (blocked, blocked + 1), "%s: fill_alloc's calls %d are the last count %d or one more" % (what, calls, blocked))
check_eq(j["unmatched_frees"], 0, "%s: every free matched (nothing twice)" % what)

# ---- forged areas ----

# Run by python3 under memrec: reads MEMREC_SOCK from /proc/self/environ
# (the recorder hides it from environ), makes the area VARIANT describes,
# hands it over as the recorder does (request MEMFMT_CONN_AREA = 3, the
# descriptor by SCM_RIGHTS) and kills itself.
FORGER = r"""
import os, socket, struct, sys, signal
env = dict(kv.split(b"=", 1) for kv in open("/proc/self/environ", "rb").read().split(b"\0") if b"=" in kv)
name = b"\0" + env[b"MEMREC_SOCK"]
variant = sys.argv[1]
MAGIC, SLOT, FIRST = 0x31415241, 8192, 4096
def header(slots=4, slot_size=SLOT, first=FIRST, done_at=64, done_size=8, data_at=128, calls_at=0, bytes_at=0,
           inflight_at=0):
    return struct.pack("<10I", MAGIC, slots, slot_size, first, done_at, done_size, data_at, calls_at, bytes_at,
                       inflight_at)
fd = os.memfd_create("forged")
if variant == "magic":
    os.write(fd, b"\xff" * 40)
elif variant == "bounds":
    os.write(fd, header(slots=1 << 20, slot_size=1 << 30, done_at=1 << 31))
elif variant in ("garbage", "short", "counts"):
    hdr = header(calls_at=16, bytes_at=24, inflight_at=40) if variant == "counts" else header()
    os.ftruncate(fd, FIRST + 4 * SLOT)
    os.pwrite(fd, hdr, 0)
    for i in range(4):
        slot = FIRST + i * SLOT
        os.pwrite(fd, struct.pack("<Q", [4096, 9, 100000, 300][i]), slot + 64)
        os.pwrite(fd, struct.pack("<QQQ", 1 << 63, 12345, [4096, 0, 50, 9][i]), slot + 16)
        os.pwrite(fd, struct.pack("<II", 0, i + 1) + bytes((j * 37 + i) % 256 for j in range(4088)), slot + 128)
    if variant == "short":
        os.ftruncate(fd, FIRST + SLOT + 100)
elif variant == "notafile":
    os.close(fd)
    fd, _ = os.pipe()
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(name)
socket.send_fds(s, [struct.pack("<IIii", 0x314e434d, 3, os.getpid(), os.getppid())], [fd])
s.recv(8)
s.close()
os.kill(os.getpid(), signal.SIGKILL)
"""

for variant in ("magic", "bounds", "garbage", "short", "counts", "notafile"):
    what = "forged area (%s)" % variant
    out = os.path.join(d, "forged-%s.zst" % variant)
    try:
        r = run([MEMREC, "-q", "-o", out, "--", sys.executable, "-c", FORGER, variant], timeout=60, cwd=d)
    except subprocess.TimeoutExpired:
        check(False, "%s: memrec ended within 60 s" % what)
        continue
    check_eq(r.returncode, 128 + signal.SIGKILL, "%s: memrec exit status (%s)" % (what, r.stderr.decode()[-300:]))
    code, text, err = report_text(out)
    check(code in (0, 3), "%s: memprint reads the file (exit %d: %s)" % (what, code, err[-300:]))
    check("killed by signal 9" in text, "%s: the report says how the process ended" % what)

done()
