# SPDX-License-Identifier: MIT
"""MOST MEMORY GROWTH and growth_bytes_per_s (docs/definitions.md, "Memory
growth") on tests/progs/growth.c, whose one leaking site keeps 100,000
bytes per second beside a cache filled once, churn of temporaries and a
sawtooth: launched, attached with --pid after the cache filled (also
sampled at 4 KiB), and launched sampled at 4 KiB and 512 KiB. The leak ranks first within 15% (30%
sampled at 4 KiB), the cache, the sawtooth and the churn are not growth,
the whole heap's rate is within 15%, and --check on it passes and fails on
either side of the rate. Growth as a cost type: folded stacks, the SVG,
--diff, --group function and memtui's trees carry the same per-stack
rates, the folded total is the sum of the section's rates, and the filters
apply."""
import os
import re
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

RATE = 100000.0
NOT_GROWTH = ("fill_cache", "sawtooth_step", "churn")
MEMTUI = os.path.join(BUILD, "memtui")


def folded_growth(path, extra=()):
    """memprint --cost growth --folded: {stack: bytes/s}."""
    r = run([MEMPRINT, "--cost", "growth", "--folded", "-"] + list(extra) + [path])
    if r.returncode != 0:
        raise RuntimeError("memprint --folded failed: %s" % r.stderr.decode())
    out = {}
    for line in r.stdout.decode().splitlines():
        stack, value = line.rsplit(" ", 1)
        out[stack] = int(value)
    return out


def check_cost(path, j, name, share, extra=()):
    """The growth cost: the leak's stack alone and first, its rate within
    `share`, the folded total the sum of the section's rounded rates
    (each within 1 of the JSON's one decimal) and within `share` of the
    whole heap's rate. Returns the leak's folded figure."""
    f = folded_growth(path, extra)
    check(f and max(f, key=f.get).endswith(";leak_site"), "%s: folded growth: leak_site's stack first (%s)" % (name, f))
    for stack in f:
        for fn in NOT_GROWTH:
            check(fn not in stack.split(";"), "%s: folded growth: no %s (%s)" % (name, fn, stack))
    total = sum(f.values())
    within(total, RATE, share, "%s: folded growth total" % name)
    want = sum(e["growth_bytes_per_s"] for e in j["sections"]["most_growth"])
    n = len(j["sections"]["most_growth"])
    check(abs(total - want) <= n, "%s: folded growth total %d is the section's sum %.1f" % (name, total, want))
    within(total, j["growth_bytes_per_s"], share, "%s: folded growth total against growth_bytes_per_s" % name)
    return max(f.values()) if f else 0


def memtui_screen(path, keys, cost="growth", size="80x24"):
    r = run([MEMTUI, "--batch", "--size", size, "-c", cost, "--keys", keys, path])
    check_eq(r.returncode, 0, "memtui -c %s --keys %s: exit status" % (cost, keys))
    return r.stdout.decode()


def first_row(screen):
    """The first row of a tree view: (inclusive, self, name)."""
    for line in screen.splitlines():
        m = re.match(r"^\s+(\d+)\s+(\d+)\s+[\d.]+%\s+\S*\s*(\S+)$", line)
        if m:
            return int(m.group(1)), int(m.group(2)), m.group(3)
    return None


def memprint_json(path, extra=()):
    r = run([MEMPRINT, "--json", "-n", "20", "--no-builtin-suppressions"] + list(extra) + [path])
    if r.returncode != 0:
        raise RuntimeError("memprint failed: %s" % r.stderr.decode())
    return json.loads(r.stdout.decode())


def within(value, want, share, what):
    check(abs(value - want) <= share * want, "%s: %.0f within %.0f%% of %.0f" % (what, value, share * 100, want))


def top_function(entry):
    return [f["function"] for f in entry["frames"]]


