# SPDX-License-Identifier: MIT
"""The worked CI example of docs/ci.md (docs/examples/ci/) builds and its
CTest suite runs memrec and memprint --check from this build: it passes as
written, and its memory test fails when the program leaks
(-DWIDGET_LEAK=ON), so the example in the docs cannot rot."""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

if not shutil.which("cmake") or not shutil.which("ctest"):
    skip("cmake or ctest not installed")
src = os.path.join(SRC, "docs", "examples", "ci")
d = tmpdir()
for leak in ("OFF", "ON"):
    b = os.path.join(d, "build-" + leak)
    r = run(["cmake", "-S", src, "-B", b, "-DMEMREC=" + MEMREC, "-DMEMPRINT=" + MEMPRINT, "-DWIDGET_LEAK=" + leak],
            timeout=300)
    if not check_eq(r.returncode, 0, "leak %s: the example configures (%s)" % (leak, r.stderr.decode()[-300:])):
        continue
    r = run(["cmake", "--build", b], timeout=300)
    if not check_eq(r.returncode, 0, "leak %s: the example builds (%s)" % (leak, r.stderr.decode()[-300:])):
        continue
    r = run(["ctest", "--test-dir", b, "-V"], timeout=300)
    out = r.stdout.decode()
    if leak == "OFF":
        check_eq(r.returncode, 0, "the example's tests pass")
        check("PASS  leaked_bytes == 0: measured 0" in out and "gate: PASS (2 checks)" in out,
              "the memory test prints its checks:\n" + out)
    else:
        check(r.returncode != 0, "with a leak, ctest fails")
        check("widget_test_memory" in out and "FAIL  leaked_bytes == 0: measured 429" in out and
              "tests passed, 1 tests failed" in out, "with a leak, only the memory test fails, naming the 429 bytes (24 + 5 + 50 x 8) of widget 50:\n" + out)
done()
