# SPDX-License-Identifier: MIT
"""The guide docs/guides/server-memory.md, run: its commands on
tests/progs/growth.c (a server whose one leaking site keeps 100,000 bytes
per second beside a cache filled once, churn and a sawtooth), attached
after it started and detached by --duration, fully and sampled at 4 KiB
and 512 KiB, and on tests/progs/busy with memrec stopped for a while (the
lost-events line). It checks the figures the guide quotes: leak_site
first, its rate and the whole heap's within 15% of 100,000 B/s (30% at
4 KiB), --check failing and passing on either side.

With --update-docs, the outputs captured here replace the guide's blocks
between its capture markers. Without it, each of the guide's blocks must
still have the shape of this run's (the section headings, the first
frame's function, the phrases the guide's text refers to), never the same
numbers, which vary per run. Every run writes the captures to the build
directory as guide_server_captures.md."""
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

MEMTUI = os.path.join(BUILD, "memtui")
GUIDE = os.path.join(SRC, "docs", "guides", "server-memory.md")
UPDATE_DOCS = "--update-docs" in sys.argv
RATE = 100000.0
DURATION = "10s"
BEGIN = "<!-- capture:%s:begin (written by tests/integration/test_guide_server.py --update-docs; do not edit) -->"
END = "<!-- capture:%s:end -->"

TMP = []  # the test's directory, shortened in the captures as the reader's "."
# name -> (text, phrases that both this run's capture and the guide's
# block must hold: what the guide's prose points at)
captures = {}


def tidy(text):
    """Paths as a reader of the guide has them, no trailing blanks."""
    for t in TMP:
        text = text.replace(t + "/", "")
    text = text.replace(BUILD + "/", "build/").replace(SRC + "/", "")
    return "\n".join(line.rstrip() for line in text.rstrip("\n").split("\n"))


def keep(name, text, phrases=()):
    text = tidy(text)
    for p in phrases:
        check(p in text, "%s: the capture holds %r" % (name, p))
    captures[name] = (text, phrases)


def section(report, title):
    """One section of memprint's text report, its title line included."""
    at = report.find("\n" + title + "\n")
    if at < 0:
        return ""
    return report[at + 1:].split("\n\n")[0]


def shape(text):
    """What must stay from one run to the next: the section headings and
    the function of each section's first frame."""
    out = []
    first = True
    for line in text.split("\n"):
        if re.fullmatch(r"[A-Z][A-Z ,()]+", line.strip()) and line == line.lstrip():
            out.append(line.strip())
            first = True
        m = re.match(r"\s+#0\s+(\S+)", line)
        if m and first:
            out.append("#0 " + m.group(1))
            first = False
    return out


def memprint(path, extra=()):
    return run([MEMPRINT] + list(extra) + [path])


def memprint_json(path, extra=()):
    r = memprint(path, ["--json", "-n", "20"] + list(extra))
    if r.returncode != 0:
        raise RuntimeError("memprint failed: %s" % r.stderr.decode())
    return json.loads(r.stdout.decode())


def within(value, want, share, what):
    check(value is not None and abs(value - want) <= share * want,
          "%s: %s within %.0f%% of %.0f" % (what, value, share * 100, want))


def functions(entry):
    return [f["function"] for f in entry["frames"]]