def check_growth(j, name, share):
    """The leak first, at RATE within `share`; nothing of NOT_GROWTH."""
    g = j["sections"]["most_growth"]
    check(len(g) >= 1, "%s: a growing stack is reported" % name)
    if not g:
        return
    check("leak_site" in top_function(g[0]), "%s: leak_site ranks first (%s)" % (name, top_function(g[0])[:2]))
    within(g[0]["growth_bytes_per_s"], RATE, share, "%s: leak_site's rate" % name)
    check(g[0]["growth_r2"] >= 0.8 and g[0]["growth_steady"], "%s: leak_site's fit is steady" % name)
    check(g[0]["live_at_end_bytes"] > g[0]["live_at_start_bytes"], "%s: live bytes rose over the window" % name)
    for e in g:
        for f in NOT_GROWTH:
            check(f not in top_function(e), "%s: %s not reported as growth" % (name, f))
    # The other sections carry the same fit: the cache and the sawtooth
    # are there, not steady.
    for e in j["sections"]["peak_consumers"]:
        fn = top_function(e)
        if "fill_cache" in fn or "sawtooth_step" in fn:
            check(not e["growth_steady"], "%s: %s's fit is not steady (R2 %.2f)" % (name, fn[0], e["growth_r2"]))


def main():
    d = tmpdir()
    # Launched for 5 s: the cache fills before the first point.
    out = os.path.join(d, "launch.mrec")
    r = record([prog("growth"), "5"], out)
    check_eq(r.returncode, 0, "launch: memrec exit status")
    j = memprint_json(out)
    check_growth(j, "launch", 0.15)
    # From 1 s on, the cache was filled before the window: the whole heap
    # grows at the leak's rate.
    w = memprint_json(out, ["--from", "1"])
    check_growth(w, "launch --from 1", 0.15)
    check(w["growth_bytes_per_s"] is not None, "launch --from 1: growth_bytes_per_s measured")
    within(w["growth_bytes_per_s"], RATE, 0.15, "launch --from 1: the whole heap's rate")
    check_eq(w["growth"]["from_ms"], 1000, "launch --from 1: the fit starts at the window")
    for limit, code in ((RATE * 0.5, 1), (RATE * 2, 0)):
        c = run([MEMPRINT, "--from", "1", "--check", "growth_bytes_per_s<%d" % limit, out])
        check_eq(c.returncode, code, "--check growth_bytes_per_s<%d exit status" % limit)
    # The filters apply: the leak's stacks alone grow at the rate, the
    # rest does not grow.
    f = memprint_json(out, ["--function", "leak_site"])
    within(f["growth_bytes_per_s"], RATE, 0.15, "--function leak_site: the rate of the stacks kept")
    check(f["sections"]["most_growth"] and "leak_site" in top_function(f["sections"]["most_growth"][0]),
          "--function leak_site: leak_site ranks first")
    x = memprint_json(out, ["--exclude", "leak_site"])
    check(not any("leak_site" in top_function(e) for e in x["sections"]["most_growth"]),
          "--exclude leak_site: leak_site not ranked")
    check(abs(x["growth_bytes_per_s"]) < 0.15 * RATE,
          "--exclude leak_site: the rest does not grow (%d bytes/s)" % x["growth_bytes_per_s"])
    g = run([MEMPRINT, "--group", "site", out]).stdout.decode()
    sec = g.split("MOST MEMORY GROWTH, BY ALLOCATION SITE")[-1].split("\n\n")[0]
    check("bytes/s of steady growth in 1 call stack: leak_site" in sec, "--group site: the leak's site is ranked")
    # The text report: the section and the summary line.
    t = run([MEMPRINT, "--from", "1", out]).stdout.decode()
    check("MOST MEMORY GROWTH" in t and "leak_site" in t.split("MOST MEMORY GROWTH")[1].split("\n\n")[0],
          "text: MOST MEMORY GROWTH names leak_site")
    check("memory growth: " in t, "text: the summary says the heap's growth")

    # ---- growth as a cost type ----
    leak = check_cost(out, w, "launch --from 1", 0.15, ["--from", "1"])
    whole = memprint_json(out)
    whole_leak = check_cost(out, whole, "launch", 0.15)
    # The filters apply: the leak's stacks kept, its figure unchanged;
    # everything but the leak: no growth at all.
    check_eq(folded_growth(out, ["--from", "1", "--function", "leak_site"]), {"main;leak_site": leak},
             "--function leak_site --cost growth: the leak's figure alone")
    check_eq(folded_growth(out, ["--from", "1", "--exclude", "leak_site"]), {},
             "--exclude leak_site --cost growth: nothing grows")
    g = run([MEMPRINT, "--from", "1", "--group", "function", "--sections", "growth", out]).stdout.decode()
    sec = g.split("MOST MEMORY GROWTH, BY FUNCTION")[-1]
    check(re.search(r"\n  %d bytes/s of steady growth inclusive, %d self: leak_site " % (leak, leak), sec) is not None,
          "--group function: leak_site's inclusive and self growth are its folded figure")
    svg = run([MEMPRINT, "--from", "1", "--cost", "growth", "--svg", "-", out]).stdout.decode()
    check("leak_site" in svg and "growth (bytes/s)" in svg and "fill_cache" not in svg,
          "--svg --cost growth: leak_site in a flame graph of bytes/s, no fill_cache")
    # --diff of the recording with itself: both columns the same figure.
    r = run([MEMPRINT, "--from", "1", "--diff", out, out, "--cost", "growth", "--folded", "-"])
    check_eq(r.stdout.decode().strip(), "main;leak_site %d %d" % (leak, leak), "--diff --cost growth --folded")
    r = run([MEMPRINT, "--from", "1", "--json", "--diff", out, out])
    dj = json.loads(r.stdout.decode())
    check_eq((dj["base"]["growth"], dj["new"]["growth"], dj["delta"]["growth"]), (leak, leak, 0),
             "--diff --json: growth of base, new and the change")
    # memtui: the whole run's trees by growth, the grower first with
    # memprint's figure of the whole run; the summary's growth heading.
    if os.path.exists(MEMTUI):
        s3 = memtui_screen(out, "3")
        # The title holds the file's path: wide enough for it.
        check("cost: growth (bytes/s of steady growth)" in memtui_screen(out, "3", size="200x24"),
              "memtui -c growth: the title names the cost")
        # A site's self is what it allocated itself: all of its row.
        check_eq(first_row(s3), (whole_leak, whole_leak, "leak_site"), "memtui bottom-up by growth: leak_site first")
        s2 = memtui_screen(out, "2 Right")
        rows = [ln for ln in s2.splitlines() if re.match(r"^\s+\d+\s+\d+\s+[\d.]+%", ln)]
        check(len(rows) >= 2 and rows[1].split()[-1] == "leak_site" and int(rows[1].split()[0]) == whole_leak,
              "memtui top-down by growth: main, then leak_site (%s)" % rows[:2])
        s1 = run([MEMTUI, "--batch", "--size", "80x60", "-c", "growth", out]).stdout.decode()
        sec = s1.split("MOST MEMORY GROWTH (bytes/s)")[-1].splitlines()
        # memprint's MOST MEMORY GROWTH entry: the figure, its unit and share, the allocation call.
        check(len(sec) > 1 and re.match(r"^\s+%d\s+\S+ \S+/s\s+[\d.]+%%  leak_site at " % whole_leak, sec[1]) is not None,
              "memtui summary: MOST MEMORY GROWTH's first site is leak_site (%s)" % sec[1:2])
        # A window (view 6, w): the window's fit, memprint's --from/--to figure.
        win = folded_growth(out, ["--from", "1", "--to", "4"])
        sw = memtui_screen(out, "6 w 1000-4000 Enter 3")
        check("WINDOW 1.000-4.000 s" in sw and first_row(sw) == (win.get("main;leak_site"), win.get("main;leak_site"), "leak_site"),
              "memtui window 1-4 s by growth: leak_site first with memprint --from 1 --to 4's figure %s (%s)"
              % (win, first_row(sw)))
        # The summary's growth line: memprint's whole-run figure; in the
        # window, the window's fit.
        m = re.search(r"\nmemory growth: [^(\n]*\((-?\d+) bytes/s\) fitted over [\d.]+ s from 0.000 s", s1)
        check(m is not None and abs(int(m.group(1)) - whole["growth_bytes_per_s"]) <= 1,
              "memtui summary: the heap's growth line is memprint's growth_bytes_per_s %d (%s)"
              % (whole["growth_bytes_per_s"], m and m.group(0).strip()))
        sw = run([MEMTUI, "--batch", "--size", "100x30", "--keys", "6 w 1000-4000 Enter 1", out]).stdout.decode()
        wj = memprint_json(out, ["--from", "1", "--to", "4"])
        m = re.search(r"\nmemory growth: [^(\n]*\((-?\d+) bytes/s\) fitted over [\d.]+ s from 1.000 s", sw)
        check(m is not None and abs(int(m.group(1)) - wj["growth_bytes_per_s"]) <= 1,
              "memtui window summary: the window's growth line is memprint --from 1 --to 4's %d (%s)"
              % (wj["growth_bytes_per_s"], m and m.group(0).strip()))
        # The c key reaches growth from leaked (time is not recorded, and mapped
        # where nothing was mapped: passed over).
        mapped = memprint_json(out)["mapped_peak_bytes"]
        sc = memtui_screen(out, "c c c" if mapped else "c c", cost="leaked", size="200x24")
        check("cost: growth" in sc, "memtui: c from leaked through allocated (and mapped when mapped: %s) reaches "
              "growth" % mapped)
    else:
        skip_part("memtui", "memtui is not built")

    # Sampled at 4 KiB: estimates within 30%, marked '~'.
    out = os.path.join(d, "s4k.mrec")
    check_eq(record([prog("growth"), "5"], out, extra=["-s", "4K"]).returncode, 0, "-s 4K: memrec exit status")
    check_growth(memprint_json(out), "-s 4K", 0.30)
    w = memprint_json(out, ["--from", "1"])
    within(w["growth_bytes_per_s"], RATE, 0.30, "-s 4K --from 1: the whole heap's rate")
    t = run([MEMPRINT, out]).stdout.decode()
    check("memory growth: ~" in t and "  ~" in t.split("MOST MEMORY GROWTH")[1], "-s 4K: estimates marked '~'")
    check_cost(out, w, "-s 4K --from 1", 0.30, ["--from", "1"])
    svg = run([MEMPRINT, "--from", "1", "--cost", "growth", "--svg", "-", out]).stdout.decode()
    check("growth (bytes/s); sampled: ~estimates" in svg, "-s 4K --svg: the title says the figures are estimates")
    if os.path.exists(MEMTUI):
        s3 = memtui_screen(out, "3")
        check("cost: growth (~bytes/s of steady growth)" in memtui_screen(out, "3", size="200x24"),
              "-s 4K memtui: the cost marked '~'")
        row = first_row(s3)
        check(row is not None and row[2] == "leak_site", "-s 4K memtui bottom-up by growth: leak_site first")

    # Sampled at 512 KiB: a few seconds of the leak hold too few samples,
    # and the report says so.
    out = os.path.join(d, "s512k.mrec")
    check_eq(record([prog("growth"), "4"], out, extra=["-s", "512K"]).returncode, 0, "-s 512K: memrec exit status")
    t = run([MEMPRINT, out]).stdout.decode()
    sec = t.split("MOST MEMORY GROWTH")[1].split("\n\n")[0]
    check("sampled allocations in the window" in sec, "-s 512K: the section says there are too few samples")
    check("leak_site" not in sec, "-s 512K: no estimate from too few samples")

    # Attached after the cache filled, detached 4 s later; the same
    # sampled at 4 KiB, within 30%.
    for name, extra, share in (("attach", [], 0.15), ("attach -s 4K", ["-s", "4K"], 0.30)):
        p = subprocess.Popen([prog("growth"), "120"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = p.stdout.readline().decode().strip()
        check_eq(line, "ready", "%s: the program started" % name)
        out = os.path.join(d, "attach%d.mrec" % len(extra))
        rc, err = attach(p.pid, out, 4, extra=extra)
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)
        if rc != 0 and "ptrace" in err:
            skip_part("--pid", "memrec cannot attach here: %s" % err.strip())
            continue
        check_eq(rc, 0, "%s: memrec exit status (%s)" % (name, err.strip()))
        j = memprint_json(out)
        check(j["attached"], "%s: the file says attached" % name)
        check_growth(j, name, share)
        within(j["growth_bytes_per_s"], RATE, share, "%s: the whole heap's rate" % name)
        check_cost(out, j, name, share)
    done()


main()
