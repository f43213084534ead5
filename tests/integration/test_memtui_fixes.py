# SPDX-License-Identifier: MIT
"""memtui at 80x24 in tmux, on what issue 22 found (items 5, 7 and 8 and
the cuts of item 3): each check here failed before its fix. The figures
are memprint's on the same file, or known by construction
(tests/progs/phases.c, mapper.c, deep.c)."""
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

if not shutil.which("tmux"):
    skip("tmux is not installed (scripts/deps.sh installs it)")
if not os.path.exists(os.path.join(BUILD, "memtui")):
    skip("memtui is not built")

from tmuxtui import *  # noqa: E402,F403

HOSTILE = os.path.join(SRC, "tests", "data", "hostile")


def title(s):
    return (s or "").split("\n")[0]


def costs_offered(t):
    """The costs `c` goes round, from the title, starting at the current one."""
    seen = []
    for _ in range(9):
        s = t.wait(lambda x: re.search(r"cost: (\w+)", title(x)) is not None, "a cost in the title")
        c = re.search(r"cost: (\w+)", title(s)).group(1)
        if c in seen:
            break
        seen.append(c)
        t.keys("c")
        t.wait(lambda x, c=c: "cost: %s " % c not in title(x), "the cost after %s" % c)
    return seen


def rchar(pid):
    with open("/proc/%d/io" % pid) as f:
        for line in f:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    return None


def body(s):
    """The view's rows: below the title, tabs and view heading, above the status line."""
    return lines(s.rstrip("\n"))[3:-1] if s else []


def whole_summary(t):
    """Every row of the Summary, paging down from the top at 80x24 (the
    pages joined where they overlap)."""
    t.keys("Home")
    s = t.wait_text("SUMMARY")
    rows = body(s)
    for _ in range(20):
        t.keys("PgDn")
        prev = s
        end = time.time() + 5  # the last page does not change: no screen to wait for
        while time.time() < end and t.screen() == prev:
            time.sleep(0.05)
        s = t.wait(lambda x: True, "a settled screen")
        page = body(s)
        if s == prev:
            break
        k = min(len(rows), len(page))
        while k > 0 and rows[-k:] != page[:k]:
            k -= 1
        rows += page[k:]
    return rows


SECTIONS = ("MOST CALLS TO ALLOCATION FUNCTIONS", "MOST TEMPORARY ALLOCATIONS", "PEAK MEMORY CONSUMERS",
            "MOST MEMORY LEAKED", "MOST MEMORY ALLOCATED")


def memprint_entries(text):
    """memprint's report: per section, (figure, 'function at file:line') of each entry."""
    out, sec, fig = {}, None, None
    for ln in text.split("\n"):
        if ln in SECTIONS:
            sec = ln
            out[sec] = []
            continue
        if sec is None:
            continue
        if not ln:
            sec = None
            continue
        m = re.match(r"^  (?:(\d+) (?:calls|temporary)|\S+ \S+ \((\d+) bytes\))", ln)
        if m:
            fig = int(m.group(1) or m.group(2))
            continue
        m = re.match(r"^\s+#0  (.*) at (?:.*/)?([^/]+):(\d+) in ", ln)
        if m and fig is not None:
            out[sec].append((fig, "%s at %s:%s" % (m.group(1), m.group(2), m.group(3))))
            fig = None
    return out


def memtui_entries(rows):
    """The Summary's sections: per heading, (figure, unit, share, 'function at file:line')."""
    out, sec = {}, None
    for ln in rows:
        if ln in SECTIONS:
            sec = ln
            out[sec] = []
            continue
        m = re.match(r"^\s+(\d+) (.{11}) +([\d.]+)%  (.*)$", ln)
        if m and sec:
            out[sec].append((int(m.group(1)), m.group(2).strip(), float(m.group(3)), m.group(4)))
    return out


