# SPDX-License-Identifier: MIT
"""A stopped memrec must not stop the program (docs/capture.md, "When
memrec does not read"). tests/progs/busy is recorded while memrec is
stopped (SIGSTOP) for 3 s:

- attached (--pid, whose default bound is 100 ms): the program keeps at
  least half the pace it had recorded before the stop, its threads never
  wait in the recorder for long (no CPU burnt waiting either: the program's
  CPU rate stays that of a program at work, the recorder's wake-ups stay
  few), the recording says how many events were dropped and when (the span
  covers the stop), and memprint marks the figures;
- launched with --max-wait 100ms: the same;
- launched without it: the program waits for memrec (exact figures) and
  nothing is lost.
memprint's figures before the stop stay exact in every case: the program's
own count of rounds matches the recording where nothing was lost."""
import json
import os
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403
from mrecread import Recording  # noqa: E402

d = tmpdir()
STOP = 3.0


def rate(counter, wall):
    a = busy_rounds(counter)
    time.sleep(wall)
    return (busy_rounds(counter) - a) / wall


def voluntary_switches(pid):
    """Context switches the program's threads made of their own accord
    (a sleep, a wait): every nap of a waiting thread is one."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def stop_memrec(m, pid, counter, what):
    """Rate before, SIGSTOP memrec for STOP seconds measuring the program's
    rate and wake-ups, SIGCONT. Returns (rate before, rate stopped)."""
    before = rate(counter, 1.0)
    m.send_signal(signal.SIGSTOP)
    t0 = time.time()
    time.sleep(0.5)  # the pipe fills and the bound passes
    sw0 = voluntary_switches(pid)
    stopped = rate(counter, STOP - 1.0)
    switches = (voluntary_switches(pid) - sw0) / (STOP - 1.0)
    time.sleep(max(0.0, STOP - (time.time() - t0)))
    m.send_signal(signal.SIGCONT)
    check(switches < 1000, "%s: the program's threads sleep instead of napping while memrec is stopped "
          "(%.0f wake-ups a second)" % (what, switches))
    return before, stopped


def lost_checks(out, what, t_stop):
    r = run([MEMPRINT, "--json", out])
    j = json.loads(r.stdout.decode() or "{}")
    check_eq(r.returncode, 0, "%s: memprint reads the recording" % what)
    check(j.get("lost_events", 0) > 0, "%s: the recording counts the dropped events (%s)" %
          (what, j.get("lost_events")))
    spans = j.get("lost_spans", [])
    # On a loaded machine memrec may also fall behind by more than the
    # bound on its own, before or after the stop: more spans, earlier.
    check(len(spans) >= 1, "%s: spans of lost events: %s" % (what, spans))
    check_timing(len(spans) == 1, "%s: one span of lost events: %s" % (what, spans))
    if spans:
        # The stop began at t_stop seconds into the recording (memrec's
        # clock starts a little earlier than ours, never later). A memrec
        # slower than the program (ASan, a loaded machine) drops before the
        # stop too, so the span that covers the stop may start earlier.
        lo, hi = (t_stop + 0.5) * 1000, (t_stop + STOP - 0.5) * 1000
        covering = [x for x in spans if x["from_ms"] <= lo and x["to_ms"] >= hi]
        check(covering, "%s: a span covers the stop (%.0f ms to %.0f ms): %s" % (what, lo, hi, spans))
        s = covering[0] if covering else spans[0]
        print("note: %s: the span starts at %d ms, the stop at %.0f ms" % (what, s["from_ms"], t_stop * 1000))
        check_eq(sum(x["events"] for x in spans), j.get("lost_events"), "%s: the spans hold every lost event" % what)
    # The reader written from docs/format.md alone sees the same records.
    lost = Recording(out, events=False).lost
    check(lost and sum(e for _, _, e in lost) == j.get("lost_events"),
          "%s: mrecread.py reads the LOST records, %d events in all" % (what, sum(e for _, _, e in lost)))
    text = run([MEMPRINT, out]).stdout.decode()
    check("lost: %d events dropped by the recorder" % j.get("lost_events", -1) in text,
          "%s: the summary says what was lost" % what)
    check("total memory leaked: ~" in text and "peak heap memory consumption: ~" in text,
          "%s: the heap figures are marked approximate" % what)


counter = os.path.join(d, "attach.count")
# ---- attached: the default bound ----
p = subprocess.Popen([prog("busy"), "2", counter], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
check(p.stdout.readline() == b"ready\n", "attach: the program started")
out = os.path.join(d, "attach.zst")
t_start = time.time()
m, first = start_attach(p.pid, out, exact=False)  # the default bound
check(b"attached to process" in first, "attach: memrec attached: %r" % first)
check(wait_for(lambda: busy_rounds(counter) > 1000), "attach: the program runs")
t_stop = time.time() - t_start + 1.0
before, stopped = stop_memrec(m, p.pid, counter, "attach")
check_timing(stopped >= before / 2, "attach: the program keeps at least half its pace while memrec is stopped "
      "(%.0f rounds/s, %.0f before)" % (stopped, before))
time.sleep(1.0)
m.send_signal(signal.SIGINT)
try:
    m.communicate(timeout=60)
except subprocess.TimeoutExpired:
    m.kill()
    m.communicate()
    check(False, "attach: memrec detaches after the stop")
check_eq(m.returncode, 0, "attach: memrec detached")
check(p.poll() is None, "attach: the program runs on after the detach")
p.send_signal(signal.SIGTERM)
p.communicate(timeout=60)
check_eq(p.returncode, 0, "attach: the program ends with its own status (no block changed)")
lost_checks(out, "attach", t_stop)

# ---- launched with a bound ----
counter = os.path.join(d, "bound.count")
out = os.path.join(d, "bound.zst")
t_start = time.time()
m = subprocess.Popen([MEMREC, "-q", "--max-wait", "100ms", "-o", out, prog("busy"), "2", counter],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
check(m.stdout.readline() == b"ready\n", "launch, bound: the program started")
check(wait_for(lambda: busy_rounds(counter) > 1000), "launch, bound: the program runs")
pid = int(subprocess.run(["pgrep", "-f", "-n", counter], stdout=subprocess.PIPE).stdout.split()[0])
t_stop = time.time() - t_start + 1.0
before, stopped = stop_memrec(m, pid, counter, "launch, bound")
check_timing(stopped >= before / 2, "launch, bound: the program keeps at least half its pace while memrec is "
      "stopped (%.0f rounds/s, %.0f before)" % (stopped, before))
time.sleep(1.0)
m.send_signal(signal.SIGTERM)
m.communicate(timeout=60)
check_eq(m.returncode, 0, "launch, bound: the program ends with its own status, and memrec with it")
lost_checks(out, "launch, bound", t_stop)

# ---- launched without a bound: the program waits, nothing is lost ----
counter = os.path.join(d, "wait.count")
out = os.path.join(d, "wait.zst")
m = subprocess.Popen([MEMREC, "-q", "-o", out, prog("busy"), "2", counter], stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE)
check(m.stdout.readline() == b"ready\n", "launch: the program started")
check(wait_for(lambda: busy_rounds(counter) > 1000), "launch: the program runs")
pid = int(subprocess.run(["pgrep", "-f", "-n", counter], stdout=subprocess.PIPE).stdout.split()[0])
before, stopped = stop_memrec(m, pid, counter, "launch")
check(stopped < before / 10, "launch: without --max-wait the program waits for memrec (%.0f rounds/s, %.0f "
      "before)" % (stopped, before))
m.send_signal(signal.SIGTERM)
m.communicate(timeout=60)
check_eq(m.returncode, 0, "launch: the program ends with its own status")
r = run([MEMPRINT, "--json", out])
j = json.loads(r.stdout.decode() or "{}")
check_eq((j.get("lost_events"), j.get("lost_spans"), j.get("leaked_bytes"), j.get("unmatched_frees")),
         (0, [], 0, 0), "launch: nothing lost, every block paired and freed (lost, spans, leaked, unmatched)")
done()
