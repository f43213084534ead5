# SPDX-License-Identifier: MIT
"""memprint's analyses on recorded real programs, with exact figures
derived in the programs' header comments: time windows, --at, --thread,
--function/--exclude (every figure and export follows), the size
histogram, the timeline, the SVG flame graph (well-formed XML whose frame
widths sum to the summary's figure), --diff between two builds of one
program (matched by names, not addresses), --sections."""
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

SVG = "{http://www.w3.org/2000/svg}"
SUMMARY = SUMMARY_FIELD


def mp(args, what):
    r = run([MEMPRINT] + args)
    if r.returncode != 0:
        raise RuntimeError("%s: memprint %s failed: %s" % (what, " ".join(args), r.stderr.decode()))
    return r.stdout.decode()


def mpj(args, what):
    # Every leak, glibc's too, as the folded stacks, SVGs and threads count
    # them: memprint's built-in suppressions off (test_gate.py tests them).
    return json.loads(mp(["--json", "--no-builtin-suppressions"] + args, what))


def folded_sum(args, what, d):
    out = os.path.join(d, "x.folded")
    mp(["--folded", out] + args, what)
    with open(out) as f:
        return sum(int(line.rsplit(" ", 1)[1]) for line in f if line.strip())


def svg_frames(path):
    """(depth, cost, name) of every frame, in document (pre-)order."""
    root = ET.parse(path).getroot()
    frames = []
    for g in root.iter(SVG + "g"):
        if g.get("class") != "f":
            continue
        title = g.find(SVG + "title").text
        frames.append((int(g.get("data-d")), int(g.get("data-v")), title.split("\n")[0], g))
    return root, frames


def check_svg_sums(path, total, what):
    """The root is the total; children never exceed their parent; the
    frames' own costs (cost minus children's) sum to the total."""
    root, frames = svg_frames(path)
    check_eq(int(root.get("data-total")), total, "%s: svg total" % what)
    check(len(frames) > 0 and frames[0][0] == 0, "%s: svg has a root frame" % what)
    check_eq(frames[0][1], total, "%s: svg root frame cost" % what)
    width = float(frames[0][3].find(SVG + "rect").get("width"))
    check(abs(width - 1180.0) < 0.01 or total == 0, "%s: svg root frame spans the graph (%s px)" % (what, width))
    kids = [0] * len(frames)
    stack = []
    for i, (depth, cost, _, _) in enumerate(frames):
        while stack and frames[stack[-1]][0] >= depth:
            stack.pop()
        if stack:
            kids[stack[-1]] += cost
        stack.append(i)
    check(all(kids[i] <= frames[i][1] for i in range(len(frames))), "%s: children within their parent" % what)
    own = sum(frames[i][1] - kids[i] for i in range(len(frames)))
    check_eq(own, total, "%s: frames' own costs sum to the total" % what)
    return frames


d = tmpdir()

# ---- tests/progs/windows.c: windows, --at, threads, filters, sizes, timeline ----
ph = os.path.join(d, "windows.zst")
check_eq(record([prog("windows")], ph).returncode, 0, "windows: memrec exit status")
whole = mpj([ph], "windows")
check_eq(whole["allocations"], 178, "windows: calls (177 + the thread's DTV)")
check_eq(whole["peak_heap_bytes"], 1400120, "windows: peak")

w = mpj(["--from", "0.25", "--to", "0.75", ph], "window")
check_eq(w["allocations"], 20, "window [0.25, 0.75): calls")
check_eq(w["allocated_bytes"], 400020, "window: bytes allocated")
check_eq(w["peak_heap_bytes"], 400020, "window: peak")
check_eq(w["leaked_bytes"], 0, "window: leaked (freed in phase 3)")
check_eq(w["temporary"], 0, "window: temporary")
check_eq(w["earlier_freed_blocks"], 100, "window: blocks of phase 1 freed in it")
check_eq(w["earlier_freed_bytes"], 1000100, "window: their bytes")
check_eq((w["window_from_ms"], w["window_to_ms"]), (250, 750), "window: bounds in the JSON")
check_eq([e["calls"] for e in w["sections"]["most_calls"]], [20], "window: one stack (phase_two)")
text = mp(["--from", "0.25", "--to", "0.75", ph], "window text")
check("100 blocks (1000100 bytes) allocated before it and freed in it are not counted" in text,
      "window text: the one line on blocks freed inside")
