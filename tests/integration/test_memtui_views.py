# SPDX-License-Identifier: MIT
"""memtui's views and keys for a heaptrack GUI user (issue 22, item 9),
driven in tmux at 80x24 as test_memtui.py drives the others: the Stacked
chart (heap, allocations and temporaries split by the top stacks), `a`
(what was live at the cursor, memprint --at), the Sizes view (memprint
--sizes), F (filters by function, file, module, thread: memprint
--function, --exclude, --thread), W (folding allocator wrappers), the
cost columns (=), e (the source in $EDITOR) and the Diff view of
`memtui BASE NEW` (memprint --diff). Every figure is checked
against memprint's JSON of the same file or against tests/progs programs
whose counts are known by construction (phases.c, wrappers.c, threads.c).
Every wait polls the screen: no fixed sleep decides a result.

With --update-docs, the screens captured here replace the captures
between docs/memtui.md's "views-captures" markers."""
import json
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403
from tmuxtui import Tui, lines, tmux  # noqa: E402

MEMTUI = os.path.join(BUILD, "memtui")
UPDATE_DOCS = "--update-docs" in sys.argv
if not shutil.which("tmux"):
    skip("tmux is not installed (scripts/deps.sh installs it)")
if not os.path.exists(MEMTUI):
    skip("memtui is not built")

captures = []


def tui80(args, **kw):
    """memtui at 80x24: every view must fit a default terminal."""
    return Tui(args, width=80, height=24, **kw)


def capture(title, text):
    out, empty = [], 0
    for line in text.rstrip("\n").split("\n") + ["<end>"]:
        line = line.rstrip()
        if not line:
            empty += 1
            continue
        if empty > 2:
            out.append("[%d empty rows]" % empty)
        else:
            out += [""] * empty
        empty = 0
        out.append(line)
    captures.append((title, "\n".join(out[:-1])))


def legend(text):
    """The Stacked view's legend: {glyph: (value, label)}."""
    out = {}
    for ln in lines(text):
        m = re.match(r"^ ([1-9=]) +(\d+)  (.*)$", ln)
        if m:
            out[m.group(1)] = (int(m.group(2)), m.group(3))
    return out


def summary_calls(text):
    m = re.search(r"calls to allocation functions: (\d+)", text or "")
    return int(m.group(1)) if m else None


def tree_rows(text):
    """(inclusive, name) of each row of a tree view."""
    out = []
    for ln in lines(text):
        m = re.match(r"^ +(\d+) +(\d+) +[\d.]+%  [\u25be\u25b8\u00b7 ]*(\S.*)$", ln)
        if m:
            out.append((int(m.group(1)), m.group(3).strip()))
    return out


def memprint_json(*args):
    r = run([MEMPRINT, "--json", "--no-builtin-suppressions"] + list(args))
    check_eq(r.returncode, 0, "memprint %s: exit status" % " ".join(args))
    return json.loads(r.stdout.decode())


d = tmpdir()
phases = os.path.join(d, "phases.zst")
wrappers = os.path.join(d, "wrappers.zst")
threads = os.path.join(d, "threads.zst")
check_eq(record([prog("phases")], phases).returncode, 0, "phases: memrec exit status")
check_eq(record([prog("wrappers")], wrappers).returncode, 0, "wrappers: memrec exit status")
check_eq(record([prog("threads")], threads).returncode, 0, "threads: memrec exit status")
jp = memprint_json(phases)
check_eq(jp["allocations"], 15, "phases: allocations by construction")
check_eq(jp["peak_heap_bytes"], 220116, "phases: peak by construction")

