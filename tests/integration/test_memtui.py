# SPDX-License-Identifier: MIT
"""memtui driven in tmux, as a person would: keys sent with send-keys, the
screen read with capture-pane, on recordings of tests/progs/ programs whose
figures are known by construction (phases.c, slow.c) and of a program
whose function name holds an escape sequence. Every wait polls with a
timeout: no fixed sleep decides a result.

With --update-docs, the screens captured here replace the captures in
docs/memtui.md (between its capture markers); every run writes them to
the build directory as memtui_captures.md."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

MEMTUI = os.path.join(BUILD, "memtui")
UPDATE_DOCS = "--update-docs" in sys.argv
if not shutil.which("tmux"):
    skip("tmux is not installed (scripts/deps.sh installs it)")
if not os.path.exists(MEMTUI):
    skip("memtui is not built")

from tmuxtui import *  # noqa: E402,F403

captures = []  # (title, text) for docs/memtui.md


def capture(title, tui):
    """Keep the screen for the docs; runs of empty rows are shortened to one marker line."""
    out, empty = [], 0
    for line in tui.screen().rstrip("\n").split("\n") + ["<end>"]:
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


d = tmpdir()
# A session that keeps our tmux server up between the tests' sessions.
tmux("new-session", "-d", "-s", "keeper", "sleep 3600")
try:
    # ---- recordings ----
    phases = os.path.join(d, "phases.zst")
    check_eq(record([prog("phases")], phases).returncode, 0, "phases: memrec exit status")
    rc, printed, _ = report_text(phases)
    check_eq(rc, 0, "phases: memprint exit status")
    summary_lines = printed.split("\n\n")[0].split("\n")

    # ---- summary: memprint's lines, exactly ----
    t = Tui(["-c", "calls", "phases.zst"], cwd=d)
    s = t.wait_text("MOST CALLS TO ALLOCATION FUNCTIONS")
    check(s is not None, "summary: shown")
    for want in summary_lines:
        check(want in lines(s), "summary line as memprint prints it: %s" % want)
    check("calls to allocation functions: 15 (" in s, "summary: 15 calls (by construction)")
    check("total memory leaked: 58.62 KiB (60022 bytes) in 2 blocks" in s, "summary: leaked 60022 bytes in 2 blocks")
    check("peak heap memory consumption: 214.96 KiB (220116 bytes)" in s, "summary: peak 220116 bytes")
    check(re.search(r"^\s+6 calls +40\.0%  phase_two at phases\.c:62$", s, re.M) is not None,
          "summary: top site by calls is phase_two with 6 (40.0%), memprint's first entry")
    capture("Summary", t)

    # ---- top-down: main > phase_two > scratch ----
    t.keys("2")
    s = t.wait_text(re.compile(r"\+ main$|\u25b8 main$", re.M))
    check(s is not None, "top-down: main shown collapsed")
    t.keys("Right")
    s = t.wait_text(re.compile(r"phase_two$", re.M))
    check_eq(numbers(row(s, "main"))[:2], [15, 0], "top-down: main inclusive 15 calls, self 0")
    check_eq(numbers(row(s, "phase_two"))[:2], [9, 6], "top-down: phase_two inclusive 9, self 6")
    t.keys("Down", "Right")
    s = t.wait_text(re.compile(r"^\s+3\s+3\s+20\.00%\s+(?:\u00b7 )?scratch$", re.M))
    check(s is not None, "top-down: path expanded down to scratch (3 calls, 20% of all)")
    capture("Top-down (cost: calls)", t)

    # ---- bottom-up: the site scratch with its exact count, its callers ----
    t.keys("3")
    s = t.wait_text(re.compile(r"allocation site", re.M))
    # A site's self cost is what it allocated itself: all of its cost.
    check_eq(numbers(row(s, "scratch"))[:2], [3, 3], "bottom-up: site scratch, 3 calls")
    check_eq(numbers(row(s, "phase_one"))[:2], [4, 4], "bottom-up: site phase_one, 4 calls")
    # Select scratch and open its callers.
    t.keys("/")
    t.literal("scratch")
    t.keys("Enter", "Right")

    def caller_of_scratch(x):
        ls = lines(x)
        at = [i for i, ln in enumerate(ls) if ln.endswith(" scratch")]
        return at and at[0] + 1 < len(ls) and re.match(r"^\s+3\s+0\s+20\.00%\s+[-+\u25b8\u25be] phase_two$",
                                                        ls[at[0] + 1]) is not None
    s = t.wait(caller_of_scratch, "callers of scratch")
    check(s is not None, "bottom-up: scratch's caller phase_two with 3 calls")
    capture("Bottom-up (cost: calls), scratch expanded into its callers", t)

    # ---- search: highlighted hit, n/N ----
    t.keys("2", "/")
    t.literal("three")
    t.keys("Enter")
    s = t.wait_text(re.compile(r"phase_three$", re.M))
    esc = t.screen(escapes=True)
    hit = [line for line in esc.split("\n") if "phase_" in line and "three" in line]
    check(len(hit) == 1 and sgr(hit[0], 7), "search: the hit's row is selected (reverse video)")
    check(len(hit) == 1 and sgr(hit[0], 4), "search: the match is highlighted (underlined)")
    check("no match" not in s, "search: found")
    t.keys("n")
    s = t.wait_text("'three'")
    check("no match" not in t.screen(), "search: n finds it again (wraps)")
    t.keys("/")
    t.literal("nosuchfunction")
    t.keys("Enter")
    check(t.wait_text("no match for 'nosuchfunction'") is not None, "search: a miss is said")

    # ---- cost type switch: the order changes ----
    t.keys("4")
    s = t.wait_text("function (sorted by inclusive")
    order_calls = [ln.split()[-1] for ln in lines(s) if re.match(r"^\s+\d+\s+\d+\s+[\d.]+%\s+\w+$", ln)]
    check_eq(order_calls[:5], ["main", "phase_two", "phase_one", "scratch", "phase_three"],
             "functions by calls: order")
    capture("Functions (cost: calls)", t)
    t.keys("c", "c", "c")  # calls -> temporary -> peak -> leaked
    s = t.wait_text("cost: leaked")
    order_leaked = [ln.split()[-1] for ln in lines(s) if re.match(r"^\s+\d+\s+\d+\s+[\d.]+%\s+\w+$", ln)]
    check_eq(order_leaked[:2], ["main", "phase_three"], "functions by leaked: phase_three first after main")
    check(order_calls != order_leaked, "cost switch changes the order")
    check_eq(numbers(row(s, "phase_three"))[:2], [60022, 60022], "functions: phase_three leaked 60022 bytes")
    # Callers and callees of phase_two.
    # leaked -> allocated -> (mapped: nothing mapped; time: not recorded) growth -> unreachable -> calls
    t.keys("c", "c", "c", "c")
    t.wait_text("cost: calls")
    t.keys("/")
    t.literal("phase_two")
    t.keys("Enter", "Enter")
    s = t.wait_text("CALLEES (1)")
    check(s is not None and "CALLERS (1)" in s, "functions: phase_two has one caller and one callee")
    check_eq(numbers(row(s, "scratch"))[:1], [3], "functions: callee scratch through 3 calls")
    check_eq(numbers(row(s, "main"))[:1], [9], "functions: caller main through 9 calls")
    capture("Functions: callers and callees of phase_two", t)
    t.keys("BSpace")
    t.wait_text("function (sorted by")

    # ---- frame detail ----
    t.keys("d")
    s = t.wait_text("FRAME DETAIL")
    check(s is not None and re.search(r"file:\s+\S*phases\.c:\d+", s) is not None, "detail: file:line")
    check(s is not None and "inlined:  no" in s, "detail: not inlined")
    check(s is not None and re.search(r"^>\s*\d+\s+", s, re.M) is not None, "detail: the source line marked")
    capture("Functions with the frame detail (d)", t)
    t.keys("d")

    # ---- flame graph: the widest frame under main is phase_two (peak) ----
    t.keys("5", "c", "c")  # calls -> temporary -> peak
    s = t.wait_text("cost: peak")
    rows = [ln for ln in s.split("\n") if ln.startswith("|")]
    check(len(rows) >= 3 and rows[0].startswith("|[total]") and rows[1].startswith("|main"),
          "flame graph: [total] then main across the width")
    if len(rows) >= 3:
        cells = [(m.start(), m.group(1)) for m in re.finditer(r"\|([^|]*)", rows[2].rstrip())]
        widths = {}
        for i, (x, text) in enumerate(cells):
            end = cells[i + 1][0] if i + 1 < len(cells) else 120
            widths[text.strip()] = end - x
        widest = max(widths, key=widths.get)
        check_eq(widest, "phase_two", "flame graph: widest frame under main")
        check_eq(widths.get("phase_two"), 120066 * 120 // 220116, "flame graph: phase_two's width (peak share)")
    capture("Flame graph (cost: peak)", t)
    t.keys("Down", "Down", "Enter")
    s = t.wait(lambda x: x.split("\n")[3].startswith("|phase_two"), "zoomed into phase_two")
    check(s is not None, "flame graph: Enter zooms into phase_two")
    t.keys("BSpace")
    check(t.wait(lambda x: x.split("\n")[3].startswith("|main"), "zoomed out") is not None,
          "flame graph: Backspace zooms out")

    # ---- over time: chart, peak, then a window ----
    t.keys("6")
    s = t.wait_text("OVER TIME")
    check(s is not None and re.search(r"peak 214\.96 KiB \(220116 bytes\) at \d+\.\d{3} s", s) is not None,
          "over time: the peak is named, with its time")
    check(s is not None and re.search(r"P\s*$", s, re.M) is not None, "over time: the peak is marked")
    check(s is not None and "0.000s" in s and "214.96 KiB" in s, "over time: time and byte axes")
    capture("Over time", t)
    t.keys("w")
    t.literal("500-1500")
    t.keys("Enter")
    s = t.wait_text("WINDOW 0.500-1.500 s")
    check(s is not None, "window: active line shown")
    capture("Over time with the window 500-1500 ms", t)
    t.keys("1")
    s = t.wait_text("calls to allocation functions: 9 (")
    check(s is not None, "window: 9 calls (phase_two and scratch, by construction)")
    for want in ("temporary allocations: 3 (", "peak heap memory consumption: 122.14 KiB (125069 bytes)",
                 "total memory leaked: 0 B (0 bytes) in 0 blocks", "total bytes allocated: 131.91 KiB (135075 bytes)"):
        check(s is not None and want in s, "window summary: %s" % want)
    check(s is not None and "WINDOW 0.500-1.500 s" in s, "window: the line shows on every view")
    # The same window through memprint: the same library, the same figures.
    r = run([MEMPRINT, "--from", "0.5", "--to", "1.5", phases])
    mp = r.stdout.decode()
    check_eq(r.returncode, 0, "memprint --from 0.5 --to 1.5: exit status")
    for want in ("calls to allocation functions: 9 (", "temporary allocations: 3 (",
                 "peak heap memory consumption: 122.14 KiB (125069 bytes)",
                 "total memory leaked: 0 B (0 bytes) in 0 blocks", "total bytes allocated: 131.91 KiB (135075 bytes)"):
        check(want in mp and s is not None and want in s, "window: memprint says as memtui: %s" % want)
    capture("Summary restricted to the window", t)
    t.keys("2")
    s = t.wait_text("phase_two")
    check_eq(numbers(row(s, "main"))[:1], [125069], "window: top-down main's peak is the window's, 125069")
    check(row(s, "phase_one") is None and row(s, "phase_three") is None, "window: other phases gone")
    t.keys("x")
    s = t.wait(lambda x: "WINDOW" not in x, "window cleared")
    check(s is not None and numbers(row(s, "main"))[:1] == [220116], "window: x clears it (peak 220116 again)")
    # Marking with m: a window from the chart's first to its last column holds every allocation.
    t.keys("6", "Home", "m", "End", "m")
    s = t.wait_text("WINDOW 0.000-")
    check(s is not None, "window: set with m ... m over the chart")
    t.keys("1")
    check(t.wait_text("calls to allocation functions: 15 (") is not None, "window: the whole chart holds 15 calls")
    t.keys("x")

    # ---- help ----
    t.keys("?")
    s = t.wait_text("memtui help")
    for key in ("Tab / Shift+Tab", "PgUp PgDn", "Home End", "Enter", "Left, h", "c / C", "n / N"):
        check(s is not None and key in s, "help lists %r" % key)
    capture("Help", t)
    t.keys("End")
    s = t.wait_text("quit (Ctrl+C too)")
    check(s is not None and "  q  " in s, "help lists 'q' at its end")
    t.keys("Escape")
    t.wait(lambda x: "memtui help" not in x, "help closed")

    # ---- resize to 80x24 and back: the selection stays ----
    t.keys("2", "Home", "Right", "Down")
    s = t.wait(lambda x: re.search(r"\d+% +\S+ phase_two$", x, re.M) is not None, "top-down on phase_two")
    before = selected_rows(t, "phase_")
    tmux("resize-window", "-t", t.name, "-x", "80", "-y", "24")
    s = t.wait(lambda x: len(x.rstrip("\n").split("\n")) == 24, "24 lines")
    check(s is not None and max(len(ln) for ln in s.split("\n")) <= 80, "resize: 80x24 drawn within 80 columns")
    after = selected_rows(t, "phase_")
    check(len(before) == 1 and len(after) == 1 and "phase_two" in after[0], "resize: the selection stays")
    capture("Top-down at 80x24", t)
    tmux("resize-window", "-t", t.name, "-x", "120", "-y", "40")
    s = t.wait(lambda x: len(x.rstrip("\n").split("\n")) == 40, "40 lines")
    after = selected_rows(t, "phase_")
    check(len(after) == 1 and "phase_two" in after[0], "resize back: the selection stays")

    # ---- mouse: a click selects a row (xterm X10 report, as the terminal sends it) ----
    s = t.screen()
    y = next((i for i, ln in enumerate(lines(s)) if ln.endswith(" main")), None)
    if y is not None:
        t.literal("\x1b[M%c%c%c" % (32, 32 + 10, 32 + y + 1))
        t.literal("\x1b[M%c%c%c" % (35, 32 + 10, 32 + y + 1))
        ok = t.wait(lambda x: any(ln.rstrip().endswith("main") for ln in selected_rows(t, "main")), "click on main",
                    timeout=10)
        check(ok is not None, "mouse: a click selects the row")

    # ---- q restores the terminal ----
    t.keys("q")
    restored(t, "q", 0)
    t.close()

    # ---- Ctrl+C and SIGTERM restore it too; a crash as well ----
    t = Tui(["phases.zst"], cwd=d)
    t.wait_text("MOST CALLS")
    t.keys("C-c")
    restored(t, "Ctrl+C", 130)
    t.close()
    for sig, status in ((signal.SIGTERM, 128 + 15), (signal.SIGSEGV, 128 + 11), (signal.SIGABRT, 128 + 6)):
        t = Tui(["phases.zst"], cwd=d, env={"ASAN_OPTIONS": "handle_segv=0:handle_abort=0:detect_leaks=0"})
        t.wait_text("MOST CALLS")
        pid = t.memtui_pid()
        check(pid is not None, "%s: memtui's pid found" % sig.name)
        if pid:
            # env execs memtui: the pid is memtui's once the screen is up.
            os.kill(pid, sig)
            restored(t, sig.name, status)
        t.close()

    # ---- NO_COLOR ----
    def sgr_colours(text):
        return re.findall(r"\x1b\[[0-9;]*(?:3[0-7]|4[0-7]|38;5;\d+|48;5;\d+)[0-9;]*m", text)

    t = Tui(["phases.zst"], cwd=d)
    t.wait_text("MOST CALLS")
    check(len(sgr_colours(t.screen(escapes=True))) > 0, "colours without NO_COLOR")
    t.keys("q")
    t.finished()
    t.close()
    t = Tui(["phases.zst"], cwd=d, env={"NO_COLOR": "1"})
    t.wait_text("MOST CALLS")
    t.keys("2")
    t.wait_text("inclusive")
    check_eq(sgr_colours(t.screen(escapes=True)), [], "NO_COLOR: no colour on screen")
    check(sgr(t.screen(escapes=True), 7), "NO_COLOR: the selection is still shown (reverse video)")
    t.keys("q")
    t.finished()
    t.close()

    # ---- ASCII locale ----
    t = Tui(["phases.zst"], cwd=d, env={"LANG": "C", "LC_ALL": "C"})
    t.wait_text("MOST CALLS")
    t.keys("2", "Right")
    s = t.wait_text(re.compile(r"- main$", re.M))
    check(s is not None, "ASCII locale: tree marks in ASCII")
    t.keys("6")
    s = t.wait_text("OVER TIME")
    check(s is not None and "#" in s and all(ord(ch) < 128 for ch in s), "ASCII locale: chart in ASCII only")
    t.keys("q")
    t.finished()
    t.close()

    # ---- a hostile function name: shown escaped ----
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc and shutil.which("objcopy"):
        src = os.path.join(SRC, "tests", "progs")
        evil = "evil\x1b[31mRED\x1b[0m_alloc"
        objs = []
        for name in ("hostile", "hostile_main"):
            o = os.path.join(d, name + ".o")
            r = run([cc, "-O2", "-g0", "-c", os.path.join(src, name + ".c"), "-o", o])
            check_eq(r.returncode, 0, "hostile: compile %s" % name)
            r = run(["objcopy", "--redefine-sym", "hostile_alloc=" + evil, o])
            check_eq(r.returncode, 0, "hostile: rename the symbol in %s" % name)
            objs.append(o)
        exe = os.path.join(d, "hostile")
        check_eq(run([cc] + objs + ["-o", exe]).returncode, 0, "hostile: link")
        check_eq(record([exe], os.path.join(d, "hostile.zst")).returncode, 0, "hostile: memrec exit status")
        t = Tui(["-c", "leaked", "hostile.zst"], cwd=d)
        t.wait_text("MOST CALLS")
        t.keys("3")
        s = t.wait_text("_alloc")
        check(s is not None and "evil\\x1b[31mRED\\x1b[0m_alloc" in s, "hostile name shown escaped")
        check(s is not None and "RED_alloc" not in s.replace("RED\\x1b[0m_alloc", ""),
              "hostile name: no escape sequence reached the terminal")
        check("\x1b[31m" not in t.screen(escapes=True), "hostile name: the terminal got no red")
        capture("Bottom-up with a hostile function name (cost: leaked)", t)
        t.keys("q")
        t.finished()
        t.close()
    else:
        print("SKIP hostile name: no C compiler or objcopy")

    # ---- a recording still being written: grows on screen ----
    live = os.path.join(d, "live.zst")
    rec = subprocess.Popen([MEMREC, "-q", "-o", live, "--", prog("slow"), "60000"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        end = time.time() + 30
        while time.time() < end and (not os.path.exists(live) or os.path.getsize(live) < 200):
            time.sleep(0.1)
        t = Tui(["-c", "calls", "live.zst"], cwd=d)
        s = t.wait_text(re.compile(r" LIVE$", re.M))
        check(s is not None, "live: marker shown")
        first = t.wait_text(re.compile(r"calls to allocation functions: \d+"))
        m = re.search(r"calls to allocation functions: (\d+)", first or "")
        n0 = int(m.group(1)) if m else None
        grown = t.wait(lambda x: (re.search(r"calls to allocation functions: (\d+)", x) is not None and n0 is not None
                                  and int(re.search(r"calls to allocation functions: (\d+)", x).group(1)) > n0),
                       "calls grow", timeout=30)
        check(grown is not None, "live: the calls grow on screen without a key (from %s)" % n0)
        capture("A live recording", t)
        t.keys("q")
        restored(t, "live, q", 0)
        t.close()
    finally:
        rec.send_signal(signal.SIGINT)
        rec.wait(timeout=60)

    # ---- view 7, Alloc time, on a timed recording of timea_sites ----
    # 200,000 malloc(16)/free pairs and 2,000 of 40 MiB (tests/progs/
    # timea_sites.c): the calls are known, the times are the run's. 140
    # columns: the thread table's lifetime, CPU and share columns.
    timed = os.path.join(d, "timea_sites.zst")
    r = record([prog("timea_sites")], timed, extra=["--time"])
    check_eq(r.returncode, 0, "timea_sites: memrec --time exit status (%s)" % r.stderr.decode().strip()[:200])
    t = Tui(["timea_sites.zst"], cwd=d, width=140)
    t.wait_text("calls to allocation functions: 202000 (")
    t.keys("7")
    s = t.wait_text(re.compile(r"^  1 \(\d+\) .* \d+\.\d+%$", re.M)) or ""
    for pattern, what in ((r"^  16 - 31 +400000 ", "the 16-byte class: 400,000 calls"),
                          (r"^  33554432 - 67108863 +4000 ", "the 40 MiB class: 4,000 calls"),
                          (r"^  malloc +202000 ", "malloc: 202,000 calls"), (r"^  free +202000 ", "free: 202,000 calls"),
                          (r"in 404000 calls", "404,000 calls in all")):
        check(re.search(pattern, s, re.M) is not None, "view 7 on timea_sites: %s" % what)
    big = re.search(r"^  33554432 - 67108863 +4000 +\S+ \S+ +(\d+) ", s, re.M)
    small = re.search(r"^  16 - 31 +400000 +\S+ \S+ +(\d+) ", s, re.M)
    check(big and small and int(big.group(1)) > 10 * int(small.group(1)),
          "view 7 on timea_sites: the 40 MiB class's mean above ten times the 16-byte class's")
    capture("Alloc time (view 7) of a recording made with memrec --time, at 140x40", t)
    t.keys("q")
    restored(t, "alloc time view, q", 0)
    t.close()

    # ---- errors: as memprint's, before the screen is taken ----
    for bad in (os.path.join(d, "missing.zst"), os.path.join(SRC, "tests", "data", "bad", "not-memrec.mrec")):
        r = run([MEMPRINT, bad])
        want = r.stderr.decode().strip().replace("memprint:", "memtui:", 1)
        t = Tui([bad], cwd=d)
        code, s = t.finished()
        check_eq(code, r.returncode, "bad file %s: same exit status as memprint" % os.path.basename(bad))
        check(want in (s or ""), "bad file %s: same message as memprint (%s)" % (os.path.basename(bad), want))
        check_eq(t.fmt("#{alternate_on}"), "0", "bad file: the screen was never taken")
        t.close()
    r = run([MEMTUI, phases], env=dict(os.environ, TERM="dumb"))
    check_eq(r.returncode, 1, "TERM=dumb: exit status 1")
    check("memtui: cannot run on a dumb terminal (TERM=dumb)" in r.stderr.decode(), "TERM=dumb: clear refusal")
    r = run([MEMTUI, "--cost", "bogus", phases])
    check_eq(r.returncode, 2, "bad --cost: usage exit status")

    # ---- batch mode: the same screens as text, no terminal needed ----
    r = run([MEMTUI, "--batch", phases], stdin=subprocess.DEVNULL)
    out = r.stdout.decode()
    check_eq(r.returncode, 0, "batch: exit status")
    check(all(want in out.split("\n") for want in summary_lines), "batch: the summary lines are memprint's")
    check_eq(len(out.rstrip("\n").split("\n")), 40, "batch: 40 lines by default")
    r = run([MEMTUI, "-b", "-s", "80x24", "-c", "calls", "-k", "2 Right Down Right", phases], stdin=subprocess.DEVNULL)
    out = r.stdout.decode()
    check(re.search(r"^\s+3\s+3\s+20\.00%\s+(?:[.\u00b7] )?scratch$", out, re.M) is not None,
          "batch: keys expand down to scratch")
    check(max(len(ln) for ln in out.split("\n")) <= 80 and len(out.rstrip("\n").split("\n")) == 24, "batch: 80x24")
    r = run([MEMTUI, "-b", "-k", "6 w 500-1500 Enter 1", phases], stdin=subprocess.DEVNULL)
    check("calls to allocation functions: 9 (" in r.stdout.decode(), "batch: a window typed with w")
    r = run([MEMTUI, "-b", "-s", "5x5", phases])
    check_eq(r.returncode, 2, "batch: bad size is a usage error")

    # ---- 'd' shows the selected node's own call site, at 80x24 ----
    # examples/example.c: handle_request calls format_reply at line 24 and
    # malloc at 28 and 30; main calls calloc at 40 and handle_request at
    # 42. A node merges every frame of its function, so it must show the
    # line of its own stacks, not the first line merged into the function.
    ex = os.path.join(d, "example.zst")
    check_eq(record([os.path.join(BUILD, "example")], ex).returncode, 0, "example: memrec exit status")
    for keys, want, what in ((["3"], (28, 30), "bottom-up: the site handle_request, its mallocs"),
                             (["3", "Right", "Down"], (42,), "bottom-up: main as caller of handle_request"),
                             (["3", "Down"], (40,), "bottom-up: the site main, its calloc"),
                             (["3", "Down", "Down", "Right", "Down"], (24,),
                              "bottom-up: handle_request as caller of format_reply")):
        t = Tui(["-c", "peak", "example.zst"], cwd=d, width=80, height=24)
        t.wait_text("MOST CALLS TO ALLOCATION FUNCTIONS")  # loaded: the summary is up
        t.keys(*keys)
        t.keys("d")
        s = t.wait_text(re.compile(r"example\.c:\d+"))
        m = re.search(r"file: .*example\.c:(\d+)", s or "")
        check(m is not None and int(m.group(1)) in want,
              "d at 80x24, %s: line %s (expected %s)" % (what, m.group(1) if m else None, " or ".join(map(str, want))))
        t.close()

    # ---- 80x24: the help scrolls, every tab's number shows (issue 22, item 3) ----
    t = Tui(["phases.zst"], cwd=d, width=80, height=24)
    t.wait_text("MOST CALLS")
    s = t.screen()
    check(all(re.search(r"(^| )%d [A-Z]" % i, lines(s)[1]) for i in range(1, 10)) and " 1 Summary " in lines(s)[1],
          "80x24: every tab's number on the tab row (9 views)")
    t.keys("7")
    s = t.wait_text(" 7 Alloc time")
    check(s is not None, "80x24: the current tab keeps its whole name (7 Alloc time)")
    t.keys("?")
    s = t.wait_text("memtui help")
    check(s is not None and re.search(r"^lines 1-22 of \d+: Down, PgDn or End for more$", s, re.M) is not None,
          "80x24 help: says it is cut and how to scroll")
    check(s is not None and "clear the window" not in s, "80x24 help: the time-window keys are below the screen")
    check(s is not None and "Over time, Allocator time" in s, "80x24 help: the views from the table, wrapped")
    t.keys("End")
    s = t.wait_text("clear the window")
    check(s is not None, "80x24 help: End scrolls to the time-window and other keys")
    check(s is not None and re.search(r"^lines \d+-(\d+) of \1: Up, PgUp or Home$", s, re.M) is not None,
          "80x24 help: the last line is shown")
    check(s is not None and max(len(ln) for ln in s.split("\n")) <= 80, "80x24 help: drawn within 80 columns")
    capture("Help at 80x24, scrolled to its end (End)", t)
    t.keys("Up")
    s = t.wait_text(re.compile(r"^lines \d+-\d+ of \d+: Down, PgDn or End for more$", re.M))
    check(s is not None, "80x24 help: Up scrolls back, the help stays open")
    t.keys("Escape")
    check(t.wait(lambda x: "memtui help" not in x, "help closed") is not None, "80x24 help: another key closes it")

    # ---- the typed window is checked against the run (issue 22, item 6) ----
    t.keys("6", "w")
    t.wait_text("window in ms")
    t.literal("5000-9000")
    t.keys("Enter")
    s = t.wait_text("no window: '5000-9000' starts after the run's end at")
    check(s is not None and "WINDOW" not in s, "window prompt: a window after the run's end is refused, said")
    t.keys("w")
    t.wait_text("window in ms")
    t.literal("0.5s-1.5s")
    t.keys("Enter")
    s = t.wait_text("WINDOW 0.500-1.500 s (x clears)")
    check(s is not None, "window prompt: seconds with an s; 'x clears' on screen at 80 columns")
    t.keys("x")
    t.wait(lambda x: "WINDOW" not in x, "window cleared")

    # ---- mouse: a click on the chart lands on its column, past the axis (issue 22, item 5) ----
    r = run([MEMTUI, "-b", "-s", "80x24", "-k", "6 Home Right Right Right Right Right", phases],
            stdin=subprocess.DEVNULL)
    want = re.search(r"^cursor [^\n]*", r.stdout.decode(), re.M)
    t.literal("\x1b[M%c%c%c" % (32, 32 + 12 + 1 + 5 + 1, 32 + 10))
    t.literal("\x1b[M%c%c%c" % (35, 32 + 12 + 1 + 5 + 1, 32 + 10))
    s = t.wait(lambda x: want is not None and want.group(0) in lines(x), "click on chart column 5", timeout=10)
    check(s is not None, "mouse: a click on chart column 5 puts the cursor there (%s)" % (want and want.group(0)))
    # The wheel: three rows a notch, down then up.
    t.keys("4")
    t.wait_text("function (sorted by")
    def body_selection(text):
        """(row number, text) of the selected list row (it has a share column)."""
        sel = [ln for ln in selected_rows(t, "%")]
        rows_now = lines(text)
        return next(((i, ln.rstrip()) for i, ln in enumerate(rows_now) for x in sel[:1] if ln.rstrip() and
                     ln.rstrip() in x), None)

    first = body_selection(t.screen())
    t.literal("\x1b[M%c%c%c" % (32 + 65, 32 + 10, 32 + 10))
    s = t.wait(lambda x: body_selection(x) not in (None, first), "wheel down", timeout=10)
    now = body_selection(s or "")
    check(first is not None and now is not None and now[0] == first[0] + 3,
          "mouse wheel: down one notch moves the selection three rows (%s to %s)" % (first, now))
    t.literal("\x1b[M%c%c%c" % (32 + 64, 32 + 10, 32 + 10))
    s = t.wait(lambda x: body_selection(x) == first, "wheel up", timeout=10)
    check(s is not None, "mouse wheel: up one notch comes back")
    t.keys("q")
    restored(t, "80x24, q", 0)
    t.close()

    # ---- End with TERM=xterm inside tmux: no stray "4" (issue 22, item 8) ----
    t = Tui(["phases.zst"], cwd=d, width=80, height=24, env={"TERM": "xterm"})
    t.wait_text("MOST CALLS")
    t.keys("2")
    t.wait_text("function (callees below)")
    t.keys("Right", "End")
    t.keys("?")
    t.wait_text("memtui help")
    t.keys("Escape")
    s = t.wait(lambda x: "memtui help" not in x, "help closed")
    check(s is not None and "|  Top-down  |" in lines(s)[0], "TERM=xterm: End keeps the view (no '4' opening Functions)")
    body = [ln for ln in lines((s or "").rstrip("\n"))[3:-1] if ln.strip()]
    check(body and any(body[-1] in r for r in selected_rows(t, "%")), "TERM=xterm: End selects the last row")
    t.keys("q")
    t.finished()
    t.close()

    # ---- deep trees and C++ names at 80x24 (issue 22, item 4) ----
    # deep.c: one malloc under 300 frames of descend(); the selection 40
    # rows down is 40 levels deep, far past where the indentation used to stop.
    deep = os.path.join(d, "deep.zst")
    check_eq(record([prog("deep")], deep).returncode, 0, "deep: memrec exit status")
    t = Tui(["-c", "leaked", "deep.zst"], cwd=d, width=80, height=24)
    t.wait_text("MOST CALLS")
    t.keys("2", "*")
    t.wait_text("descend")
    t.keys(*(["Down"] * 40))
    s = t.wait_text(re.compile(r"from column \d+ \(< >\)"))
    check(s is not None, "deep tree: the names column scrolls with the selection, and says so")
    sel = selected_rows(t, "descend")
    check(len(sel) == 1 and "\u25be descend" in sel[0], "deep tree: the selected row 40 levels down shows its mark and name")
    col = re.search(r"from column (\d+)", s or "")
    check(col is not None and int(col.group(1)) > 40, "deep tree: scrolled past 20 levels of indentation (%s)"
          % (col and col.group(1)))
    check(s is not None and re.search(r"%  \u2026\u25be descend_?\w*$", s, re.M) is not None,
          "deep tree: a shallower row shows the cut mark, then its mark and name")
    check(s is not None and max(len(ln) for ln in s.split("\n")) <= 80, "deep tree: within 80 columns")
    capture("Top-down at 80x24, 40 levels down a 300-frame recursion", t)
    t.keys(">")
    s2 = t.wait(lambda x: re.search(r"from column (\d+)", x) is not None and
                re.search(r"from column (\d+)", x).group(1) == str(int(col.group(1)) + 8), "> scrolls 8 columns",
                timeout=10) if col else None
    check(s2 is not None, "deep tree: > scrolls the names 8 columns right")
    t.keys("<", "<")
    s3 = t.wait(lambda x: col is not None and re.search(r"from column %d " % (int(col.group(1)) - 8), x) is not None,
                "< scrolls back", timeout=10)
    check(s3 is not None, "deep tree: < scrolls them back left")
    t.keys("q")
    t.finished()
    t.close()
    # templates.cpp: std::vector<std::pair<int, long>> grows; memprint
    # shortens its template lists, and so do the rows; a name cut at the
    # screen's edge ends in an ellipsis.
    tpl = os.path.join(d, "templates.zst")
    check_eq(record([prog("templates")], tpl).returncode, 0, "templates: memrec exit status")
    rc, printed, _ = report_text(tpl)
    t = Tui(["-c", "calls", "templates.zst"], cwd=d, width=80, height=24)
    t.wait_text("MOST CALLS")
    t.keys("4")
    s = t.wait_text("std::vector<\u2026>")
    check(s is not None and "std::vector<\u2026>" in printed, "C++ names: template lists shortened as memprint's")
    check(s is not None and "std::pair<int, long>" not in s, "C++ names: no template argument list on screen")
    cut = [ln for ln in lines(s or "") if len(ln) == 80 and ln.endswith("\u2026")]
    check(len(cut) > 0, "C++ names: a name cut at column 80 ends in an ellipsis")
    capture("Functions of a C++ program at 80x24: names shortened and cut with an ellipsis", t)
    t.keys("d")
    s = t.wait_text("std::pair<int, long>")
    check(s is not None, "C++ names: the detail overlay (d) gives the full name")
    t.keys("q")
    t.finished()
    t.close()

    # ---- the selection goes over sites and links, not text lines or headings (issue 22, item 7) ----
    t = Tui(["-c", "calls", "phases.zst"], cwd=d, width=80, height=24)
    s = t.wait_text("MOST CALLS")
    sel = selected_rows(t, "")
    sel = [ln for ln in sel if not ln.lstrip("\x1b").startswith("memtui") and " 1 Summary" not in ln]
    check(len(sel) == 1 and re.search(r"%\s+(\x1b\[[0-9;]*m)*phase_two", sel[0]) is not None,
          "summary: the selection starts on the first site, phase_two (%r)" % sel[:1])
    t.keys("Up")
    t.keys("Down", "Up")
    s = t.wait_text("program:")
    check(s is not None and "total runtime" in s, "summary: Up at the first site shows the lines above")
    check(any("phase_two" in ln for ln in selected_rows(t, "phase_two")), "summary: Up stays on the first site")
    t.keys("4", "Home", "Enter")
    s = t.wait_text("CALLERS (0)")
    rows = selected_rows(t, "%")
    check(len(rows) == 1 and "phase_" in rows[0], "functions: callers and callees open on the first callee, not a heading")
    t.keys("Up")
    t.keys("Down")
    t.keys("Up")
    t.wait_text("CALLEES")
    rows = selected_rows(t, "%")
    check(len(rows) == 1 and "CALLEES" not in rows[0], "functions: Up does not stop on a heading")
    t.keys("q")
    t.finished()
    t.close()
finally:
    tmux("kill-server", check_rc=False)

# ---- the captures, for docs/memtui.md ----
out = ["<!-- captures:begin (written by tests/integration/test_memtui.py --update-docs; do not edit) -->"]
for title, text in captures:
    out += ["", "### " + title, "", "```", text, "```"]
out.append("<!-- captures:end -->")
block = "\n".join(out) + "\n"
with open(os.path.join(BUILD, "memtui_captures.md"), "w") as f:
    f.write(block)
if UPDATE_DOCS:
    doc = os.path.join(SRC, "docs", "memtui.md")
    with open(doc) as f:
        text = f.read()
    start = text.index("<!-- captures:begin")
    stop = text.index("<!-- captures:end -->") + len("<!-- captures:end -->\n")
    with open(doc, "w") as f:
        f.write(text[:start] + block + text[stop:])
    print("docs/memtui.md: %d captures written" % len(captures))
done()