d = tmpdir()
tmux("new-session", "-d", "-s", "keeper", "sleep 3600")
try:
    phases = os.path.join(d, "phases.zst")
    check_eq(record([prog("phases")], phases).returncode, 0, "phases: memrec exit status")
    mapper = os.path.join(d, "mapper.zst")
    check_eq(record([prog("mapper")], mapper).returncode, 0, "mapper: memrec exit status")

    # ---- item 8: a corrupt file says so, as memprint does ----
    rc, _, err = report_text(os.path.join(HOSTILE, "packed-corrupt.mrec"))
    m = re.search(r"is corrupt data at byte (\d+) of its data", err)
    check(m is not None, "corrupt: memprint's warning: %r" % err.strip())
    t = Tui(["packed-corrupt.mrec"], cwd=HOSTILE, width=80, height=24)
    want = "warning: 'packed-corrupt.mrec' is corrupt data at byte %s of its data" % (m.group(1) if m else "?")
    s = t.wait_text(want, timeout=30)
    check(s is not None, "corrupt: memtui shows memprint's warning: %s" % want)
    t.keys("q")
    t.finished()
    t.close()

    # ---- item 8: the mapped cost only where something was mapped ----
    t = Tui(["-c", "calls", "phases.zst"], cwd=d, width=80, height=24)
    seen = costs_offered(t)
    # unreachable: the recording's leaked blocks were classified at its end.
    check_eq(seen, ["calls", "temporary", "peak", "leaked", "allocated", "growth", "unreachable"],
             "phases (nothing mapped): costs offered")
    t.keys("q")
    t.finished()
    t.close()
    t = Tui(["-c", "calls", "mapper.zst"], cwd=d, width=80, height=24)
    seen = costs_offered(t)
    check_eq(seen, ["calls", "temporary", "peak", "leaked", "allocated", "mapped", "growth", "unreachable"],
             "mapper: costs offered")
    t.keys("q")
    t.finished()
    t.close()

    # ---- item 8: the detail overlay reads the source once, not at every draw ----
    t = Tui(["phases.zst"], cwd=d, width=80, height=24)
    t.wait_text("Summary")
    t.keys("4", "d")
    s = t.wait_text(re.compile(r"^>\s*\d+\s+\S", re.M))
    check(s is not None, "detail: the source line shown")
    pid = t.memtui_pid()
    before = rchar(pid)
    # Four redraws at least (the screen draws every 250 ms when idle).
    time.sleep(2)
    after = rchar(pid)
    size = os.path.getsize(os.path.join(SRC, "tests", "progs", "phases.c"))
    check(before is not None and after - before < size,
          "detail: %s bytes read in 2 s of idle with the overlay open (phases.c is %d bytes)" %
          (None if before is None else after - before, size))
    t.keys("q")
    t.finished()
    t.close()
    # ---- item 7: the bottom-up self column, the mark of a row with nothing below ----
    t = Tui(["-c", "calls", "phases.zst"], cwd=d, width=80, height=24)
    t.wait_text("Summary")
    t.keys("3")
    s = t.wait_text("allocation site")
    for name, calls in (("phase_two", 6), ("phase_one", 4), ("scratch", 3), ("phase_three", 2)):
        check_eq(numbers(row(s, name))[:2], [calls, calls], "bottom-up: site %s's self is its %d calls" % (name, calls))
    t.keys("Right")
    s = t.wait_text(re.compile(r"^\s+6\s+6\s+40\.00%    \u00b7 main$", re.M))
    check(s is not None, "bottom-up: phase_two's caller main (nothing above it) is marked, its self the 6 "
          "stacks that start there")
    t.keys("q")
    t.finished()
    t.close()
    temporaries = os.path.join(d, "temporaries.zst")
    check_eq(record([prog("temporaries")], temporaries).returncode, 0, "temporaries: memrec exit status")
    t = Tui(["-c", "calls", "temporaries.zst"], cwd=d, width=80, height=24)
    t.wait_text("Summary")
    t.keys("3")
    s = t.wait_text("allocation site")
    check(re.search(r"^\s+17\s+17\s+100\.00%  \u00b7 main$", s or "", re.M) is not None,
          "bottom-up: the site main, with no caller, is marked at depth 0 (not indented like a child)")

    # ---- item 7: the Summary's entries are memprint's, with unit and share ----
    t.keys("1")
    rows = whole_summary(t)
    rc, printed, _ = report_text(temporaries, top=5)
    want = memprint_entries(printed)
    got = memtui_entries(rows)
    check_eq(got.get("MOST CALLS TO ALLOCATION FUNCTIONS", [None])[0],
             (10, "calls", 58.8, "main at temporaries.c:62"),
             "summary: the first calls entry is memprint's (10 calls at line 62, 58.8%), not main's 17")
    for sec in SECTIONS:
        check_eq([(f, n) for f, _, _, n in got.get(sec, [])], want.get(sec, []), "summary: %s as memprint's" % sec)
    # d on the first entry: its own allocation call, line 62 (main's first frame merged is another line).
    t.keys("Home", "d")
    s = t.wait_text("FRAME DETAIL")
    check(s is not None and re.search(r"file:\s+\S*temporaries\.c:62$", s, re.M) is not None,
          "summary: d on the first calls entry shows its allocation call, temporaries.c:62")
    t.keys("q")
    t.finished()
    t.close()
    t = Tui(["phases.zst"], cwd=d, width=80, height=24)
    t.wait_text("Summary")
    rows = whole_summary(t)
    rc, printed, _ = report_text(phases, top=5)
    want = memprint_entries(printed)
    got = memtui_entries(rows)
    for sec in SECTIONS:
        check_eq([(f, n) for f, _, _, n in got.get(sec, [])], want.get(sec, []), "phases summary: %s as memprint's" % sec)
    check_eq(got.get("PEAK MEMORY CONSUMERS", [None])[0], (120066, "117.25 KiB", 54.5, "phase_two at phases.c:62"),
             "phases summary: the first peak entry with its unit and share of 220116 bytes")

    # ---- item 7: callers and callees go back to the function shown before ----
    t.keys("4", "/")
    t.literal("phase_two")
    t.keys("Enter", "Enter")
    s = t.wait_text("CALLERS (1)")
    check(s is not None and selected_rows(t, "main"), "functions: phase_two's links start on the caller main")
    t.keys("Enter")
    s = t.wait(lambda x: re.search(r"share  main \(Backspace: back\)", x) is not None, "main's links")
    check(s is not None, "functions: Enter on the caller shows main's callers and callees")
    t.keys("BSpace")
    s = t.wait(lambda x: re.search(r"share  phase_two \(Backspace: back\)", x) is not None, "back to phase_two")
    check(s is not None and any("main" in r for r in selected_rows(t, "main")),
          "functions: Backspace goes back to phase_two, on the row of main")
    t.keys("BSpace")
    s = t.wait_text("function (sorted by")
    check(s is not None and len(selected_rows(t, "phase_two")) == 1,
          "functions: Backspace again goes back to the list, on phase_two")
    t.keys("q")
    t.finished()
    t.close()
    # ---- item 5: the flame graph scrolls down past the screen ----
    deep = os.path.join(d, "deep.zst")
    check_eq(record([prog("deep")], deep).returncode, 0, "deep: memrec exit status")
    t = Tui(["deep.zst"], cwd=d, width=80, height=24)
    t.wait_text("Summary")
    t.keys("5")
    s = t.wait_text("FLAME GRAPH")
    check(s is not None and "levels 1-18+" in lines(s)[2], "flame: the heading says more levels are below")
    # Down to where the two stacks part (depth 10: bottom left, descend right), then down the deep one.
    t.keys(*(["Down"] * 13))
    t.wait_text("20002 (66.67%), self 20002: bottom")
    t.keys("Right")
    t.wait_text("10001 (33.33%), self 0: descend")
    t.keys(*(["Down"] * 300))
    s = t.wait_text("selected: inclusive 10001 (33.33%), self 10001: bottom")
    check(s is not None, "flame: Down reaches the deep stack's allocation site, 260 levels down")
    m = re.search(r"levels (\d+)-(\d+)", lines(s)[2] if s else "")
    check(m is not None and int(m.group(1)) > 200, "flame: the graph scrolled (%s)" % (m.group(0) if m else None))
    check(s is not None and len(selected_rows(t, "|bottom")) == 1, "flame: the selected frame is on screen")
    t.keys("Home")
    s = t.wait(lambda x: "levels 1-" in x, "back at the top")
    check(s is not None and "|[total]" in s, "flame: Home goes back to the zoomed frame at the top")
    t.keys("q")
    t.finished()
    t.close()
    # ---- item 3: Alloc time's p99 and max columns at 80 columns ----
    timed = os.path.join(d, "timea_sites.zst")
    check_eq(record([prog("timea_sites")], timed, extra=["--time"]).returncode, 0, "timea_sites: memrec --time")
    r = run([MEMPRINT, "--alloc-time", timed])
    want = {}
    for ln in r.stdout.decode().split("\n"):
        cells = re.split(r"  +", ln.strip())
        if ln.startswith("  ") and cells[0] in ("16 - 31", "malloc", "free"):
            want[cells[0]] = cells
    t = Tui(["timea_sites.zst"], cwd=d, width=80, height=24)
    t.wait_text("Summary")
    t.keys("7")
    s = t.wait_text("ALLOCATOR TIME PER FUNCTION")
    for name in ("16 - 31", "malloc", "free"):
        got = [re.split(r"  +", ln.strip()) for ln in lines(s or "") if ln.startswith("  " + name + " ")]
        check_eq(got[:1], [want.get(name)], "alloc time at 80 columns: the %s row whole, p99 and max included" % name)
    check(all(len(ln) <= 80 for ln in lines(s or "")), "alloc time: nothing past column 80")
    t.keys(">", ">", ">")
    s = t.wait_text(re.compile(r"< >: from column \d+"))
    check(s is not None and re.search(r" \d+\.\d%$", s, re.M) is not None,
          "alloc time: > scrolls the thread table to its share column")
    t.keys("q")
    t.finished()
    t.close()
    # ---- item 3: what was cut at 80 columns ----
    rc, printed, _ = report_text(phases)
    m = re.search(r"^peak heap memory consumption: (\S+ \S+) \((\d+) bytes\) after (\d+\.\d+) s$", printed, re.M)
    t = Tui(["phases.zst"], cwd=d, width=80, height=24)
    s = t.wait_text("Summary")
    # The RSS versus heap line (~120 columns) goes on over a second row, its end shown.
    ls = lines(s)
    at = [i for i, ln in enumerate(ls) if ln.startswith("RSS vs heap at ")]
    check(at and at[0] + 1 < len(ls) and re.match(r"^  .*\+ rest -?[\d.]+ \S+$", ls[at[0] + 1]) is not None,
          "80 columns: the RSS versus heap line goes on over a second row, to its end (%r)" %
          (ls[at[0]:at[0] + 2] if at else None))
    for k in ("1", "2", "3", "4", "5", "6", "7"):
        t.keys(k)
        s = t.wait(lambda x, k=k: re.search(r" %s [A-Z]" % k, lines(x)[1]) is not None, "tab %s" % k)
        tabs = lines(s)[1] if s else ""
        check(all(re.search(r" %d( |$)" % n, tabs) for n in range(1, 8)), "80 columns, view %s: every tab's number "
              "shows (%r)" % (k, tabs))
    check(" 7 Alloc time" in tabs, "80 columns: the current tab, 7 Alloc time, is whole")
    t.keys("6")
    s = t.wait_text("OVER TIME")
    head = [ln for ln in lines(s) if ln.startswith("OVER TIME")]
    check(m is not None and head and ("peak %s (%s bytes) at %s s" % (m.group(1), m.group(2), m.group(3))) in head[0],
          "80 columns: the Over time title gives the peak and its time (%r)" % (head[:1],))
    t.keys("w")
    t.literal("0.5s-1.5s")
    t.keys("Enter")
    s = t.wait_text("WINDOW 0.500-1.500 s (x clears)")
    win = [ln for ln in lines(s or "") if ln.startswith("WINDOW")]
    check(win and re.search(r"; \d+ older blocks? freed in it$", win[0]) is not None,
          "80 columns: the window line whole (%r)" % (win[:1],))
    t.keys("x")
    t.wait(lambda x: "WINDOW" not in x, "window cleared")
    term = "phase_" + "x" * 70
    t.keys("2", "/")
    t.literal(term)
    t.keys("Enter")
    t.wait_text("no match for")
    t.keys("Down")
    s = t.wait(lambda x: lines(x.rstrip("\n"))[-1].startswith("n/N:next/prev 'phase_x"), "the search on the status line")
    last = lines(s.rstrip("\n"))[-1] if s else ""
    check(last.endswith("'  ?:help  q:quit  /:search") or "?:help  q:quit" in last,
          "80 columns: a long search term is cut, the keys stay on the status line (%r)" % last)
    check("\u2026'" in last, "80 columns: the cut term ends in an ellipsis")
    t.keys("q")
    t.finished()
    t.close()
finally:
    tmux("kill-server", check_rc=False)
done()