check_eq(folded_sum(["--cost", "calls", "--from", "0.25", "--to", "0.75", ph], "window folded", d), 20,
         "window: folded calls")
w = mpj(["--from", "peak", "--to", "0.75", ph], "window from the peak")
check_eq((w["allocations"], w["window_from_ms"]), (20, whole["peak_heap_ms"]), "--from peak: phase 2, from the peak's tick")
w1 = mpj(["--to", "0.25", ph], "window to 0.25")
check_eq((w1["allocations"], w1["temporary"], w1["leaked_bytes"]), (150, 50, 0), "window [0, 0.25): phase 1")

a = mpj(["--at", "0.75", ph], "at 0.75")
check_eq(a["allocations"], 170, "--at 0.75: calls so far")
check_eq(a["leaked_bytes"], 400020, "--at 0.75: live then")
check_eq(a["leaked_allocations"], 20, "--at 0.75: live blocks")
check_eq(a["at_ms"], 750, "--at in the JSON")
a = mpj(["--at", "0.25", ph], "at 0.25")
check_eq((a["allocations"], a["leaked_bytes"], a["leaked_allocations"]), (150, 1000100, 100), "--at 0.25")
a = mpj(["--at", "peak", ph], "at peak")
# --at peak is the run to the end of the peak's clock tick (10 ms): phase
# 2's 20 blocks are all made by then. Phase 1's 100 frees usually fall in
# the same tick (400020 bytes live), but on a loaded machine the thread can
# be preempted between the last malloc and the frees, across a tick
# boundary (1400120 live, the peak itself): both are right, nothing else is.
check_eq(a["allocations"], 170, "--at peak: calls to the end of the peak's tick")
check(a["leaked_bytes"] in (400020, 1400120),
      "--at peak: live at the end of the peak's tick is phase 2's blocks, with phase 1's unless freed in that tick (%s)" %
      a["leaked_bytes"])
check_eq(a["at_ms"], whole["peak_heap_ms"] + 1, "--at peak: cut just after the peak's millisecond")

t = mpj(["--thread", "2", ph], "thread 2")
check_eq((t["allocations"], t["leaked_bytes"], t["leaked_allocations"]), (7, 280007, 7), "--thread 2: the worker")
t = mpj(["--thread", "1", ph], "thread 1")
check_eq(t["allocations"], 171, "--thread 1: main's calls")
check_eq(folded_sum(["--cost", "leaked", "--thread", "2", ph], "thread folded", d), 280007, "--thread 2: folded")

f = mpj(["--function", "phase_two", ph], "function")
check_eq((f["allocations"], f["peak_heap_bytes"], f["leaked_bytes"]), (20, 400020, 0), "--function phase_two")
f = mpj(["--exclude", "phase_one", ph], "exclude")
check_eq(f["allocations"], 28, "--exclude phase_one: 20 + 7 + DTV")
f = mpj(["--function", "phase_t", "--exclude", "two", ph], "function and exclude")
check_eq(f["allocations"], 7, "--function phase_t --exclude two: phase_three only")
check_eq(folded_sum(["--cost", "allocated", "--function", "phase_three", ph], "function folded", d), 280007,
         "--function: folded follows")
r = run([MEMPRINT, "--function", "(", ph])
check_eq(r.returncode, 2, "bad regular expression: usage exit status")

s = mpj(["--sizes", ph], "sizes")["sizes"]
buckets = {b["bucket"]: (b["min"], b["max"], b["calls"], b["bytes"], b["temporary"]) for b in s["buckets"]}
check_eq(buckets.get(10), (512, 1023, 50, 35000, 50), "sizes: bucket 10")
check_eq(buckets.get(14), (8192, 16383, 100, 1000100, 0), "sizes: bucket 14")
check_eq(buckets.get(15), (16384, 32767, 20, 400020, 0), "sizes: bucket 15")
check_eq(buckets.get(16), (32768, 65535, 7, 280007, 0), "sizes: bucket 16")
check_eq(s["calls"], 178, "sizes: calls")
check_eq(s["top_sizes"][:4], [{"size": 10001, "calls": 100, "temporary": 0}, {"size": 700, "calls": 50, "temporary": 50},
                              {"size": 20001, "calls": 20, "temporary": 0}, {"size": 40001, "calls": 7, "temporary": 0}],
         "sizes: most frequent")
