# SPDX-License-Identifier: MIT
"""RSS versus heap: records tests/progs/rss_arenas (frees spread over eight
threads' arenas, see its header) and rss_single (one thread, little churn)
and checks memprint's RSS VERSUS HEAP section, text and JSON: the live heap
exact up to the few blocks libc keeps for threads, the allocator's free
memory far above the live heap with the advice in the first, a small gap
and no advice in the second; the allocator sampling within its 0.5% CPU
budget; and what is said when the allocator's figures are unknown
(MEMREC_HEAPINFO=0, jemalloc or tcmalloc preloaded, a version 2 file)."""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

MiB = 1048576
KiB = 1024
d = tmpdir()


def budget_ok(j, name):
    g = j["rss_gap"]
    # After a call of c ns the next waits 200 c: in all at most 1/200 of
    # the run, plus the last call.
    limit = j["runtime_ms"] * 1e6 / 200 + g["heapinfo_cost_ns_max"]
    check(g["heapinfo_cost_ns_total"] <= limit,
          "%s: mallinfo2 CPU time %d ns within 0.5%% of %d ms" % (name, g["heapinfo_cost_ns_total"], j["runtime_ms"]))


# ---- eight arenas, most of each freed ----
out = os.path.join(d, "arenas.zst")
r = record([prog("rss_arenas")], out)
check_eq(r.returncode, 0, "arenas: memrec exit status")
j = report_json(out)
g = j["rss_gap"]
check(g is not None and j["rss_gap_missing"] is None, "arenas: rss_gap present (a moment where RSS and the heap held still)")
check_eq(j["format_version"], 4, "arenas: format version")
check(g["allocator_known"], "arenas: allocator figures known (glibc mallinfo2)")
LIVE = 8 * 128 * 4001  # 4097024: the kept blocks
FREE = 8 * 1920 * 4016  # 61685760: the freed runs (4016-byte chunks)
check_eq(LIVE, 4097024, "arenas: the expected live heap is 4097024")
# The kept blocks, and the threads' blocks libc allocated (their DTVs):
# a few hundred bytes each.
check(LIVE <= g["live_heap_bytes"] <= LIVE + 8 * 1024,
      "arenas: live heap %d = %d + libc's thread blocks" % (g["live_heap_bytes"], LIVE))
check(1024 <= g["live_blocks"] <= 1024 + 16, "arenas: live blocks %d = 1024 + libc's" % g["live_blocks"])
check(0.9 * FREE <= g["allocator_free_bytes"] <= FREE + 8 * MiB,
      "arenas: allocator free bytes %d about %d" % (g["allocator_free_bytes"], FREE))
check(g["allocator_free_bytes"] >= 10 * g["live_heap_bytes"], "arenas: free held far above the live heap")
check(0 <= g["allocator_overhead_bytes"] <= 1 * MiB,
      "arenas: allocator overhead %d between 0 and 1 MiB" % g["allocator_overhead_bytes"])
check(g["allocator_free_chunks"] >= 8 * 127, "arenas: free chunks %d (a run between kept blocks each)"
      % g["allocator_free_chunks"])
check(g["rss_bytes"] >= g["live_heap_bytes"] + 0.9 * FREE, "arenas: RSS %d holds the free memory" % g["rss_bytes"])
check_eq(g["rss_bytes"] - g["allocator_in_use_bytes"] - g["allocator_free_bytes"] - g["mapped_bytes"],
         g["rest_bytes"], "arenas: the parts add up to RSS")
check(g["advice"], "arenas: advice given")
check(g["heapinfo_samples"] >= 3, "arenas: %d allocator samples" % g["heapinfo_samples"])
budget_ok(j, "arenas")
rc, text, err = report_text(out, top=1)
check_eq(rc, 0, "arenas: memprint exit status")
sec = text[text.find("RSS VERSUS HEAP"):]
check(sec.startswith("RSS VERSUS HEAP"), "arenas: text section present")
for words in ("held free by the allocator", "The allocator holds", "times the live heap", "threads",
              "malloc_trim(0)", "MALLOC_ARENA_MAX", "jemalloc", "tcmalloc"):
    check(words in sec, "arenas: text says %r" % words)
check("%d bytes" % g["allocator_free_bytes"] in sec, "arenas: text and JSON give the same free bytes")

# memtui's summary: the split in one line, and the advice.
MEMTUI = os.path.join(BUILD, "memtui")
if os.path.exists(MEMTUI):
    r = run([MEMTUI, "--batch", "--size", "200x40", out])
    screen = r.stdout.decode()
    check_eq(r.returncode, 0, "arenas: memtui --batch exit status")
    check("RSS vs heap at " in screen and "allocator free " in screen, "arenas: memtui summary has the split")
    check("try malloc_trim(0)" in screen, "arenas: memtui summary has the advice")
else:
    skip_part("memtui summary", "memtui not built")

# ---- one thread, little churn ----
out = os.path.join(d, "single.zst")
r = record([prog("rss_single")], out)
check_eq(r.returncode, 0, "single: memrec exit status")
j = report_json(out)
g = j["rss_gap"]
check(g is not None and g["allocator_known"], "single: allocator figures known")
LIVE = 2000 * 10001
check(LIVE <= g["live_heap_bytes"] <= LIVE + 4 * KiB, "single: live heap %d = %d" % (g["live_heap_bytes"], LIVE))
# A 10001-byte block takes a 10016-byte chunk: 15 bytes each, plus the
# allocator's use by libc and the recorder.
check(2000 * 15 <= g["allocator_overhead_bytes"] <= 2000 * 15 + 512 * KiB,
      "single: allocator overhead %d" % g["allocator_overhead_bytes"])
