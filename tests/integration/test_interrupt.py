# SPDX-License-Identifier: MIT
"""Ctrl+C: SIGINT to the terminal's process group (memrec and the program)
ends the recording; memrec writes a complete file, prints its summary and
exits as the program did (128 + 2)."""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

d = tmpdir()
out = os.path.join(d, "sleeper.zst")
p = subprocess.Popen([MEMREC, "-o", out, prog("sleeper")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     start_new_session=True)
line = p.stdout.readline()
check_eq(line, b"ready\n", "sleeper started under memrec")
time.sleep(0.2)
os.killpg(p.pid, signal.SIGINT)  # what the terminal does on Ctrl+C
try:
    _, err = p.communicate(timeout=20)
except subprocess.TimeoutExpired:
    p.kill()
    check(False, "memrec ended within 20 s of Ctrl+C")
    done()
check_eq(p.returncode, 128 + signal.SIGINT, "memrec exit status after Ctrl+C")
err = err.decode()
check("3 allocations" in err and "2 leaked" in err, "summary printed: %r" % err)
check("memprint " + out in err, "summary names the next command")
j = report_json(out)
check_eq((j["allocations"], j["leaked_bytes"], j["leaked_allocations"]), (3, 40004, 2), "figures of the interrupted program")
check_eq((j["end"], j["exit_value"]), ("signaled", signal.SIGINT), "file says the program was ended by SIGINT")
check(j["complete"], "file is complete")
done()