s = mpj(["--sizes", "--from", "0.25", "--to", "0.75", ph], "window sizes")["sizes"]
check_eq([(b["bucket"], b["calls"]) for b in s["buckets"]], [(15, 20)], "sizes in the window")
s = mpj(["--sizes", "--by-stack", "-n", "3", ph], "sizes by stack")["sizes"]
check_eq([(e["function"], e["calls"], [(z["size"], z["calls"]) for z in e["sizes"]]) for e in s["by_stack"]],
         [("phase_one", 100, [(10001, 100)]), ("phase_one", 50, [(700, 50)]), ("phase_two", 20, [(20001, 20)])],
         "sizes by stack: the three busiest stacks")
tmps = os.path.join(d, "temporaries.zst")
check_eq(record([prog("temporaries")], tmps).returncode, 0, "temporaries: memrec exit status")
s = mpj(["--sizes", "--by-stack", "-n", "1", tmps], "temporaries by stack")["sizes"]["by_stack"]
check_eq([(z["size"], z["calls"]) for z in s[0]["sizes"]], [(60001 + i, 1) for i in range(10)],
         "sizes by stack: the loop's ten sizes, one call each")
text = mp(["--sizes", ph], "sizes text")
check("8192 - 16383" in text and "10001 bytes: 100 calls" in text, "sizes text: bucket and exact size")

tl = mpj(["--timeline", ph], "timeline")["timeline"]
check_eq((tl["peak_heap_bytes"], tl["peak_heap_ms"]), (whole["peak_heap_bytes"], whole["peak_heap_ms"]),
         "timeline peak is the summary's, with its time")
check_eq(len(tl["points"]), 1000, "timeline: 1000 points")
check_eq(max(p["max_heap"] for p in tl["points"]), whole["peak_heap_bytes"], "timeline: the points show the peak")
check_eq(tl["points"][-1]["ms"], whole["runtime_ms"], "timeline: the last point is the end")
check_eq(tl["points"][-1]["heap"], whole["leaked_bytes"], "timeline: the heap at the end is what leaked")
check(all(p["heap"] <= p["max_heap"] for p in tl["points"]), "timeline: values within their maxima")
tl = mpj(["--timeline", "--points", "50", ph], "timeline 50")["timeline"]
check_eq(len(tl["points"]), 50, "timeline: --points 50")
text = mp(["--timeline", ph], "timeline text")
check("peak (* ^): 1.34 MiB (1400120 bytes) at %.3f s" % (whole["peak_heap_ms"] / 1000.0) in text,
      "timeline text: the peak marked with its time")
wide = [line for line in text.splitlines() if len(line) > 80 and not line.startswith("program:")]
check(not wide, "timeline text: no line past 80 columns but the command line: %r" % wide[:1])
axis = [line for line in text.splitlines() if line.strip().startswith("0 s")]
check(axis and axis[0].rstrip().endswith("%.3f s" % (whole["runtime_ms"] / 1000.0)), "timeline text: the axis ends at the run's end: %r" % axis[:1])

# ---- SVG flame graphs ----
for name in ("chain", "cxx", "inlined", "threads", "mapper", "windows"):
    path = ph if name == "windows" else os.path.join(d, name + ".zst")
    if name != "windows":
        check_eq(record([prog(name)], path).returncode, 0, "%s: memrec exit status" % name)
    j = report_json(path)
    for cost, field in sorted(SUMMARY.items()):
        out = os.path.join(d, "%s.%s.svg" % (name, cost))
        mp(["--svg", out, "--cost", cost, path], "svg")
        check_svg_sums(out, j[field], "%s %s" % (name, cost))