def start_server():
    p = subprocess.Popen([prog("growth"), "120"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check_eq(p.stdout.readline().decode().strip(), "ready", "growth: the program started")
    return p


def record_server(d, name, extra):
    """The guide's command on a running growth: memrec [extra] --pid PID
    --duration 10s -o NAME.mrec, started a moment after the program (its
    cache is filled by then). Returns (the memrec process, the program,
    the file)."""
    p = start_server()
    out = os.path.join(d, name + ".mrec")
    m = subprocess.Popen([MEMREC] + list(extra) + ["--pid", str(p.pid), "--duration", DURATION, "-o", out],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=d)
    return m, p, out


def finish(m, p, what):
    err = m.communicate(timeout=120)[1].decode()
    alive = p.poll() is None
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=30)
    if m.returncode != 0 and "ptrace" in err:
        return None
    check_eq(m.returncode, 0, "%s: memrec exit status (%s)" % (what, err.strip()[-300:]))
    check(alive, "%s: the program runs on after --duration" % what)
    return err


def main():
    d = tmpdir()
    TMP.append(d)
    # The three recordings of the guide at once, each on its own server:
    # the program is light, and 10 s each would add up.
    runs = [(name, record_server(d, name, extra)) for name, extra in
            (("server", []), ("server-4k", ["-s", "4K"]), ("server-512k", ["-s", "512K"]))]
    errs = {name: finish(m, p, name) for name, (m, p, out) in runs}
    if None in errs.values():
        # Every server is stopped by now: nothing is left running.
        skip("memrec cannot attach here (ptrace)")
    pids = {name: p.pid for name, (m, p, out) in runs}
    files = {name: out for name, (m, p, out) in runs}
    server = files["server"]

    # ---- the figures the guide quotes ----
    j = memprint_json(server)
    check(j["attached"], "server: the file says attached")
    check_eq(j["end"], "detached", "server: the recording stopped while the server ran")
    g = j["sections"]["most_growth"]
    check(len(g) >= 1 and "leak_site" in functions(g[0]), "server: leak_site ranks first in MOST MEMORY GROWTH")
    if g:
        within(g[0]["growth_bytes_per_s"], RATE, 0.15, "server: leak_site's rate")
        for e in g:
            for f in ("fill_cache", "sawtooth_step", "churn"):
                check(f not in functions(e), "server: %s is not growth" % f)
    within(j["growth_bytes_per_s"], RATE, 0.15, "server: the whole heap's rate")
    s4 = memprint_json(files["server-4k"])
    g4 = s4["sections"]["most_growth"]
    check(len(g4) >= 1 and "leak_site" in functions(g4[0]), "-s 4K: leak_site ranks first")
    if g4:
        within(g4[0]["growth_bytes_per_s"], RATE, 0.30, "-s 4K: leak_site's rate")

    # ---- the captures ----
    keep("record", "$ memrec --pid %d --duration %s -o server.mrec\n" % (pids["server"], DURATION) + errs["server"],
         ["attached to process", "recording stopped after --duration", "next: memprint server.mrec"])
    report = memprint(server, ["-n", "3"]).stdout.decode()
    head = [ln for ln in report.split("\n")[:20] if ln.startswith(("program:", "attached", "total runtime"))]
    growth_line = [ln for ln in report.split("\n") if ln.startswith("memory growth:")]
    keep("growth", "$ memprint -n 3 server.mrec\n" + "\n".join(head + ["..."] + growth_line + ["..."]) + "\n\n" +
         section(report, "MOST MEMORY GROWTH"),
         ["still running when the recording stopped", "memory growth: ", "MOST MEMORY GROWTH", "leak_site",
          "bytes/s; fit R²"])
    keep("rss", "$ memprint -n 3 server.mrec\n...\n" + section(report, "RSS VERSUS HEAP"), ["RSS VERSUS HEAP"])
    check_text = []
    limits = (RATE / 2, RATE * 2)
    for limit, code in zip(limits, (1, 0)):
        cmd = "growth_bytes_per_s<%d" % limit
        c = memprint(server, ["--check", cmd])
        check_eq(c.returncode, code, "--check %s exit status" % cmd)
        check_text.append("$ memprint --check '%s' server.mrec; echo $?\n%s%d" % (cmd, c.stdout.decode(), c.returncode))
    keep("check", "\n".join(check_text), ["FAIL", "PASS", "growth_bytes_per_s"])
    for name, flag in (("server-4k", "4K"), ("server-512k", "512K")):
        rep = memprint(files[name], ["-n", "3"]).stdout.decode()
        lines = [ln for ln in rep.split("\n") if ln.startswith("memory growth:")]
        keep("sampled-" + flag.lower(), "$ memrec -s %s --pid PID --duration %s -o %s.mrec\n$ memprint -n 3 %s.mrec\n"
             % (flag, DURATION, name, name) + "\n".join(["..."] + lines + ["..."]) + "\n\n" +
             section(rep, "MOST MEMORY GROWTH"),
             ["MOST MEMORY GROWTH"] + (["~", "leak_site"] if flag == "4K" else ["sampled allocations in the window"]))
    sec512 = section(memprint(files["server-512k"]).stdout.decode(), "MOST MEMORY GROWTH")
    check("leak_site" not in sec512, "-s 512K: no estimate from too few samples")

    # ---- memrec stopped while attached: the lost-events line ----
    counter = os.path.join(d, "busy.count")
    p = subprocess.Popen([prog("busy"), "1", counter], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check(p.stdout.readline() == b"ready\n", "busy: the program started")
    out = os.path.join(d, "busy.mrec")
    m, first = start_attach(p.pid, out, ["--duration", "4s"], exact=False)  # the default --max-wait
    time.sleep(0.5)
    m.send_signal(signal.SIGSTOP)
    time.sleep(2.0)
    m.send_signal(signal.SIGCONT)
    err = first.decode() + m.communicate(timeout=120)[1].decode()
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=60)
    check_eq(m.returncode, 0, "busy: memrec detached after --duration")
    rep = memprint(out, ["-n", "1"]).stdout.decode()
    lines = rep.split("\n")
    lost = []
    for i, ln in enumerate(lines):
        if ln.startswith("lost:"):
            # The line and its indented continuation.
            lost.append(ln)
            lost += [c for c in lines[i + 1:i + 3] if c.startswith("      ")]
        elif ln.startswith("total memory leaked"):
            lost.append(ln)
    check(any(ln.startswith("lost:") for ln in lost), "busy: memprint says events were lost")
    keep("lost", "$ memrec --pid %d --duration 4s -o busy.mrec      # and memrec stopped for 2 s\n" % p.pid + err +
         "$ memprint busy.mrec\n" + "\n".join(["..."] + lost + ["..."]), ["lost: ", "events dropped", "~"])

    # ---- memtui ----
    if os.path.exists(MEMTUI):
        for name, keys, opts in (("memtui-summary", None, []), ("memtui-time", "6", []),
                                 ("memtui-growth", "3", ["-c", "growth"])):
            # 40 rows: the summary's lines before its first ranking vary
            # with the run (lines wrap), and PEAK MEMORY CONSUMERS must show.
            cmd = [MEMTUI, "--batch", "--size", "100x40"] + opts + (["--keys", keys] if keys else []) + ["server.mrec"]
            r = run(cmd, cwd=d)
            check_eq(r.returncode, 0, "%s: memtui exit status" % name)
            screen = r.stdout.decode()
            if opts:
                # The growing site first, the only one with a rate.
                rows = [ln.split() for ln in screen.splitlines() if re.match(r"^\s+\d+\s+\d+\s+[\d.]+%", ln)]
                check(rows and rows[0][-1] == "leak_site" and int(rows[0][0]) > 0 and
                      all(int(x[0]) == 0 for x in rows[1:]),
                      "%s: leak_site first and alone with a rate (%s)" % (name, rows[:3]))
                if rows:
                    within(int(rows[0][0]), RATE, 0.15, "%s: leak_site's rate" % name)
            keep(name, "$ memtui %sserver.mrec" % "".join(o + " " for o in opts) +
                 ("      # then " + keys if keys else "") + "\n" + screen,
                 ["memtui  server.mrec"] + (["PEAK MEMORY CONSUMERS", "leak_site"] if keys is None else []) +
                 (["cost: growth (bytes/s of steady growth)", "leak_site"] if opts else []))
    else:
        skip_part("memtui", "memtui is not built")

    # ---- the guide ----
    with open(os.path.join(BUILD, "guide_server_captures.md"), "w") as f:
        for name, (text, _) in captures.items():
            f.write("%s\n```text\n%s\n```\n%s\n\n" % (BEGIN % name, text, END % name))
    with open(GUIDE) as f:
        doc = f.read()
    for name, (text, phrases) in captures.items():
        b, e = BEGIN % name, END % name
        if b not in doc or e not in doc:
            check(False, "guide: the capture markers of %s" % name)
            continue
        start = doc.index(b) + len(b)
        stop = doc.index(e)
        if UPDATE_DOCS:
            doc = doc[:start] + "\n```text\n" + text + "\n```\n" + doc[stop:]
            continue
        old = doc[start:stop]
        for p in phrases:
            check(p in old, "guide: %s still holds %r (tests/integration/test_guide_server.py --update-docs)"
                  % (name, p))
        # One shape a prefix of the other: a screen that is one line
        # longer or shorter this run shows one heading more or less at
        # its bottom.
        was, now = shape(old), shape(text)
        n = min(len(was), len(now))
        check(n > 0 and was[:n] == now[:n] or was == now,
              "guide: %s has this run's headings and first frames (%s; the guide's %s)" % (name, now, was))
    if UPDATE_DOCS:
        with open(GUIDE, "w") as f:
            f.write(doc)
        print("docs/guides/server-memory.md: %d captures written" % len(captures))
    done()


main()