tmux("new-session", "-d", "-s", "keeper", "sleep 3600")
try:
    # ---- Stacked: heap in use split by the top stacks, at the peak ----
    t = tui80(["phases.zst"], cwd=d)
    t.wait_text("Summary")
    t.keys("8", "End")
    s = t.wait_text(re.compile(r"cursor .*\(220116\)"))
    check(s is not None, "stacked: the last column holds the heap peak, 220116 bytes")
    capture("Stacked (heap in use at the peak) at 80x24", s or "")
    lg = legend(s)
    # The legend at the peak: each stack's bytes, those of memprint's
    # PEAK MEMORY CONSUMERS (one entry per stack).
    peak = sorted((e["peak_bytes"] for e in jp["sections"]["peak_consumers"]), reverse=True)
    check_eq(sorted((v for g, (v, _) in lg.items() if g != "="), reverse=True), peak,
             "stacked: the stacks' bytes at the peak are memprint's peak consumers")
    check_eq(lg.get("1", (0, ""))[0], 120066, "stacked: the largest stack at the peak, phase_two's 6 x 20011")
    check("phase_two" in lg.get("1", (0, ""))[1], "stacked: the legend names phase_two first")
    check_eq(lg.get("=", (None,))[0], 0, "stacked: nothing else is live at the peak")
    # Allocations over time, counted from the start: at the end, memprint's totals.
    t.keys("v")
    s = t.wait_text(re.compile(r"cursor .*allocations at .*\(15\)"))
    check(s is not None, "stacked: allocations at the end: 15 (memprint: %d)" % jp["allocations"])
    lg = legend(s)
    calls = sorted((e["calls"] for e in jp["sections"]["most_calls"]), reverse=True)
    check_eq(sorted((v for g, (v, _) in lg.items() if g != "="), reverse=True), calls,
             "stacked: each stack's allocations at the end are memprint's most calls")
    capture("Stacked (allocations)", s or "")
    t.keys("Home")
    s = t.wait_text(re.compile(r"cursor 0\.000-.*allocations at .*\((\d+)\)"))
    lg = legend(s)
    check_eq(sum(v for v, _ in lg.values()), 4, "stacked: allocations in the first column: phase_one's 4")
    t.keys("v", "End")
    s = t.wait_text(re.compile(r"cursor .*temporary allocations at .*\(3\)"))
    check(s is not None, "stacked: temporary allocations at the end: 3 (memprint: %d)" % jp["temporary"])
    lg = legend(s)
    check(lg.get("1", (0, ""))[0] == 3 and "scratch" in lg["1"][1], "stacked: the 3 temporaries are scratch's")

    # ---- a: what was live at the cursor (memprint --at) ----
    t.keys("v", "Home")
    t.wait_text("heap in use, top")
    t.keys(*(["Right"] * 50))
    s = t.wait_text(re.compile(r"cursor 1\.[3-8]\d\d-"))
    check(s is not None, "live: the cursor moved to the middle of the run")
    t.keys("a")
    s = t.wait_text(re.compile(r"LIVE AT (\d+\.\d+) s: (\d+) bytes \(.*\) in (\d+) blocks"))
    m = re.search(r"LIVE AT (\d+\.\d+) s: (\d+) bytes \(.*\) in (\d+) blocks", s or "")
    check(m is not None, "live: the list opens")
    if m:
        capture("Stacked, a: the stacks live at the cursor", s)
        ja = memprint_json("--at", m.group(1), phases)
        check_eq(int(m.group(2)), ja["leaked_bytes"], "live: bytes live at %s s are memprint --at's" % m.group(1))
        check_eq(int(m.group(3)), ja["leaked_allocations"], "live: blocks live are memprint --at's")
        check_eq(int(m.group(2)), 160094, "live: phase_one's and phase_two's blocks, by construction")
        rows = [ln for ln in lines(s) if re.match(r"^ +\d+ +\d+ +[\d.]+%  ", ln)]
        got = sorted((int(x.split()[0]), int(x.split()[1])) for x in rows)
        want = sorted((e["leaked_bytes"], e["leaked_allocations"]) for e in ja["sections"]["most_leaked"])
        check_eq(got, want, "live: each stack's bytes and blocks are memprint --at's most leaked")
        t.keys("d")
        s = t.wait_text("FRAME DETAIL")
        top = ja["sections"]["most_leaked"][0]["frames"][0]
        check(s is not None and "function: %s" % top["function"] in s and
              "%s:%d" % (top["file"], top["line"]) in s,
              "live: d shows the first stack's frame, memprint's %s at line %d" % (top["function"], top["line"]))
        t.keys("d")
        t.wait(lambda x: "FRAME DETAIL" not in x, "detail closed")
    t.keys("BSpace")
    check(t.wait_text("STACKED:") is not None, "live: Backspace goes back to the chart")
    # The same key on the Over time chart.
    t.keys("6", "Home")
    t.wait_text("OVER TIME")
    t.keys(*(["Right"] * 20))
    t.keys("a")
    s = t.wait_text(re.compile(r"LIVE AT (\d+\.\d+) s"))
    m = re.search(r"LIVE AT (\d+\.\d+) s: (\d+) bytes \(.*\) in (\d+) blocks", s or "")
    check(m is not None, "live: a opens the list from the Over time chart too")
    if m:
        ja = memprint_json("--at", m.group(1), phases)
        check_eq(int(m.group(2)), ja["leaked_bytes"], "live (over time): bytes are memprint --at %s's" % m.group(1))
        check_eq(int(m.group(2)), 40028, "live (over time): phase_one's 4 x 10007 before 1 s")
    t.keys("Left")
    check(t.wait_text("OVER TIME") is not None, "live: Left goes back to the chart")

    # ---- Sizes: memprint --sizes ----
    js = memprint_json("--sizes", phases)["sizes"]
    t.keys("9")
    s = t.wait_text("SIZES:")
    capture("Sizes", s or "")
    check(s is not None and ("SIZES: %d allocations, %d bytes, %d temporary" % (js["calls"], js["bytes"],
                                                                               js["temporary"])) in s,
          "sizes: the totals are memprint --sizes'")
    got = []
    for ln in lines(s):
        mm = re.match(r"^  (\d+)-(\d+) +(\d+) +(\d+) +(\d+) ", ln)
        if mm:
            got.append(tuple(int(x) for x in mm.groups()))
    want = [(b["min"], b["max"], b["calls"], b["bytes"], b["temporary"]) for b in js["buckets"]]
    check_eq(got, want, "sizes: every bucket is memprint --sizes'")
    got = []
    for ln in lines(s):
        mm = re.match(r"^  (\d+) +(\d+) +(\d+)$", ln)
        if mm:
            got.append(tuple(int(x) for x in mm.groups()))
    want = [(e["size"], e["calls"], e["temporary"]) for e in js["top_sizes"]]
    check_eq(got, want, "sizes: the most frequent sizes are memprint --sizes'")
    check_eq(got[:1], [(20011, 6, 0)], "sizes: 20011 bytes, 6 times, first (by construction)")

    # ---- F: filters ----
    def filtered(spec):
        t.prompt("F", spec)
        t.keys("1")
        return t.wait_text(re.compile(r"FILTER .*\n(.*\n)*.*calls to allocation functions: \d+"))

    jf = memprint_json("--function", "p.*_two", phases)
    s = filtered("p.*_two")
    capture("Summary with the filter 'p.*_two'", s or "")
    check_eq(summary_calls(s), jf["allocations"], "filter: function: calls are memprint --function's")
    check_eq(summary_calls(s), 9, "filter: function: phase_two's 6 and scratch's 3")
    check(s is not None and "(%d bytes)" % jf["peak_heap_bytes"] in s, "filter: function: peak is memprint's")
    jfs = memprint_json("--sizes", "--function", "p.*_two", phases)["sizes"]
    t.keys("9")
    s = t.wait_text("SIZES kept")
    check(s is not None and "SIZES kept: %d allocations, %d bytes, %d temporary" % (jfs["calls"], jfs["bytes"],
                                                                                    jfs["temporary"]) in s,
          "filter: the Sizes view counts what memprint --sizes --function keeps (%d calls)" % jfs["calls"])
    t.keys("6")
    s = t.wait_text("OVER TIME")
    check(s is not None and "peak %s" % "" in s and "(%d bytes)" % jf["peak_heap_bytes"] in s,
          "filter: the Over time chart's peak is memprint --function's (%d)" % jf["peak_heap_bytes"])
    t.keys("8", "v", "End")
    s = t.wait_text(re.compile(r"cursor .*allocations at .*\(9\)"))
    lg = legend(s)
    check(s is not None and sorted(lab.split(" ")[0] for g, (v, lab) in lg.items() if g != "=") == ["phase_two", "scratch"],
          "filter: the Stacked chart splits the kept stacks only (phase_two, scratch)")
    t.keys("v", "v")
    jx = memprint_json("--exclude", "scratch", phases)
    s = filtered("!scratch")
    check_eq(summary_calls(s), jx["allocations"], "filter: !scratch: calls are memprint --exclude's")
    check_eq(summary_calls(s), 12, "filter: !scratch: 15 - 3")
    s = filtered("file phases\\.c$")
    check_eq(summary_calls(s), 15, "filter: file phases.c: every allocation of the program")
    s = filtered("file nosuch\\.c")
    check_eq(summary_calls(s), 0, "filter: file nosuch.c: none")
    s = filtered("module /phases$")
    check_eq(summary_calls(s), 15, "filter: module phases: every allocation")
    s = filtered("module libc")
    check_eq(summary_calls(s), 0, "filter: module libc: none (frames from main() inwards)")
    t.prompt("F", "")
    s = t.wait(lambda x: "FILTER" not in x and "calls to allocation functions: 15" in x, "filter cleared")
    check(s is not None, "filter: an empty line clears it")
    t.prompt("F", "(")
    s = t.wait_text("invalid regular expression")
    check(s is not None, "filter: a bad expression is said on the status line")
    check_eq(t.quit(), 0, "phases: exit status")

    jt = memprint_json(threads)
    t = tui80(["threads.zst"], cwd=d)
    t.wait_text("Summary")
    for thread in (1, 2):
        jn = memprint_json("--thread", str(thread), threads)
        t.prompt("F", "thread %d" % thread)
        s = t.wait_text("FILTER thread %d" % thread)
        check_eq(summary_calls(s), jn["allocations"], "filter: thread %d: calls are memprint --thread's" % thread)
        check(jn["allocations"] < jt["allocations"], "filter: thread %d: fewer than the whole run's" % thread)
    check_eq(t.quit(), 0, "threads: exit status")

    # ---- W: folding allocator wrappers ----
    t = tui80(["-c", "calls", "wrappers.zst"], cwd=d)
    t.wait_text("Summary")
    t.keys("3")
    s = t.wait_text("allocation site")
    check_eq(sorted(tree_rows(s)), [(2, "pool_get"), (8, "xmalloc")], "fold: unfolded sites: xmalloc 8, pool_get 2")
    t.prompt("W", "")
    s = t.wait_text(re.compile(r"FOLDED: \d+ stack"))
    capture("Bottom-up with the known wrappers folded (W)", s or "")
    check_eq(sorted(tree_rows(s)), [(2, "pool_get"), (3, "site_a"), (5, "site_b")],
             "fold: xmalloc's callers are the sites: site_b 5, site_a 3")
    t.prompt("W", "pool_get")
    s = t.wait_text("and 'pool_get'")
    check_eq(sorted(tree_rows(s)), [(2, "site_c"), (3, "site_a"), (5, "site_b")], "fold: pool_get folded too: site_c 2")
    t.keys("2", "*")
    s = t.wait_text("site_c")
    check_eq(sorted(tree_rows(s)), [(2, "site_c"), (3, "site_a"), (5, "site_b"), (10, "main")],
             "fold: top-down: main's callees are the sites, with no wrapper below")
    t.prompt("W", "-")
    t.keys("3")
    s = t.wait(lambda x: "FOLDED" not in x and "xmalloc" in x, "folding stopped")
    check(s is not None, "fold: - stops folding")
    check_eq(t.quit(), 0, "wrappers: exit status")

    # ---- =: every cost as a column ----
    t = tui80(["phases.zst"], cwd=d)
    t.wait_text("Summary")
    t.keys("2", "=", "*")
    s = t.wait_text("allocated  function")
    capture("Top-down with every cost as a column (=)", s or "")
    cols = {}
    for ln in lines(s):
        mm = re.match(r"^ +(\d+) +(\d+) +(\d+) +(\d+) +(\d+)  [\u25be\u25b8\u00b7 ]*(\S+)$", ln)
        if mm:
            cols[mm.group(6)] = tuple(int(x) for x in mm.groups()[:5])
    check_eq(cols.get("main"), (jp["allocations"], jp["temporary"], jp["peak_heap_bytes"], jp["leaked_bytes"],
                                jp["allocated_bytes"]), "columns: main's are memprint's totals")
    check_eq(cols.get("phase_two"), (9, 3, 120066, 0, 135075), "columns: phase_two's, by construction")
    check_eq(cols.get("phase_three"), (2, 0, 60022, 60022, 60022), "columns: phase_three's, by construction")
    t.keys("=")
    s = t.wait_text("inclusive")
    check(s is not None and "allocated  function" not in s, "columns: = again shows the one cost")
    check_eq(t.quit(), 0, "columns: exit status")

    # ---- e: the source in $EDITOR ----
    editor = os.path.join(d, "editor.sh")
    args_file = os.path.join(d, "editor-args.txt")
    with open(editor, "w") as f:
        f.write("#!/bin/sh\nprintf '%%s\\n' \"$@\" > %s.tmp && mv %s.tmp %s\n" % (args_file, args_file, args_file))
    os.chmod(editor, 0o755)
    t = tui80(["phases.zst"], cwd=d, env={"VISUAL": "", "EDITOR": editor})
    t.wait_text("Summary")
    t.keys("4", "Home", "Down")
    s = t.wait_text("phase_two")
    t.keys("e")
    end = time.time() + 60
    while time.time() < end and not os.path.exists(args_file):
        time.sleep(0.1)
    got = open(args_file).read().split("\n")[:2] if os.path.exists(args_file) else []
    site = [e for e in jp["sections"]["peak_consumers"] if e["frames"][0]["function"] == "phase_two"]
    want = ["+%d" % site[0]["frames"][0]["line"], site[0]["frames"][0]["file"]] if site else None
    check_eq(got, want, "editor: EDITOR +LINE FILE of phase_two's frame, as memprint names it")
    s = t.wait_text("function (sorted by")
    check(s is not None and "phase_two" in s, "editor: the screen is drawn again after the editor")
    check_eq(t.quit(), 0, "editor: exit status")

    # ---- memtui BASE NEW: the Diff view (memprint --diff) ----
    d1 = os.path.join(d, "diff1.zst")
    d2 = os.path.join(d, "diff2.zst")
    check_eq(record([prog("diffprog"), "1"], d1).returncode, 0, "diffprog 1: memrec exit status")
    check_eq(record([prog("diffprog_pad"), "2"], d2).returncode, 0, "diffprog_pad 2: memrec exit status")
    r = run([MEMPRINT, "--diff", d1, d2, "--json"])
    check_eq(r.returncode, 0, "memprint --diff: exit status")
    jd = json.loads(r.stdout.decode())
    t = tui80(["-c", "leaked", "diff1.zst", "diff2.zst"], cwd=d)
    s = t.wait_text("largest change first")
    check(s is not None and "|  Diff  |" in s, "diff: two files open on the Diff view")
    capture("Diff of two recordings: memtui BASE NEW, cost leaked", s or "")
    check(s is not None and "leaked %d -> %d (%+d)" % (jd["base"]["leaked"], jd["new"]["leaked"],
                                                      jd["delta"]["leaked"]) in s,
          "diff: the totals are memprint --diff's")
    rows = {}
    for ln in lines(s):
        mm = re.match(r"^ +(\d+) +(\d+) +([-+]\d+)  [\u25be\u25b8\u00b7 ]*(\S+)$", ln)
        if mm:
            rows[mm.group(4)] = (int(mm.group(1)), int(mm.group(2)), int(mm.group(3)))
    for e in jd["changes"]["leaked"]:
        site = e["frames"][0]["function"]
        check_eq(rows.get(site), (e["base"], e["new"], e["delta"]), "diff: %s is memprint --diff's" % site)
    check_eq(rows.get("grow_site"), (30003, 60006, 30003), "diff: grow_site +3 x 10001, by construction")
    check_eq(rows.get("shrink_site"), (80004, 60003, -20001), "diff: shrink_site -20001, by construction")
    order = [n for n in ("grow_site", "shrink_site", "steady_site") if n in s]
    check(s is not None and s.index("grow_site") < s.index("shrink_site") < s.index("steady_site"),
          "diff: the largest change first (%s)" % order)
    t.keys("c")
    s = t.wait_text("allocated 170009 -> 180011")
    check(s is not None, "diff: c changes the cost (allocated: memprint's %d -> %d)" % (jd["base"]["allocated"],
                                                                                    jd["new"]["allocated"]))
    check_eq(t.quit(), 0, "diff: exit status")
finally:
    tmux("kill-server", check_rc=False)

out = ["<!-- views-captures:begin (written by tests/integration/test_memtui_views.py --update-docs; do not edit) -->"]
for title, text in captures:
    out += ["", "### " + title, "", "```", text, "```"]
out.append("<!-- views-captures:end -->")
block = "\n".join(out) + "\n"
with open(os.path.join(BUILD, "memtui_views_captures.md"), "w") as f:
    f.write(block)
if UPDATE_DOCS:
    doc = os.path.join(SRC, "docs", "memtui.md")
    with open(doc) as f:
        text = f.read()
    start = text.index("<!-- views-captures:begin")
    stop = text.index("<!-- views-captures:end -->") + len("<!-- views-captures:end -->\n")
    with open(doc, "w") as f:
        f.write(text[:start] + block + text[stop:])
    print("docs/memtui.md: %d captures written" % len(captures))
done()
