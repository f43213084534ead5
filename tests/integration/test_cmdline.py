# SPDX-License-Identifier: MIT
"""memrec's command line, the small cases of issue 10 item 9: -o onto a
dangling symbolic link says what it is, -o - is refused (nothing named "-"
is created), and with --follow-fork the closing "next: memprint" names
every file written."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

d = tmpdir()

link = os.path.join(d, "dangling.zst")
os.symlink(os.path.join(d, "nowhere", "x"), link)
r = run([MEMREC, "-o", link, prog("nothing")])
check_eq(r.returncode, 1, "-o onto a dangling symbolic link: exit status")
check_eq(r.stderr.decode(), "memrec: cannot create '%s': it is a dangling symbolic link (memrec never writes "
         "through one)\n" % link, "-o onto a dangling symbolic link: the message says what it is")
check(not os.path.exists(os.path.join(d, "nowhere")), "-o onto a dangling symbolic link: nothing created")

r = run([MEMREC, "-o", "-", prog("nothing")], cwd=d)
check_eq(r.returncode, 2, "-o -: usage error")
check("cannot write the recording to standard output" in r.stderr.decode(), "-o -: the message says why: %r" %
      r.stderr.decode().strip())
check(not os.path.exists(os.path.join(d, "-")), "-o -: no file named '-'")

out = os.path.join(d, "fork.zst")
r = run([MEMREC, "-f", "-o", out, prog("forker")])
check_eq(r.returncode, 0, "-f: exit status")
named = re.findall(r"^memrec: next: memprint (.*)$", r.stderr.decode(), re.M)
written = sorted(os.path.join(d, f) for f in os.listdir(d) if f.startswith("fork"))
check(len(written) > 1, "-f: several files written: %d" % len(written))
check_eq(sorted(named), written, "-f: 'next: memprint' names every file written")

done()