check(g["allocator_free_bytes"] < 1 * MiB, "single: little held free (%d)" % g["allocator_free_bytes"])
check(g["rss_bytes"] - g["live_heap_bytes"] < 8 * MiB,
      "single: small gap (RSS %d, live heap %d)" % (g["rss_bytes"], g["live_heap_bytes"]))
check(not g["advice"], "single: no advice")
budget_ok(j, "single")
rc, text, err = report_text(out, top=1)
sec = text[text.find("RSS VERSUS HEAP"):]
check("live heap" in sec and "malloc_trim" not in sec, "single: text section without advice")

# ---- a short run: the README's example, about 10 ms ----
# Too short for RSS and the heap to hold still for 20 ms before and after a
# moment: the section says so in one line. Were the machine so slow that a
# moment exists, its RSS must still hold its heap (one state of the
# program, not a stale RSS against a later heap), and no share is negative.
for n in range(5):
    what = "example run %d" % (n + 1)
    out = os.path.join(d, "example%d.zst" % n)
    r = record([os.path.join(BUILD, "example")], out)
    check_eq(r.returncode, 0, "%s: memrec exit status" % what)
    j = report_json(out)
    g, why = j["rss_gap"], j["rss_gap_missing"]
    if g is None:
        check(why in ("short", "unsteady"), "%s: no moment, said why: %r" % (what, why))
    else:
        check(why is None and g["rss_bytes"] >= g["live_heap_bytes"],
              "%s: the moment's RSS holds its live heap (%d >= %d)" % (what, g["rss_bytes"], g["live_heap_bytes"]))
    rc, text, err = report_text(out, top=1)
    sec = text[text.find("RSS VERSUS HEAP"):text.find("\n\n", text.find("RSS VERSUS HEAP"))]
    check(re.search(r"-\d+\.\d%", sec) is None, "%s: no negative share: %r" % (what, sec))
    if why == "short":
        check(len(sec.splitlines()) == 2 and "too short" in sec, "%s: one line says the run was too short" % what)

# ---- unknown allocator figures ----
out = os.path.join(d, "off.zst")
env = dict(os.environ, MEMREC_HEAPINFO="0")
r = record([prog("rss_single")], out, env=env)
check_eq(r.returncode, 0, "off: memrec exit status")
j = report_json(out)
g = j["rss_gap"]
check(g is not None and not g["allocator_known"], "off: allocator figures unknown")
check(g["allocator_free_bytes"] is None and g["allocator_overhead_bytes"] is None, "off: unknown parts are null")
check_eq(g["heapinfo_samples"], 0, "off: no allocator samples")
check(2000 * 10001 <= g["live_heap_bytes"] <= 2000 * 10001 + 4 * KiB,
      "off: live heap still measured (%d)" % g["live_heap_bytes"])
check(not g["advice"], "off: no advice")
rc, text, err = report_text(out, top=1)
check("unknown" in text[text.find("RSS VERSUS HEAP"):], "off: text says the allocator's part is unknown")

# Another allocator preloaded: glibc's mallinfo2 would describe arenas
# nobody uses, so there are no samples.
for lib in ("libjemalloc.so.2", "libtcmalloc.so.4"):
    path = next((os.path.join(dd, lib) for dd in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib")
                 if os.path.exists(os.path.join(dd, lib))), None)
    if not path:
        skip_part("rss_single under %s" % lib, "not installed")
        continue
    if is_asan(MEMREC):
        # The user's LD_PRELOAD reaches memrec itself, and ASan refuses to
        # run after another preloaded library; the plain build runs this.
        skip_part("rss_single under %s" % lib, "memrec built with AddressSanitizer")
        continue
    out = os.path.join(d, lib + ".zst")
    r = record([prog("rss_single")], out, env=dict(os.environ, LD_PRELOAD=path))
    check_eq(r.returncode, 0, "%s: memrec exit status" % lib)
    g = report_json(out)["rss_gap"]
    check(g is not None and not g["allocator_known"] and g["heapinfo_samples"] == 0,
          "%s: no allocator samples, its part unknown" % lib)
    check(2000 * 10001 <= g["live_heap_bytes"] <= 2000 * 10001 + 4 * KiB, "%s: live heap measured" % lib)

# A version 2 file (the same recording, its header's version set to 2):
# still read, the section says what is unknown.
if shutil.which("zstd"):
    raw = subprocess.run(["zstd", "-dc", out], stdout=subprocess.PIPE, check=True).stdout
    check_eq(raw[8:10], b"\x04\x00", "v2: recordings are version 4")
    v2 = os.path.join(d, "v2.zst")
    subprocess.run(["zstd", "-q", "-o", v2], input=raw[:8] + b"\x02\x00" + raw[10:], check=True)
    j = report_json(v2)
    check_eq(j["format_version"], 2, "v2: format version read")
    check(j["rss_gap"] is not None and not j["rss_gap"]["allocator_known"], "v2: allocator figures unknown")
else:
    skip_part("version 2 file", "no zstd command")

done()