out = os.path.join(d, "inlined.rev.svg")
mp(["--svg", out, "--cost", "calls", "--reverse", "--flame", os.path.join(d, "inlined.zst")], "svg reverse")
frames = check_svg_sums(out, 2, "inlined reversed")
check_eq([(n, c) for dep, c, n, _ in frames if dep == 1], [("make_block", 2)],
         "reversed: the allocation site (the inlined make_block) first")
check_eq(sorted(n for dep, _, n, _ in frames if dep == 2), ["build_index", "build_table"], "reversed: its callers")
out = os.path.join(d, "windows.window.svg")
mp(["--svg", out, "--cost", "allocated", "--from", "0.25", "--to", "0.75", ph], "svg window")
frames = check_svg_sums(out, 400020, "windows window svg")
title = ET.parse(out).getroot().find(SVG + "text").text
check("windows" in title and "allocated" in title and "0.250 s" in title, "svg title: program, cost, window")

# The embedded script, run by node under a minimal DOM (svg_shim.js): the
# search's matched share counts each stack once, a click zooms.
if shutil.which("node"):
    path = os.path.join(d, "inlined.calls.svg")
    root = ET.parse(path).getroot()
    script = root.find(SVG + "script").text
    shim_frames = []
    for g in root.iter(SVG + "g"):
        if g.get("class") != "f":
            continue
        rect = g.find(SVG + "rect")
        shim_frames.append({"attrs": {k: v for k, v in g.attrib.items()}, "title": g.find(SVG + "title").text,
                            "rect": {k: rect.get(k) for k in ("x", "width", "fill")},
                            "text": g.find(SVG + "text").text or ""})
    names = [f["title"].split("\n")[0] for f in shim_frames]

    def load_frames(path):
        out = []
        for g in ET.parse(path).getroot().iter(SVG + "g"):
            if g.get("class") != "f":
                continue
            rect = g.find(SVG + "rect")
            out.append({"attrs": {k: v for k, v in g.attrib.items()}, "title": g.find(SVG + "title").text,
                        "rect": {k: rect.get(k) for k in ("x", "width", "fill")},
                        "text": g.find(SVG + "text").text or ""})
        return out

    def load_undrawn(path):
        for g in ET.parse(path).getroot().iter(SVG + "g"):
            if g.get("id") == "undrawn":
                return {"f": g.get("data-f"), "names": [t.text or "" for t in g.iter(SVG + "text")]}
        return None

    def shim(search, click, frames_in=None, reset=False, undrawn=None, unit="calls", script_in=None):
        inp = os.path.join(d, "shim.json")
        with open(inp, "w") as fh:
            json.dump({"script": script_in or script, "unit": unit, "frames": frames_in or shim_frames,
                       "undrawn": undrawn, "search": search, "click": click, "reset": reset}, fh)
        r = run(["node", os.path.join(os.path.dirname(os.path.abspath(__file__)), "svg_shim.js"), inp])
        check_eq(r.returncode, 0, "svg script under node (%s)" % r.stderr.decode()[-300:])
        return json.loads(r.stdout.decode() or "{}")

    out = shim("make_block|build_table", None)
    # build_table's stack (1 call) holds make_block: counted once; build_index's make_block adds 1.
    check_eq(out.get("matched"), "Matched: 100.00% (2 calls)", "svg search: matched share, each stack once")
    check_eq(sum(1 for r in out["rects"] if r["fill"] == "rgb(230,0,230)"), 3, "svg search: three frames highlighted")
    out = shim("build_index", names.index("build_table"))
    check_eq(out.get("matched"), "Matched: 50.00% (1 calls)", "svg search: one stack")
    zoomed = out["rects"][names.index("build_table")]
    check(abs(zoomed["width"] - 1180) < 0.01 and abs(zoomed["x"] - 10) < 0.01, "svg click: the frame fills the width")
    check_eq(out["rects"][names.index("build_index")]["display"], "none", "svg click: frames beside it hidden")
    check_eq(out["rects"][0]["display"], "", "svg click: the root stays, above")

    # A frame too narrow for its name has an empty <text> (no child node in
    # a browser): zooming and resetting must go through every frame, and the
    # reset must give back the graph as drawn (threads: 6 of its 11 frames).
    for name, reverse in (("threads", False), ("threads", True)):
        path = os.path.join(d, "%s.shim%s.svg" % (name, ".rev" if reverse else ""))
        mp(["--svg", path, "--cost", "peak"] + (["--reverse"] if reverse else []) + [os.path.join(d, name + ".zst")],
           "svg for the script")
        fr = load_frames(path)
        what = "svg script on %s%s" % (name, " --reverse" if reverse else "")
        check(sum(1 for f in fr if not f["text"]) >= 2, "%s: frames with an empty text (%d of %d)" %
              (what, sum(1 for f in fr if not f["text"]), len(fr)))
        deepest = max(range(len(fr)), key=lambda i: int(fr[i]["attrs"]["data-d"]))
        out = shim("", deepest, fr, reset=True)
        drawn = [{"x": float(f["rect"]["x"]), "width": float(f["rect"]["width"]), "display": ""} for f in fr]
        got = [{"x": r["x"], "width": r["width"], "display": r["display"]} for r in out.get("rects", [])]
        check_eq(got, drawn, "%s: zoom into the deepest frame, then reset: every frame back as drawn" % what)
        check_eq([r["text"] for r in out.get("rects", [])], [f["text"] for f in fr],
                 "%s: after the reset, every frame's text as drawn" % what)

    # Frames too narrow to draw count in the search's share, as in the
    # folded stacks: time_sizes' small_site allocates 200,000 x 20 bytes
    # beside big_site's 2,000 x 41943041 (0.005%: 0.06 px of 1180).
    ts = os.path.join(d, "time_sizes.zst")
    check_eq(record([prog("time_sizes")], ts).returncode, 0, "time_sizes: memrec exit status")
    path = os.path.join(d, "time_sizes.allocated.svg")
    mp(["--svg", path, "--cost", "allocated", ts], "svg of time_sizes")
    fr, und = load_frames(path), load_undrawn(path)
    check(und is not None and "small_site" in und["names"], "svg: small_site listed among the undrawn frames")
    check(not any("small_site" in f["title"] for f in fr), "svg: small_site is not drawn")
    ts_script = ET.parse(path).getroot().find(SVG + "script").text
    out = shim("small_site", None, fr, undrawn=und, unit="bytes", script_in=ts_script)
    check_eq(out.get("matched"), "Matched: 0.00% (4000000 bytes)", "svg search: an undrawn frame's share counts")
    out = shim("main", None, fr, undrawn=und, unit="bytes", script_in=ts_script)
    check_eq(out.get("matched"), "Matched: 100.00% (83890082000 bytes)", "svg search: main counted once, with what is under it")
    out = shim("site", None, fr, undrawn=und, unit="bytes", script_in=ts_script)
    check_eq(out.get("matched"), "Matched: 100.00% (83890082000 bytes)", "svg search: big_site and small_site, each once")
