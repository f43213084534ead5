# SPDX-License-Identifier: MIT
"""memrec --duration D: launched, the recording stops after D while the
program runs on to its end (memrec waits for it, passes signals on and
exits with its status); with --pid, memrec detaches after D and the
program runs on. Either way the file ends "recording stopped while it
ran" (END how 2: memprint's "detached"), and its runtime is D. And the
option's errors."""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403
from mrecread import Recording  # noqa: E402

END_STOPPED = 2  # docs/format.md, END: "recording stopped while it ran"


def summary(out):
    return run([MEMPRINT, out]).stdout.decode()


def main():
    d = tmpdir()

    # Launched: 0.5 s recorded of a program that runs 2 s and exits 5.
    out = os.path.join(d, "launch.mrec")
    t0 = time.monotonic()
    r = run([MEMREC, "--duration", "0.5s", "-o", out, "--", prog("growth"), "2", "5"])
    took = time.monotonic() - t0
    err = r.stderr.decode()
    check_eq(r.returncode, 5, "launch: memrec exits with the program's status")
    check(took >= 2.0, "launch: memrec waited for the program's end (%.2f s >= 2 s)" % took)
    check("ran on and exited with status 5" in err, "launch: memrec says the program ran on (%r)" % err[-200:])
    j = report_json(out)
    check_eq(j["end"], "detached", "launch: the file says the recording stopped while it ran")
    check(j["complete"], "launch: the file is complete")
    check(500 <= j["runtime_ms"] < 2000, "launch: recorded for --duration (%d ms)" % j["runtime_ms"])
    check("still running when the recording stopped" in summary(out), "launch: memprint's summary says so")
    # The reader written from the spec alone sees the same END record.
    end = Recording(out, events=False).end
    check(end is not None and end[0] == END_STOPPED, "launch: END how %s (2: stopped while it ran)" % (end,))
    check(end is not None and 500 <= end[1] < 2000, "launch: END runtime %s ms, the duration's" % (end,))

    # Launched, a signal after the duration passed is passed on: the
    # program stops at SIGTERM and exits 0, memrec with it.
    out = os.path.join(d, "signal.mrec")
    m = subprocess.Popen([MEMREC, "--duration", "0.3", "-o", out, "--", prog("growth"), "120"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 30
    line = b""
    while time.time() < deadline:
        line = m.stderr.readline()
        if b"--duration reached" in line or line == b"":
            break
    check(b"--duration reached" in line, "signal: memrec says the recording stopped (%r)" % line)
    m.send_signal(signal.SIGTERM)
    try:
        m.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        m.kill()
        m.wait()
    check_eq(m.returncode, 0, "signal: SIGTERM passed on, the program ended, memrec exits with its status")
    check_eq(report_json(out)["end"], "detached", "signal: the file ends stopped while it ran")

    # Attached: memrec detaches by itself after 1 s; the program runs on.
    p = subprocess.Popen([prog("growth"), "120"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check_eq(p.stdout.readline().decode().strip(), "ready", "attach: the program started")
    out = os.path.join(d, "attach.mrec")
    r = run([MEMREC, "--duration", "1", "--pid", str(p.pid), "-o", out])
    err = r.stderr.decode()
    if r.returncode != 0 and "ptrace" in err:
        skip_part("--pid --duration", "memrec cannot attach here: %s" % err.strip())
    else:
        check_eq(r.returncode, 0, "attach: memrec exit status (%s)" % err.strip())
        check(p.poll() is None, "attach: the program runs on after the detach")
        j = report_json(out)
        check(j["attached"] and j["end"] == "detached", "attach: attached, detached (%s)" % j["end"])
        check(1000 <= j["runtime_ms"] < 10000, "attach: recorded for --duration (%d ms)" % j["runtime_ms"])
        check(j["allocations"] > 0, "attach: allocations recorded")
        end = Recording(out, events=False).end
        check(end is not None and end[0] == END_STOPPED, "attach: END how %s (2: stopped while it ran)" % (end,))
    p.send_signal(signal.SIGTERM)
    check_eq(p.wait(timeout=30), 0, "attach: the program ends normally at SIGTERM")

    # Errors: usage, exit 2.
    for bad in ("0", "-1", "x", "5d", ""):
        r = run([MEMREC, "--duration", bad, "--", prog("nothing")])
        check_eq(r.returncode, 2, "--duration %r: usage error" % bad)
    for good, ms in (("2m", 120000), ("1h", 3600000)):
        r = run([MEMREC, "--duration", good, "-q", "-o", os.path.join(d, "n%d.mrec" % ms), "--", prog("nothing")])
        check_eq(r.returncode, 0, "--duration %s: accepted, the program ends first" % good)
    done()


main()
