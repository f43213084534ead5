#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Soak test of recording and attaching (issue 10), not part of the default
test run. bench/soak_target.c runs 8 threads of malloc, realloc and
cross-thread frees under a storm of forks (one every 20 ms) and signals
(SIGUSR1 to a random thread every 200 us). The time is split in two:

  1. launched recordings, one after the other: each must end with exit 0,
     a complete file with no lost events, and exactly 8 x ROUNDS calls at
     each of the target's two allocation sites (soak_alloc, soak_realloc);
  2. attach/detach cycles back to back on one long run of the target:
     each cycle must exit 0 within 60 s (a hang fails), the detach must be
     complete (the recorder's thread gone) soon after SIGINT, and the
     target must end with exit 0 (its blocks intact), its output untouched.
     Every 4th cycle stops memrec (SIGSTOP) for a second while attached:
     the target must keep using the CPU meanwhile (memrec's --max-wait of
     100 ms: it never waits longer) and the file must count lost events.
     Every 4th cycle, two later, records into a 1 MiB tmpfs (as root): the
     disk fills, memrec must exit 1 and still detach, the target runs on.
     Also (as root) one launched recording into the full tmpfs: the target
     must end with its own status and output, memrec with status 1.

    bench/soak.py [BUILD] [--minutes M] [--rounds R]

Prints one line per recording and cycle, then a summary; exits 1 on any
failure. Results of a run are kept in docs/attach.md ("Soak")."""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("build", nargs="?", default=os.environ.get("MEMREC_BUILD_DIR") or
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build"))
ap.add_argument("--minutes", type=float, default=10.0, help="total duration (default 10)")
ap.add_argument("--rounds", type=int, default=200000, help="rounds per thread of a launched recording")
ap.add_argument("--threads", type=int, default=8)
a = ap.parse_args()
memrec = os.path.join(a.build, "memrec")
memprint = os.path.join(a.build, "memprint")
d = tempfile.mkdtemp(prefix="memrec-soak-")
target = os.path.join(d, "soak_target")
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "soak_target.c")
# No sibling calls: soak_alloc and soak_realloc must keep their frames.
subprocess.run(["cc", "-O2", "-g", "-fno-optimize-sibling-calls", "-o", target, src, "-lpthread"], check=True)
failures = []


def fail(what):
    print("FAIL " + what, flush=True)
    failures.append(what)


def site_calls(j, function):
    return sum(e["calls"] for e in j["sections"]["most_calls"] if any(f["function"] == function for f in e["frames"]))


def cpu_s(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def tasks(pid):
    try:
        return len(os.listdir("/proc/%d/task" % pid))
    except OSError:
        return -1


# A 1 MiB tmpfs for the full-disk cases (root only).
full_dir = os.path.join(d, "full")
os.mkdir(full_dir)
full = os.geteuid() == 0 and subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", full_dir],
                                            stderr=subprocess.DEVNULL).returncode == 0
if not full:
    print("note: not root: no full-disk cases", flush=True)


def clear_full():
    for f in os.listdir(full_dir):
        os.unlink(os.path.join(full_dir, f))


start = time.time()
half = start + a.minutes * 30
if full:
    # 0. A launched recording into a full disk.
    out = os.path.join(full_dir, "launch.zst")
    r = subprocess.run([memrec, "-q", "-o", out, "--", target, str(a.threads), str(a.rounds), "0"],
                       capture_output=True, timeout=600)
    line = "full disk, launched: memrec exit %d, target output %r" % (r.returncode, r.stdout.decode().strip())
    print(line, flush=True)
    if r.returncode != 1 or not r.stdout.startswith(b"rounds ") or b"No space left" not in r.stderr:
        fail(line + ": " + r.stderr.decode().strip()[-300:])
    clear_full()
# 1. Launched recordings with exact totals.
recordings = 0
while time.time() < half:
    out = os.path.join(d, "rec.zst")
    if os.path.exists(out):
        os.unlink(out)
    t = time.time()
    try:
        r = subprocess.run([memrec, "-q", "-o", out, "--", target, str(a.threads), str(a.rounds), "0"],
                           capture_output=True, timeout=600)
    except subprocess.TimeoutExpired:
        fail("recording %d hung (600 s)" % recordings)
        break
    took = time.time() - t
    recordings += 1
    want = a.threads * a.rounds
    if r.returncode != 0:
        fail("recording %d: exit %d: %s" % (recordings, r.returncode, r.stderr.decode().strip()[-300:]))
        continue
    p = subprocess.run([memprint, "--json", "-n", "50", out], capture_output=True)
    if p.returncode != 0:
        fail("recording %d: memprint: %s" % (recordings, p.stderr.decode().strip()))
        continue
    j = json.loads(p.stdout)
    got = (site_calls(j, "soak_alloc"), site_calls(j, "soak_realloc"), j["lost_events"], j["complete"])
    line = "recording %d: %.1f s, soak_alloc %d, soak_realloc %d calls (want %d each), lost %d, complete %s, %s" % (
        recordings, took, got[0], got[1], want, got[2], got[3], r.stdout.decode().strip())
    print(line, flush=True)
    if got != (want, want, 0, True):
        fail(line)

# 2. Attach/detach cycles on one run of the target.
remaining = max(10.0, a.minutes * 60 - (time.time() - start))
prog = subprocess.Popen([target, str(a.threads), "0", str(remaining)], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE)
time.sleep(0.5)
threads0 = tasks(prog.pid)
cycles, detach_times, stopped, stops, fulls = 0, [], [], 0, 0
while prog.poll() is None and time.time() - start < a.minutes * 60 - 3:
    kind = "stop" if cycles % 4 == 1 else "full" if cycles % 4 == 3 and full else "plain"
    out = os.path.join(full_dir if kind == "full" else d, "cycle.zst")
    if os.path.exists(out):
        os.unlink(out)
    m = subprocess.Popen([memrec, "--pid", str(prog.pid), "-o", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = m.stderr.readline().decode()
    time.sleep(0.5)
    if kind == "stop":
        # memrec stopped for a second: the target must run on.
        m.send_signal(signal.SIGSTOP)
        time.sleep(0.2)
        c0 = cpu_s(prog.pid)
        time.sleep(0.8)
        used = cpu_s(prog.pid) - c0
        m.send_signal(signal.SIGCONT)
        time.sleep(0.3)
        stops += 1
        if used < 0.3 and prog.poll() is None:
            fail("cycle %d: the target used %.2f CPU s in 0.8 s while memrec was stopped" % (cycles + 1, used))
    elif kind == "full":
        time.sleep(1.0)  # the disk fills
        fulls += 1
    t = time.time()
    m.send_signal(signal.SIGINT)
    dt = None
    while time.time() < t + 30 and prog.poll() is None:
        if tasks(prog.pid) == threads0:
            dt = time.time() - t
            break
        time.sleep(0.005)
    try:
        err = m.communicate(timeout=60)[1].decode()
    except subprocess.TimeoutExpired:
        m.kill()
        m.wait()
        fail("cycle %d: memrec hung after SIGINT" % cycles)
        break
    cycles += 1
    if prog.poll() is not None:
        break  # the target ended during the cycle: its end is checked below
    want_rc = 1 if kind == "full" and os.path.exists(out) and os.path.getsize(out) > 900 * 1024 else 0
    if m.returncode != want_rc or "cannot detach" in err or dt is None:
        fail("cycle %d (%s): exit %d, detach %s: %s" % (cycles, kind, m.returncode, dt, (line + err).strip()[-300:]))
        continue
    if kind == "stop":
        p = subprocess.run([memprint, "--json", "-n", "1", out], capture_output=True)
        lost = json.loads(p.stdout).get("lost_events", 0) if p.returncode == 0 else -1
        if lost <= 0:
            fail("cycle %d (stop): the file counts no lost events (%d)" % (cycles, lost))
    if kind == "full":
        clear_full()
    detach_times.append(dt)
    if "stopped for" in line:
        stopped.append(float(line.split("stopped for ")[1].split()[0]))
    print("cycle %d (%s): detach %.3f s, %s" % (cycles, kind, dt, line.strip()), flush=True)
try:
    out, err = prog.communicate(timeout=120)
except subprocess.TimeoutExpired:
    prog.kill()
    out, err = prog.communicate()
    fail("the attached target hung at its end")
if prog.returncode != 0 or err or not out.startswith(b"rounds "):
    fail("the attached target: exit %s, stdout %r, stderr %r" % (prog.returncode, out, err))

if full:
    subprocess.run(["umount", "-l", full_dir])
total = time.time() - start
print("summary: %.1f min; %d launched recordings with exact totals; %d attach/detach cycles on %d threads under "
      "fork and signal storms (%d with memrec stopped for 1 s, %d into a full disk)%s; target: %s; %d failures" %
      (total / 60, recordings, cycles, a.threads, stops, fulls,
       (", detach median %.3f s max %.3f s, stopped median %.1f ms max %.1f ms" %
        (statistics.median(detach_times), max(detach_times), statistics.median(stopped), max(stopped)))
       if detach_times and stopped else "", out.decode().strip(), len(failures)))
sys.exit(1 if failures else 0)
