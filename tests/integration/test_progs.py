# SPDX-License-Identifier: MIT
"""Records every target program of tests/progs and checks the exact figures
known by construction (tests/progs/EXPECTED.md), and the report's content:
a demangled C++ name, an inlined frame with file:line, exit statuses."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

# allocations, temporary, peak, leaked bytes, leaked blocks, allocated bytes
EXPECTED = {
    "chain":       (11, 5, 200015, 70001, 1, 390057),
    "aligned":     (10, 5, 150005, 100003, 3, 200070),
    # the process's own figures include libstdc++'s emergency pool
    # (malloc(72704) before main), which memrec frees at exit through
    # __gnu_cxx::__freeres(), so it is not a leak.
    "cxx":         (17, 8, 342901, 60001, 1, 482946),
    "atexit_free": (3, 0, 70003, 40001, 1, 70003),
    "inlined":     (2, 1, 30002, 10001, 1, 30002),
    "nothing":     (0, 0, 0, 0, 0, 0),
    "temporaries": (17, 12, 170002, 0, 0, 920062),
}
FIELDS = ("allocations", "temporary", "peak_heap_bytes", "leaked_bytes", "leaked_allocations", "allocated_bytes")

d = tmpdir()
reports = {}
for name, exp in sorted(EXPECTED.items()):
    out = os.path.join(d, name + ".zst")
    r = record([prog(name)], out)
    check_eq(r.returncode, 0, "%s: memrec exit status" % name)
    j = report_json(out)
    reports[name] = j
    for field, value in zip(FIELDS, exp):
        check_eq(j[field], value, "%s: %s" % (name, field))
    check(j["complete"], "%s: recording complete" % name)
    check_eq(j["unmatched_frees"], 0, "%s: no unmatched frees" % name)
    check(j["runtime_ms"] >= 0 and j["peak_rss_bytes"] >= 0, "%s: runtime and RSS present" % name)

# threads: 4 threads, exact totals of the program's own calls plus one
# calloc per pthread_create for the thread's TLS table (glibc's, size
# depends on loaded TLS modules), found by its stack rather than its size.
out = os.path.join(d, "threads.zst")
check_eq(record([prog("threads")], out).returncode, 0, "threads: memrec exit status")
j = report_json(out, top=50)
tls = [e for e in j["sections"]["most_calls"] if any("pthread_create" in (f["function"] or "") for f in e["frames"])]
tls_calls = sum(e["calls"] for e in tls)
tls_bytes = sum(e["allocated_bytes"] for e in tls)
check_eq(tls_calls, 4, "threads: one TLS-table calloc per pthread_create")
check_eq(j["allocations"] - tls_calls, 20, "threads: program's own allocations")
check_eq(j["temporary"], 8, "threads: temporary (per thread)")
check_eq(j["peak_heap_bytes"] - tls_bytes, 372030, "threads: peak without TLS tables")
check_eq(j["leaked_bytes"] - tls_bytes, 164010, "threads: leaked bytes without TLS tables")
check_eq(j["leaked_allocations"] - tls_calls, 4, "threads: leaked blocks without TLS tables")
check_eq(j["allocated_bytes"] - tls_bytes, 452050, "threads: allocated bytes without TLS tables")
check(j["threads"] >= 5, "threads: five threads seen (%d)" % j["threads"])

# Report content: demangled C++ name at the marked line, leaked there.
leak = reports["cxx"]["sections"]["most_leaked"]
fill_line = marker_line("tests/progs/cxx.cpp", "LINE_FILL_ALLOC")
check(len(leak) >= 1 and has_frame(leak[0], "shop::Basket::fill(int)", "cxx.cpp", fill_line),
      "cxx: leak attributed to shop::Basket::fill(int) at cxx.cpp:%d" % fill_line)
check(leak and leak[0]["leaked_bytes"] == 60001, "cxx: that entry leaks 60001 bytes")
main_line = marker_line("tests/progs/cxx.cpp", "LINE_MAIN_FILL")
check(leak and has_frame(leak[0], "main", "cxx.cpp", main_line), "cxx: called from main at cxx.cpp:%d" % main_line)

# Inlined frame with file:line, and its caller at the call site.
leak = reports["inlined"]["sections"]["most_leaked"]
inl = marker_line("tests/progs/inlined.c", "LINE_INLINE_ALLOC")
call = marker_line("tests/progs/inlined.c", "LINE_CALL_TABLE")
check(leak and has_frame(leak[0], "make_block", "inlined.c", inl, inlined=True),
      "inlined: make_block shown as inlined at inlined.c:%d" % inl)
check(leak and has_frame(leak[0], "build_table", "inlined.c", call, inlined=False),
      "inlined: build_table at the call site inlined.c:%d" % call)
code, text, err = report_text(os.path.join(d, "inlined.zst"))
check(code == 0 and "(inlined) make_block at " in text and ("inlined.c:%d" % inl) in text,
      "inlined: the text report marks the inlined frame with file:line")
# Depth limit: the 300-frame stack is cut in the middle, keeping the
# allocation site and main; with -d 8 the shallow one is cut too.
for extra, cut in (((), 1), (("-d", "8"), 2)):
    out = os.path.join(d, "deep%d.zst" % cut)
    check_eq(record([prog("deep")], out, extra=extra).returncode, 0, "deep %s: memrec exit status" % (extra,))
    j = report_json(out)
    check_eq((j["allocations"], j["leaked_bytes"], j["leaked_allocations"]), (2, 30003, 2), "deep %s: figures" % (extra,))
    leaks = j["sections"]["most_leaked"]
    check_eq(sum(1 for e in leaks if e["truncated"]), cut, "deep %s: stacks marked truncated" % (extra,))
    for e in leaks:
        names = [f["function"] for f in e["frames"]]
        check(names and names[0] == "bottom" and "main" in names, "deep %s: %d-byte stack keeps bottom and main" % (extra, e["leaked_bytes"]))

# dlopen/dlclose: a library loaded and unloaded during the run is
# symbolized, its constructor's allocation included.
out = os.path.join(d, "dlopener.zst")
lib = os.path.join(PROGS, "libplugin.so")
check_eq(record([prog("dlopener"), lib], out).returncode, 0, "dlopener: memrec exit status")
# ld.so allocates for the program inside dlopen too, so only the four
# blocks of known size are checked.
j = report_json(out, top=100)
own = [e for e in j["sections"]["most_allocated"] if e["allocated_bytes"] in (10001, 40001, 50001, 20001)]
check_eq(sorted(e["allocated_bytes"] for e in own), [10001, 20001, 40001, 50001], "dlopener: the four allocations")
work_line = marker_line("tests/progs/plugin.c", "LINE_PLUGIN_WORK")
init_line = marker_line("tests/progs/plugin.c", "LINE_PLUGIN_INIT")
leak = [e for e in j["sections"]["most_leaked"] if e["leaked_bytes"] == 50001]
check(leak and has_frame(leak[0], "plugin_work", "plugin.c", work_line) and
      (leak[0]["frames"][0]["module"] or "").endswith("libplugin.so"),
      "dlopener: the library's leak names plugin_work at plugin.c:%d in libplugin.so" % work_line)
init = [e for e in j["sections"]["most_allocated"] if e["allocated_bytes"] == 40001]
check(init and has_frame(init[0], "plugin_init", "plugin.c", init_line),
      "dlopener: the constructor's allocation names plugin_init at plugin.c:%d" % init_line)

# _exit skips destructors: the recorder flushes in its own _exit.
out = os.path.join(d, "early_exit.zst")
check_eq(record([prog("sleeper"), "_exit"], out).returncode, 7, "early_exit: memrec passes the exit status on")
j = report_json(out)
check_eq((j["allocations"], j["leaked_bytes"], j["leaked_allocations"]), (3, 40004, 2), "early_exit: every event before _exit")
check_eq((j["end"], j["exit_value"]), ("exited", 7), "early_exit: ended by exit status 7")

for title in ("MOST CALLS TO ALLOCATION FUNCTIONS", "PEAK MEMORY CONSUMERS", "MOST TEMPORARY ALLOCATIONS",
              "MOST MEMORY LEAKED", "MOST MEMORY ALLOCATED", "total runtime:", "calls to allocation functions:",
              "temporary allocations:", "peak heap memory consumption:", "peak RSS", "total memory leaked:"):
    check(title in text, "text report has '%s'" % title)

done()
