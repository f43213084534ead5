# SPDX-License-Identifier: MIT
"""What keeps RSS up (docs/definitions.md): records tests/progs/rss_pinned
(80,000 blocks of 1000 bytes freed below one 1001-byte block from
pin_site() at the top of glibc's main heap, see its header) and checks
the RSS VERSUS HEAP section's heap layout, JSON and text: pin_site's stack
named first in rss_gap.pinned_by, holding at least 90% of the memory
freed, exact up to the pages the blocks' chunks share; the same with
--at; the same in a thread's arena (rss_pinned thread: the thread
arenas' layout); eight arenas' heaps (rss_arenas: worker()'s 1024 kept
blocks over 13-14 free pages each); the LAYOUT records as mrecread.py reads them from the
spec alone; memtui's summary line; the layouts' 2% budget; an attached
recording's layout said partial; and "unknown" where memrec cannot know
the layout (jemalloc preloaded, a sampled recording)."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403
from mrecread import Recording  # noqa: E402

d = tmpdir()
BLOCKS, SIZE = 80000, 1000
FREED = BLOCKS * SIZE  # requested bytes freed below the pin
CHUNKS = BLOCKS * 1008  # glibc's chunks of them: 1000 + 8 rounded up to 16
PAGE = 4096


def first_function(entry):
    return entry["frames"][0]["function"] if entry and entry["frames"] else None


def check_pinned(g, what):
    lay = g["heap_layout"]
    check(lay is not None and lay["known"] and lay["unknown_why"] is None and lay["partial"] is False,
          "%s: heap layout known, whole" % what)
    pinned = g["pinned_by"]
    check(pinned, "%s: pinned_by has entries" % what)
    if not pinned:
        return
    top = pinned[0]
    check_eq(first_function(top), "pin_site", "%s: pin_site's stack named first" % what)
    check(top["held_bytes"] >= 0.9 * FREED,
          "%s: it holds %d bytes, at least 90%% of the %d freed" % (what, top["held_bytes"], FREED))
    # Whole free pages: those of the freed chunks, and of the few blocks
    # libc and the loader freed at start below them (tens of KiB at most).
    check(CHUNKS - 2 * PAGE <= top["held_bytes"] <= CHUNKS + 64 * 1024,
          "%s: held %d bytes = the free whole pages of %d bytes of chunks" % (what, top["held_bytes"], CHUNKS))
    check_eq(top["held_bytes"], top["held_pages"] * PAGE, "%s: held bytes are whole pages" % what)
    check_eq(top["blocks"], 1, "%s: one block holds them" % what)
    check(1 <= top["pages_alone"] <= 2, "%s: the pin's block alone on %d page(s)" % (what, top["pages_alone"]))
    tb = lay["top_block"]
    check(tb is not None and tb["size"] == 1001 and first_function(tb) == "pin_site",
          "%s: the top block is pin_site's 1001 bytes" % what)
    check_eq(tb["held_bytes"], top["held_bytes"], "%s: the top block holds what its stack does" % what)
    check(lay["free_below_top_bytes"] >= top["held_bytes"] and lay["heap_bytes"] >= CHUNKS,
          "%s: heap %d bytes, %d free below its top" % (what, lay["heap_bytes"], lay["free_below_top_bytes"]))
    for e in pinned[1:]:
        check(e["held_bytes"] < 0.01 * FREED, "%s: nothing else holds much (%d bytes)" % (what, e["held_bytes"]))


# ---- glibc: the pin at the top of the main heap ----
out = os.path.join(d, "pinned.zst")
r = record([prog("rss_pinned")], out)
check_eq(r.returncode, 0, "pinned: memrec exit status")
j = report_json(out)
g = j["rss_gap"]
check(g is not None and j["rss_gap_missing"] is None, "pinned: rss_gap present")
if g is not None:
    check(g["advice"], "pinned: the allocator's free memory is far above the live heap")
    check_pinned(g, "pinned")
    # After a layout of c ns the next comes no sooner than 50 c after it
    # (and 100 ms): in all at most 2% of the run, plus the last one and
    # the one at the end, which waits for no budget.
    limit = j["runtime_ms"] * 1e6 / 50 + 2 * g["layout_cost_ns_max"]
    check(g["layouts"] >= 1 and g["layout_cost_ns_total"] <= limit,
          "pinned: %d layouts took %d ns, within 2%% of %d ms" % (g["layouts"], g["layout_cost_ns_total"],
                                                                j["runtime_ms"]))
rc, text, err = report_text(out, top=5)
sec = text[text.find("RSS VERSUS HEAP"):]
sec = sec[:sec.find("SUPPRESSED")] if "SUPPRESSED" in sec else sec
check("What keeps RSS up" in sec and "pin_site" in sec and "held below 1 block" in sec,
      "pinned: the text section names pin_site's stack: %r" % sec[sec.find("What keeps"):][:400])

# memtui's summary names the pinning block.
MEMTUI = os.path.join(BUILD, "memtui")
r = run([MEMTUI, "--batch", "--size", "120x30", out])
line = [l for l in r.stdout.decode().splitlines() if l.startswith("what keeps RSS up")]
check(len(line) == 1 and "(1001 B, pin_site)" in line[0] and "most held: pin_site" in line[0],
      "memtui: the summary names pin_site's block: %r" % line)

# The file as the spec says it: LAYOUT records with at most 16 entries, the
# last (written at the end) with the pin on top, its held pages JSON's.
rec = Recording(out, events=False)
check(len(rec.layouts) >= 1, "pinned: %d LAYOUT records" % len(rec.layouts))
check(all(lay["n"] <= 16 and lay["ntraces"] >= lay["n"] and lay["page"] == PAGE for lay in rec.layouts),
      "pinned: every LAYOUT within its bounds")
last = rec.layouts[-1] if rec.layouts else None
if last and g is not None and g["pinned_by"]:
    check_eq(last["top_size"], 1001, "pinned: the last layout's top block")
    check_eq(last["entries"][0][1] * PAGE, g["pinned_by"][0]["held_bytes"],
             "pinned: the moment's layout is the end's (the same state of the heap)")
check(all(h[11] and h[12] >= h[11] for h in rec.heapinfo), "pinned: every HEAPINFO carries the heap's range")

# ---- --at: the layout at or before the moment ----
if g is not None and g["heap_layout"] and g["heap_layout"]["known"]:
    at = g["heap_layout"]["at_ms"] + 1
    r = run([MEMPRINT, "--json", "--no-builtin-suppressions", "--at", "%.3f" % (at / 1000.0), out])
    check_eq(r.returncode, 0, "--at: memprint exit status")
    ja = json.loads(r.stdout.decode())
    ga = ja["rss_gap"]
    check(ga is not None and ga["at_ms"] == at and ja["rss_gap_missing"] == "window",
          "--at: rss_gap holds the moment's layout, the split is the whole run's")
    if ga is not None:
        check(ga["heap_layout"]["at_ms"] <= at, "--at: a layout at or before the moment")
        check_pinned(ga, "--at")
    r = run([MEMPRINT, "--at", "%.3f" % (at / 1000.0), out])
    t = r.stdout.decode()
    check("What keeps RSS up" in t and "pin_site" in t[t.find("What keeps"):], "--at: the text names pin_site")

# ---- a thread's arena: the pin at the top of that arena's heap ----
out = os.path.join(d, "thread.zst")
r = record([prog("rss_pinned"), "thread"], out)
check_eq(r.returncode, 0, "thread: memrec exit status")
j = report_json(out)
g = j["rss_gap"]
check(g is not None and j["rss_gap_missing"] is None, "thread: rss_gap present")
TFREED, TCHUNKS = FREED // 2, CHUNKS // 2
if g is not None:
    lay = g["heap_layout"]
    ar = lay["arenas"] if lay else None
    check(ar is not None and ar["heaps"] == 1, "thread: one thread arena heap laid out: %r" % (ar and ar["heaps"]))
    pinned = g["pinned_by"] or []
    top = pinned[0] if pinned else None
    check_eq(first_function(top), "pin_site", "thread: pin_site's stack named first")
    if top:
        check(top["held_bytes"] >= 0.9 * TFREED and TCHUNKS - 2 * PAGE <= top["held_bytes"] <= TCHUNKS + 64 * 1024,
              "thread: it holds %d bytes, at least 90%% of the %d freed (chunks %d)" % (top["held_bytes"], TFREED,
                                                                                       TCHUNKS))
        check_eq(top["blocks"], 1, "thread: one block holds them")
    if ar:
        check(ar["top_block"] is not None and ar["top_block"]["size"] == 1001
              and first_function(ar["top_block"]) == "pin_site", "thread: the arena heap's top block is the pin")
        check_eq(ar["free_below_top_bytes"], top["held_bytes"] if top else None,
                 "thread: the arena heap's free pages are the pin's")
        tops = ar["heap_tops"]
        check(len(tops) == 1 and tops[0]["size"] == 1001 and first_function(tops[0]) == "pin_site"
              and tops[0]["held_bytes"] == ar["free_below_top_bytes"] and tops[0]["live_blocks"] == 1,
              "thread: each heap's top listed: %r" % [(t["size"], t["held_bytes"]) for t in tops])
    check(lay["free_below_top_bytes"] < 64 * 1024, "thread: the main heap holds little (%d)"
          % lay["free_below_top_bytes"])
rec = Recording(out, events=False)
check(any(lay["heap"] == 1 and lay["heaps"] == 1 and len(lay["tops"]) == 1 and lay["tops"][0][1] == 1001
          for lay in rec.layouts), "thread: LAYOUT records of the thread arenas' heaps, read from the spec")
rc, text, err = report_text(out, top=5)
check("thread arenas: 1 heap" in text and "heap 1 (1 live block" in text and "pin_site" in text[text.find("What keeps"):],
      "thread: the text names the arena heap and pin_site")

# ---- eight arenas (rss_arenas): every 16th block of each kept ----
# Each thread's heap keeps 128 blocks of 4001 bytes, each above the 15
# freed chunks of 4016 bytes below it (60,240 bytes: 13 or 14 whole free
# pages), so worker()'s stack holds 1024 gaps of 13 to 14 pages.
out = os.path.join(d, "arenas.zst")
r = record([prog("rss_arenas")], out)
check_eq(r.returncode, 0, "arenas: memrec exit status")
j = report_json(out)
g = j["rss_gap"]
if g is None:
    skip_part("arenas layout", "no moment where RSS and the heap held still: %s" % j["rss_gap_missing"])
else:
    ar = g["heap_layout"]["arenas"]
    check(ar is not None and ar["heaps"] == 8 and ar["live_blocks"] == 1024 and len(ar["heap_tops"]) == 8,
          "arenas: 8 thread heaps of 128 blocks laid out: %r" % ((ar["heaps"], ar["live_blocks"]) if ar else None,))
    top = (g["pinned_by"] or [None])[0]
    check_eq(first_function(top), "worker", "arenas: worker's stack holds most")
    if top:
        check(1024 * 13 * PAGE <= top["held_bytes"] <= 1024 * 14 * PAGE and top["blocks"] == 1024,
              "arenas: worker holds %d bytes below %d blocks (1024 gaps of 13-14 pages)" % (top["held_bytes"],
                                                                                            top["blocks"]))

# ---- attached: blocks from before the attach are unknown, said so ----
if is_asan(MEMREC):
    skip_part("attached layout", "memrec built with AddressSanitizer")
else:
    p = subprocess.Popen([prog("attachee"), os.path.join(PROGS, "libplugin.so")], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    ready = p.stdout.readline().decode().strip()
    check_eq(ready, "ready", "attached: attachee started")
    out = os.path.join(d, "attached.zst")
    r = run([MEMREC, "-q", "--max-wait", "none", "--pid", str(p.pid), "--duration", "1", "-o", out])
    p.terminate()
    p.wait()
    check_eq(r.returncode, 0, "attached: memrec exit status")
    # --at past the end: rss_gap always holds the layout then.
    r = run([MEMPRINT, "--json", "--at", "3600", out])
    ja = json.loads(r.stdout.decode()) if r.returncode == 0 else None
    lay = ja["rss_gap"]["heap_layout"] if ja and ja["rss_gap"] else None
    check(lay is not None and lay["known"] and lay["partial"],
          "attached: the layout is known and said partial: %r" % (lay and {k: lay[k] for k in ("known", "partial")}))
    r = run([MEMPRINT, "--at", "3600", out])
    check("blocks live before the attach are unknown" in r.stdout.decode(), "attached: the text says why")

# ---- where memrec cannot know the layout ----
out = os.path.join(d, "sampled.zst")
r = record([prog("rss_pinned")], out, extra=["-s", "4K"])
check_eq(r.returncode, 0, "sampled: memrec exit status")
j = report_json(out)
g = j["rss_gap"]
if g is None:
    skip_part("sampled layout", "no moment where RSS and the heap held still: %s" % j["rss_gap_missing"])
else:
    check(g["heap_layout"] == {"known": False, "unknown_why": "sampled"} and g["pinned_by"] is None,
          "sampled: the layout is unknown: %r" % g["heap_layout"])
    check_eq(len(Recording(out, events=False).layouts), 0, "sampled: no LAYOUT records")

lib = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
if not os.path.exists(lib):
    skip_part("rss_pinned under jemalloc", "not installed (scripts/deps.sh installs libjemalloc2)")
elif is_asan(MEMREC):
    skip_part("rss_pinned under jemalloc", "memrec built with AddressSanitizer")
else:
    out = os.path.join(d, "jemalloc.zst")
    r = record([prog("rss_pinned")], out, env=dict(os.environ, LD_PRELOAD=lib))
    check_eq(r.returncode, 0, "jemalloc: memrec exit status")
    check_eq(len(Recording(out, events=False).layouts), 0, "jemalloc: no LAYOUT records")
    j = report_json(out)
    g = j["rss_gap"]
    if g is None:
        skip_part("jemalloc layout", "no moment where RSS and the heap held still: %s" % j["rss_gap_missing"])
    else:
        check(g["heap_layout"] == {"known": False, "unknown_why": "allocator"} and g["pinned_by"] is None,
              "jemalloc: the heap layout is unknown, not guessed: %r" % g["heap_layout"])
        rc, text, err = report_text(out, top=5)
        check("the heap's layout is unknown" in text and "pin_site" not in text[text.find("RSS VERSUS"):],
              "jemalloc: the text says the layout is unknown")

done()
