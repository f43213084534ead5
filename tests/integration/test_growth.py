# SPDX-License-Identifier: MIT
"""MOST MEMORY GROWTH and growth_bytes_per_s (docs/definitions.md, "Memory
growth") on tests/progs/growth.c, whose one leaking site keeps 100,000
bytes per second beside a cache filled once, churn of temporaries and a
sawtooth: launched, attached with --pid after the cache filled (also
sampled at 4 KiB), and launched sampled at 4 KiB and 512 KiB. The leak ranks first within 15% (30%
sampled at 4 KiB), the cache, the sawtooth and the churn are not growth,
the whole heap's rate is within 15%, and --check on it passes and fails on
either side of the rate."""
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

RATE = 100000.0
NOT_GROWTH = ("fill_cache", "sawtooth_step", "churn")


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

    # Sampled at 4 KiB: estimates within 30%, marked '~'.
    out = os.path.join(d, "s4k.mrec")
    check_eq(record([prog("growth"), "5"], out, extra=["-s", "4K"]).returncode, 0, "-s 4K: memrec exit status")
    check_growth(memprint_json(out), "-s 4K", 0.30)
    w = memprint_json(out, ["--from", "1"])
    within(w["growth_bytes_per_s"], RATE, 0.30, "-s 4K --from 1: the whole heap's rate")
    t = run([MEMPRINT, out]).stdout.decode()
    check("memory growth: ~" in t and "  ~" in t.split("MOST MEMORY GROWTH")[1], "-s 4K: estimates marked '~'")

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
    done()


main()