else:
    skip_part("the svg's script (zoom, search)", "node is not installed")

# heaptrack_print's flame graph of the same program: the same totals but for
# the documented differences (its own emergency pool in a C program:
# docs/definitions.md), as the folded stacks (test_analyses.py).
if shutil.which("heaptrack") and shutil.which("heaptrack_print"):
    ht = os.path.join(d, "ht_inlined")
    check_eq(run(["heaptrack", "-o", ht, prog("inlined")]).returncode, 0, "heaptrack inlined: exit status")
    for ht_cost, ours, delta in (("allocations", "calls", 1), ("peak", "peak", 72704), ("leaked", "leaked", 0)):
        fg = os.path.join(d, "ht_inlined.%s" % ht_cost)
        check_eq(run(["heaptrack_print", "--flamegraph-cost-type", ht_cost, "-F", fg, ht + ".zst"]).returncode, 0,
                 "heaptrack_print -F %s" % ht_cost)
        with open(fg) as fh:
            total = sum(int(line.rsplit(" ", 1)[1]) for line in fh if line.strip())
        root, frames = svg_frames(os.path.join(d, "inlined.%s.svg" % ours))
        check_eq(total - frames[0][1], delta, "inlined: heaptrack_print -F %s minus the svg root's %s" % (ht_cost, ours))
else:
    skip_part("heaptrack_print -F totals against the svg", "heaptrack is not installed")

# ---- --diff: two builds, known changes ----
base = os.path.join(d, "diff1.zst")
new = os.path.join(d, "diff2.zst")
check_eq(record([prog("diffprog"), "1"], base).returncode, 0, "diffprog 1")
check_eq(record([prog("diffprog_pad"), "2"], new).returncode, 0, "diffprog_pad 2")
nm = {}
for p in ("diffprog", "diffprog_pad"):
    out = subprocess.run(["nm", prog(p)], stdout=subprocess.PIPE).stdout.decode()
    nm[p] = {l.split()[2]: l.split()[0] for l in out.splitlines() if l.endswith("_site")}
check(nm["diffprog"].get("grow_site") != nm["diffprog_pad"].get("grow_site"), "the two builds' sites have other addresses")
j = mpj(["--diff", base, new], "diff")
# growth 0: diffprog allocates and exits within a few ms, too short a run
# to fit (docs/definitions.md, "Memory growth"); unreachable 0: every block
# it leaks is held by a global at the end.
check_eq(j["base"], {"calls": 9, "temporary": 2, "peak": 140008, "leaked": 110007, "allocated": 170009, "mapped": 0,
                     "time": None, "growth": 0, "unreachable": 0}, "diff: base figures")
check_eq(j["new"], {"calls": 11, "temporary": 2, "peak": 150010, "leaked": 120009, "allocated": 180011, "mapped": 0,
                    "time": None, "growth": 0, "unreachable": 0}, "diff: new figures")
check_eq(j["delta"], {"calls": 2, "temporary": 0, "peak": 10002, "leaked": 10002, "allocated": 10002, "mapped": 0,
                      "time": None, "growth": 0, "unreachable": 0}, "diff: deltas")


def changes(cost):
    return [(c["delta"], c["frames"][0]["function"], os.path.basename(c["frames"][0]["file"] or ""))
            for c in j["changes"][cost]]


check_eq(changes("calls"), [(3, "grow_site", "diffprog.c"), (-1, "shrink_site", "diffprog.c")], "diff: calls changed")
check_eq(changes("leaked"), [(30003, "grow_site", "diffprog.c"), (-20001, "shrink_site", "diffprog.c")],
         "diff: leaked changed")
check_eq(changes("temporary"), [], "diff: steady_site unchanged")
text = mp(["--diff", base, new], "diff text")
check("+3 (3 -> 6)" in text and "-20001 (80004 -> 60003)" in text, "diff text: changes with both figures")
out = os.path.join(d, "diff.folded")
mp(["--diff", base, new, "--folded", out, "--cost", "leaked"], "diff folded")
with open(out) as fh:
    lines = sorted(fh.read().splitlines())
check_eq(lines, ["main;grow_site 30003 60006", "main;shrink_site 80004 60003"], "diff folded: base and new per stack")
out = os.path.join(d, "diff.svg")
mp(["--diff", base, new, "--svg", out, "--cost", "leaked"], "diff svg")
frames = check_svg_sums(out, 120009, "diff svg (widths: new)")
check_eq(int(frames[0][3].get("data-base")), 110007, "diff svg: the root's base")
fills = {n: g.find(SVG + "rect").get("fill") for _, _, n, g in frames}
check(fills["grow_site"].startswith("rgb(255,") and fills["shrink_site"].endswith(",255)"),
      "diff svg: grew red, shrank blue (%s, %s)" % (fills["grow_site"], fills["shrink_site"]))

# ---- readable reports ----
j = mpj(["--sections", "calls,leaked", ph], "sections")
check_eq(sorted(j["sections"]), ["most_calls", "most_leaked"], "--sections: JSON sections")
text = mp(["--sections", "leaked", ph], "sections text")
check("MOST MEMORY LEAKED" in text and "MOST CALLS" not in text and "PEAK MEMORY CONSUMERS" not in text,
      "--sections: text sections")
# Grouped by allocation site: the inlined make_block is one site with both callers' stacks below.
inl = os.path.join(d, "inlined.zst")
text = mp(["--group", "site", "--sections", "calls", inl], "group site")
check("2 calls in 2 call stacks: make_block at " in text, "--group site: one site, two stacks")
check("#1  build_table at" in text and "#1  build_index at" in text, "--group site: the callers below the site")
check("MOST MEMORY LEAKED" not in text, "--group site follows --sections")
text = mp(["--group", "function", "--sections", "leaked", inl], "group function")
check("10001 bytes leaked inclusive, 10001 self: make_block at" in text, "--group function: make_block's self cost")
check("10001 bytes leaked inclusive, 0 self: build_table at" in text, "--group function: its caller, inclusive only")
r = run([MEMPRINT, "--group", "site", "--json", inl])
check_eq(r.returncode, 2, "--group with --json: usage exit status")

# The threads section: each worker of tests/progs/threads (EXPECTED.md)
# makes 5 calls, 2 temporaries, leaks 41001 + i; the rows sum to the summary.
thr = os.path.join(d, "threads.zst")
j = mpj(["--threads", thr], "threads section")
rows = j["threads_section"]
workers = sorted((r for r in rows if r["calls"] == 5), key=lambda r: r["leaked_bytes"])
check_eq([(r["temporary"], r["leaked_bytes"], r["leaked_allocations"]) for r in workers],
         [(2, 41001 + i, 1) for i in range(4)], "--threads: the four workers")
for key, field in (("calls", "allocations"), ("temporary", "temporary"), ("peak_bytes", "peak_heap_bytes"),
                   ("leaked_bytes", "leaked_bytes"), ("allocated_bytes", "allocated_bytes")):
    check_eq(sum(r[key] for r in rows), j[field], "--threads: rows' %s sum to the summary" % key)
j = mpj(["--threads", ph], "windows threads")
check_eq([(r["thread"], r["calls"], r["peak_bytes"], r["leaked_bytes"]) for r in j["threads_section"]],
         [(1, 171, 1400120, whole["leaked_bytes"] - 280007), (2, 7, 0, 280007)], "--threads: windows' two threads")
text = mp(["--threads", "--sections", "leaked", ph], "threads text")
check("THREADS" in text and "280007" in text, "--threads: text section")
r = run([MEMPRINT, "--threads", "--from", "1", ph])
check_eq(r.returncode, 2, "--threads with a window: usage exit status")

# Long C++ template names: shortened in text, full in JSON and with --full-names.
if os.path.exists(prog("templates")):
    tp = os.path.join(d, "templates.zst")
    check_eq(record([prog("templates")], tp).returncode, 0, "templates: memrec exit status")
    j = report_json(tp)
    check_eq((j["allocations"], j["peak_heap_bytes"]), (5, 72896), "templates: calls and peak")
    text = mp(["--sections", "calls", tp], "templates text")
    check("std::vector<…>::push_back(…) at " in text, "templates: shortened name in text")
    check("std::allocator<std::pair" not in text, "templates: no long template list in text")
    full = mp(["--sections", "calls", "--full-names", tp], "templates full")
    check("std::vector<std::pair<int, long>, std::allocator<std::pair<int, long> > >::push_back(" in full,
          "templates: --full-names")
    names = [f["function"] for e in j["sections"]["most_calls"] for f in e["frames"] if f["function"]]
    check(any(n.startswith("std::vector<std::pair<int, long>, std::allocator") for n in names),
          "templates: JSON keeps full names")
else:
    skip_part("shortened C++ names", "no C++ compiler: tests/progs/templates.cpp not built")

r = run([MEMPRINT, "--sections", "bogus", ph])
check_eq(r.returncode, 2, "bad --sections: usage exit status")
r = run([MEMPRINT, "--at", "1", "--from", "0", ph])
check_eq(r.returncode, 2, "--at with --from: usage exit status")
r = run([MEMPRINT, "--from", "x", ph])
check_eq(r.returncode, 2, "bad time: usage exit status")
r = run([MEMPRINT, "--svg", os.path.join(d, "no", "such", "x.svg"), ph])
check_eq(r.returncode, 1, "unwritable --svg: exit status 1")
check(not os.path.exists(os.path.join(d, "no")), "unwritable --svg: nothing written")

done()
