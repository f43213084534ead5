#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/run.py: measures memrec against KDE heaptrack on the shared workloads
(recording overhead, file size per allocation, analysis speed and memory) and
memrec's sampling mode (overhead, accuracy of its per-site estimates) and
memrec --time (what timing every allocator call adds), and prints tables of
medians. Reads the build tree, writes only build/bench/ and
a temporary directory; never changes the sources. See bench/README.md."""
import argparse
import atexit
import ctypes
import datetime
import glob
import json
import math
import os
import re
import resource
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

PROG = "run.py"
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
WORKLOADS = ["churn", "tree", "mt", "cpp", "deep"]

# Arguments per workload. Full size = the workloads' own defaults, spelled out
# so the table header can show exactly what ran; quick = 1/5 to 1/8 of that.
ARGS_FULL = {
    "churn": ["8000000"],
    "tree": ["1000000"],
    "mt": ["4", "2500000"],
    "cpp": ["5", "100000"],
    "deep": ["1500000"],
}
ARGS_QUICK = {
    "churn": ["1000000"],
    "tree": ["200000"],
    "mt": ["4", "300000"],
    "cpp": ["1", "100000"],
    "deep": ["200000"],
}

# Targets from the performance issue (see bench/README.md).
TARGET_ADDED = 1 / 3       # memrec added time / heaptrack added time
TARGET_ADDED_MT = 1 / 5
TARGET_BYTES = 1 / 2       # memrec bytes/alloc / heaptrack bytes/alloc
TARGET_THROUGHPUT = 5.0    # memprint allocs/s / heaptrack_print allocs/s
TARGET_PEAK = 1.0          # memprint peak RSS / heaptrack_print peak RSS
# Targets of the sampling mode, defined at --sample-rate 512K.
TARGET_SAMPLE_RATE = "512K"
TARGET_SAMPLED_X = 1.10    # sampled wall / native wall
TARGET_SAMPLED_ERR = 0.10  # worst |estimate - full| / full over the sites below
TARGET_TIMED_ADDED = 0.15  # memrec --time added time / memrec added time - 1
SITE_SHARE = 0.01          # sites holding more than this share of allocated bytes
JSON_ENTRIES = 100000      # memprint --json -n: entries per section (all of them)

errors = []     # (what, command, detail): printed at the end, exit 1
TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


SNAPSHOT = {}   # private copy of the tools -> the build directory they came from


def show(argv):
    """Command line to print: the build directory instead of the snapshot."""
    line = shlex.join(argv)
    for copy, orig in SNAPSHOT.items():
        line = line.replace(copy, orig)
    return line


def die(msg, code=1):
    print(f"{PROG}: {msg}", file=sys.stderr)
    sys.exit(code)


def progress(msg):
    print(msg, file=sys.stderr, flush=True)


# ---- running one measured command ----

def become_subreaper():
    """Make orphaned grandchildren (heaptrack's background interpreter and
    compressor) re-parent to us instead of init, so we can wait for the whole
    process tree and RUSAGE_CHILDREN counts their CPU time."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_CHILD_SUBREAPER = 36
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def descendants():
    """Pids of every live process below us, from /proc (ppid links)."""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [os.getpid()]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def kill_tree(flag):
    flag.append(True)
    for pid in descendants():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def measure(argv, out_path, err_path, timeout, rss_file=None):
    """Run argv with stdin from /dev/null and stdout/stderr to files; wait for
    it and for every process it left behind. Returns wall seconds, CPU seconds
    (user+sys of the whole tree, from RUSAGE_CHILDREN deltas), peak RSS in KiB
    of the process (and its reaped children), exit code (negative = signal)
    and whether the timeout killed it.

    Peak RSS: the kernel folds the high-water mark of the address space a
    process had before exec into its ru_maxrss, and posix_spawn's child starts
    out sharing ours, so wait4 would report at least this Python process's
    RSS (~17 MB). With rss_file set, argv runs under /usr/bin/time -f %M
    (about 1 MB before exec, below any real program) and the peak is read
    from there instead."""
    if rss_file:
        argv = [TIME, "-f", "%M", "-o", rss_file] + argv
    wr = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, out_path, wr, 0o644),
        (os.POSIX_SPAWN_OPEN, 2, err_path, wr, 0o644),
    ]
    killed = []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    try:
        pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=actions, setsid=True)
    except OSError as e:
        with open(err_path if err_path != "/dev/null" else os.devnull, "a") as f:
            f.write(f"cannot run '{argv[0]}': {e.strerror}\n")
        return {"wall": 0.0, "cpu": 0.0, "maxrss_kib": None, "rc": 127, "timed_out": False}
    timer = threading.Timer(timeout, kill_tree, (killed,))
    timer.start()
    _, status, ru = os.wait4(pid, 0)
    while True:  # stragglers re-parented to us (we are a subreaper)
        try:
            os.wait4(-1, 0)
        except ChildProcessError:
            break
    t1 = time.perf_counter()
    timer.cancel()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    maxrss = ru.ru_maxrss
    if rss_file:
        # GNU time writes "Command exited with non-zero status N" first on failure.
        lines = read_text(rss_file).split()
        maxrss = int(lines[-1]) if lines and lines[-1].isdigit() else None
    return {
        "wall": t1 - t0,
        "cpu": cpu,
        "maxrss_kib": maxrss,
        "rc": os.waitstatus_to_exitcode(status),
        "timed_out": bool(killed),
    }


def describe_failure(r, err_path):
    parts = []
    if r["timed_out"]:
        parts.append("timed out (killed)")
    elif r["rc"] < 0:
        parts.append(f"killed by signal {-r['rc']} ({signal.Signals(-r['rc']).name})")
    else:
        parts.append(f"exit code {r['rc']}")
    try:
        with open(err_path, errors="replace") as f:
            tail = f.read()[-800:].strip()
        if tail:
            parts.append("stderr: " + tail.replace("\n", "\n    "))
    except OSError:
        pass
    return "; ".join(parts)


def read_text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


# ---- statistics and formatting ----

def med(values):
    v = [x for x in values if x is not None]
    return statistics.median(v) if v else None


def ratio(a, b):
    if a is None or b is None or b <= 0:
        return None
    return a / b


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def fmt_rate(v):
    if v is None:
        return "-"
    if v >= 1e6:
        return f"{v / 1e6:.2f}M"
    if v >= 1e3:
        return f"{v / 1e3:.1f}k"
    return f"{v:.0f}"


def print_table(headers, rows):
    widths = [max(len(h[i]) for h in headers + rows) for i in range(len(headers[0]))]
    for line in headers:
        print("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(line, widths))))
    print("  ".join("-" * w for w in widths))
    for line in rows:
        print("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(line, widths))))


# ---- the benchmark ----

def memprint_json(tools, path, timeout, entries=None):
    """memprint --json [-n entries] PATH, parsed. Returns (argv, json or None,
    error text or None)."""
    argv = [tools["memprint"], "--json"] + (["-n", str(entries)] if entries else []) + [path]
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        if p.returncode != 0:
            return argv, None, f"exit code {p.returncode}; stderr: {p.stderr.decode(errors='replace')[-800:]}"
        return argv, json.loads(p.stdout), None
    except (ValueError, OSError, subprocess.TimeoutExpired) as e:
        return argv, None, str(e)


OPERATOR = re.compile(r"operator\s*(<<=|>>=|<=>|<<|>>|<=|>=|->\*|->|<|>|\(\))")


def short_function(name):
    """A function name without template arguments and parameter lists."""
    ops = []
    name = OPERATOR.sub(lambda m: ops.append(m.group(0)) or "\0", name)  # keep operator<< etc.
    out, depth = [], 0
    for c in name:
        if c in "<(":
            depth += 1
        elif c in ">)" and depth:
            depth -= 1
        elif not depth:
            out.append(c)
    out = re.sub(r"(\s*\b(const|volatile|noexcept)\b|\s*&+)+$", "", "".join(out).strip())
    if "\0" not in out and "operator" not in out:
        out = out.split()[-1] if out.split() else out  # drop a return type
    for op in ops:
        out = out.replace("\0", op, 1)
    return out or "?"


def site_label(frames):
    """function:line of the innermost frame in the workload's own sources
    (a file outside /usr with a line number), else of the innermost frame:
    the innermost frames of C++ allocations are library templates."""
    own = [f for f in frames if f.get("line") and f.get("file") and not f["file"].startswith("/usr/")]
    f = (own or frames or [{}])[0]
    return f"{short_function(f.get('function') or '?')}:{f.get('line') or '?'}"


def site_table(j):
    """most_allocated of a memprint --json report keyed by call stack: the
    tuple of (function, file, line) of every frame -> [allocated_bytes, calls,
    label]. Stacks that only differ in what the key leaves out are added up,
    the same way in both recordings."""
    sites = {}
    for e in j["sections"]["most_allocated"]:
        key = tuple((f.get("function"), f.get("file"), f.get("line")) for f in e["frames"])
        cell = sites.setdefault(key, [0, 0, site_label(e["frames"])])
        cell[0] += int(e["allocated_bytes"])
        cell[1] += int(e.get("calls") or 0)
    return sites


def site_noise(nbytes, calls, rate):
    """Expected relative standard deviation of the sampled estimate of a site
    that allocated nbytes in calls calls of the mean size s: each call is
    sampled with probability p = 1 - exp(-s/rate) and weighted 1/p, so the
    estimate's variance is calls * s^2 * (1-p)/p; about sqrt(rate/nbytes)
    for calls much smaller than rate."""
    if not nbytes or not calls or not rate:
        return None
    x = nbytes / calls / rate
    return math.sqrt(math.exp(-x) / (calls * -math.expm1(-x)))


def accuracy(full, samp):
    """Relative error of the sampled recording's per-stack estimates of
    allocated bytes against the full recording's, for every stack holding
    more than SITE_SHARE of the full recording's allocated bytes."""
    total = int(full["allocated_bytes"])
    rate = samp.get("sample_rate")
    fs, ss = site_table(full), site_table(samp)
    out = {"total_bytes": total, "sample_rate": rate, "sites": 0, "worst_err": None,
           "worst_site": None, "worst_share": None, "worst_sigma": None, "max_sigma": None,
           "stacks_full": len(fs), "stacks_sampled": len(ss),
           "cut": any(len(j["sections"]["most_allocated"]) >= JSON_ENTRIES for j in (full, samp))}
    worst = None
    for key, (nbytes, calls, label) in fs.items():
        if total <= 0 or nbytes <= SITE_SHARE * total:
            continue
        est = ss.get(key, [0, 0])[0]
        err = (est - nbytes) / nbytes
        sigma = site_noise(nbytes, calls, rate)
        out["sites"] += 1
        if sigma is not None and (out["max_sigma"] is None or sigma > out["max_sigma"]):
            out["max_sigma"] = sigma
        if worst is None or abs(err) > abs(worst[0]):
            worst = (err, label, nbytes, sigma)
    if worst:
        err, label, nbytes, sigma = worst
        out["worst_err"] = err
        out["worst_site"] = label
        out["worst_share"] = nbytes / total
        out["worst_sigma"] = sigma
    return out


def run_round(w, r, cmd, tools, tmp, timeout, with_ht, order, rate, want_accuracy, time_only=False):
    """One round of one workload: the four recording variants in the given
    order, then the two analyzers (order alternating too); with want_accuracy
    also the comparison of the sampled recording's per-site estimates with the
    full recording. Returns the raw numbers of this round; failures go to
    errors and leave None behind."""
    res = {"round": r}
    base = os.path.join(tmp, f"{w}.{r}")
    mr_file = base + ".mrec"
    sp_file = base + ".sampled.mrec"
    tm_file = base + ".timed.mrec"
    ht_base = base + ".ht"

    variants = {
        "native": cmd,
        "memrec": [tools["memrec"], "-q", "-o", mr_file] + cmd,
        "heaptrack": [tools["heaptrack"], "-o", ht_base] + cmd if with_ht else None,
        "sampled": None if time_only else [tools["memrec"], "-q", "--sample-rate", rate, "-o", sp_file] + cmd,
        "timed": [tools["memrec"], "-q", "--time", "-o", tm_file] + cmd,
    }
    for v in order:
        argv = variants[v]
        if argv is None:
            continue
        out, err = f"{base}.{v}.out", f"{base}.{v}.err"
        m = measure(argv, out, err, timeout)
        if m["timed_out"] or m["rc"] != 0:
            errors.append((f"{w} round {r}: {v} failed", show(argv), describe_failure(m, err)))
            res[v] = None
            continue
        res[v] = m
        if v in ("memrec", "sampled", "timed") and read_text(err).strip():
            errors.append((f"{w} round {r}: {v}: memrec -q wrote to stderr", show(argv),
                           read_text(err).strip()[-800:]))
        progress(f"  {w} r{r} {v:9s} wall {m['wall']:7.3f} s  cpu {m['cpu']:7.3f} s")

    # Sizes. heaptrack appends .zst (or .gz without zstd) to -o's name.
    res["mr_size"] = os.path.getsize(mr_file) if res.get("memrec") and os.path.exists(mr_file) else None
    res["sp_size"] = os.path.getsize(sp_file) if res.get("sampled") and os.path.exists(sp_file) else None
    res["tm_size"] = os.path.getsize(tm_file) if res.get("timed") and os.path.exists(tm_file) else None
    ht_file = None
    if res.get("heaptrack"):
        found = sorted(glob.glob(glob.escape(ht_base) + ".*"))
        found = [f for f in found if f.endswith((".zst", ".gz"))]
        if found:
            ht_file = found[0]
            res["ht_size"] = os.path.getsize(ht_file)
        else:
            errors.append((f"{w} round {r}: heaptrack wrote no file", show(variants["heaptrack"]),
                           f"expected {ht_base}.zst or .gz"))
    res.setdefault("ht_size", None)
    for v, f in (("memrec", mr_file), ("sampled", sp_file), ("timed", tm_file)):
        if res.get(v) and not os.path.exists(f):
            errors.append((f"{w} round {r}: {v}: memrec wrote no file", show(variants[v]), f"expected {f}"))

    # Allocation count of this workload, from memrec's own recording; the
    # sampled recording's exact totals; in the accuracy round every stack.
    res["allocs"] = None
    res["sp_exact"] = None
    reports = {}
    for v, f, size in (("memrec", mr_file, res["mr_size"]), ("sampled", sp_file, res["sp_size"])):
        if size is None:
            continue
        argv, j, fail = memprint_json(tools, f, timeout, JSON_ENTRIES if want_accuracy else None)
        try:
            if fail:
                raise ValueError(fail)
            summary = {k: j.get(k) for k in ("allocations", "allocated_bytes", "frees", "complete",
                                             "lost_events", "unmatched_frees", "end", "sampled", "sample_rate")}
            int(j["allocations"]), int(j["allocated_bytes"]), j["sections"]["most_allocated"]
        except (ValueError, KeyError, TypeError) as e:
            errors.append((f"{w} round {r}: {v}: memprint --json failed", show(argv), str(e)))
            continue
        res["mr_summary" if v == "memrec" else "sp_summary"] = summary
        reports[v] = j
        if not j.get("complete", True) or j.get("lost_events"):
            errors.append((f"{w} round {r}: {v}: recording incomplete", show(argv),
                           f"complete={j.get('complete')} lost_events={j.get('lost_events')}"))
        if (v == "sampled") != bool(j.get("sampled")):
            errors.append((f"{w} round {r}: {v}: recording has \"sampled\": {json.dumps(j.get('sampled'))}",
                           show(argv), "expected true for --sample-rate, false without"))
    if "memrec" in reports:
        res["allocs"] = int(reports["memrec"]["allocations"])
    if "memrec" in reports and "sampled" in reports:
        # Both runs are of the same deterministic workload: a sampled recording
        # counts every call and byte, so its totals must be the full one's.
        res["sp_exact"] = all(int(reports["memrec"][k]) == int(reports["sampled"][k])
                              for k in ("allocations", "allocated_bytes"))
        if want_accuracy:
            try:
                res["accuracy"] = accuracy(reports["memrec"], reports["sampled"])
            except (KeyError, TypeError, ValueError, AttributeError) as e:
                errors.append((f"{w} round {r}: memprint --json: unexpected most_allocated entries",
                               show([tools["memprint"], "--json", "-n", str(JSON_ENTRIES), mr_file]), repr(e)))
    runtime_ms = int(reports["memrec"].get("runtime_ms") or 0) if "memrec" in reports else 0
    del reports  # the -n 100000 reports can be large

    # Analysis: memprint vs heaptrack_print, output to /dev/null.
    analyzers = []
    if res["mr_size"] is not None and not time_only:
        analyzers.append(("memprint", [tools["memprint"], mr_file]))
    if ht_file and tools.get("heaptrack_print") and not time_only:
        analyzers.append(("heaptrack_print", [tools["heaptrack_print"], ht_file]))
    if r % 2 == 0:
        analyzers.reverse()

    # Analyses (issue 13): memprint's exports and restrictions on the same
    # recording, next to heaptrack_print's flame graph and diff (a file with
    # itself: the time of a comparison, whatever it finds).
    analyses = []
    if res["mr_size"] is not None and not time_only:
        a, b = runtime_ms / 4000.0, runtime_ms / 2000.0
        mp = tools["memprint"]
        analyses += [
            ("mp_folded", [mp, "--folded", base + ".folded", mr_file]),
            ("mp_svg", [mp, "--svg", base + ".svg", mr_file]),
            ("mp_sizes", [mp, "--sizes", mr_file]),
            ("mp_window", [mp, "--from", f"{a:.3f}", "--to", f"{b:.3f}", mr_file]),
            ("mp_diff", [mp, "--diff", mr_file, mr_file]),
        ]
    if ht_file and tools.get("heaptrack_print") and not time_only:
        hp = tools["heaptrack_print"]
        analyses += [
            ("hp_flame", [hp, "--print-flamegraph", base + ".ht.folded", ht_file]),
            ("hp_diff", [hp, "--diff", ht_file, ht_file]),
        ]
    for name, argv in analyzers + analyses:
        err = f"{base}.{name}.err"
        m = measure(argv, "/dev/null", err, timeout, f"{base}.{name}.rss" if TIME else None)
        if m["timed_out"] or m["rc"] != 0 or m["maxrss_kib"] is None:
            errors.append((f"{w} round {r}: {name} failed", show(argv), describe_failure(m, err)))
            res[name] = None
            continue
        res[name] = m
        progress(f"  {w} r{r} {name:15s} wall {m['wall']:7.3f} s  peak {m['maxrss_kib'] / 1024:7.1f} MB")
    return res


ANALYSES = ("mp_folded", "mp_svg", "mp_sizes", "mp_window", "mp_diff", "hp_flame", "hp_diff")


def derive(res):
    """Per-round figures; medians of these go in the table."""
    n, mr, ht = res.get("native"), res.get("memrec"), res.get("heaptrack")
    mp, hp = res.get("memprint"), res.get("heaptrack_print")
    a = res.get("allocs")
    d = {}
    d["native_s"] = n["wall"] if n else None
    d["allocs"] = a
    d["mr_x"] = ratio(mr and mr["wall"], n and n["wall"])
    d["ht_x"] = ratio(ht and ht["wall"], n and n["wall"])
    d["added"] = None
    if d["mr_x"] is not None and d["ht_x"] is not None:
        d["added"] = ratio(d["mr_x"] - 1, d["ht_x"] - 1)
    d["mr_cpu_x"] = ratio(mr and mr["cpu"], n and n["cpu"])
    d["ht_cpu_x"] = ratio(ht and ht["cpu"], n and n["cpu"])
    sp = res.get("sampled")
    d["sp_x"] = ratio(sp and sp["wall"], n and n["wall"])
    d["sp_cpu_x"] = ratio(sp and sp["cpu"], n and n["cpu"])
    d["sp_bpa"] = ratio(res.get("sp_size"), a)
    d["mr_bpa"] = ratio(res.get("mr_size"), a)
    tm = res.get("timed")
    d["tm_x"] = ratio(tm and tm["wall"], n and n["wall"])
    d["tm_cpu_x"] = ratio(tm and tm["cpu"], n and n["cpu"])
    # What --time adds to what recording adds: (timed - native) / (memrec - native) - 1.
    d["tm_added"] = None
    if d["tm_x"] is not None and d["mr_x"] is not None and d["mr_x"] > 1:
        d["tm_added"] = (d["tm_x"] - 1) / (d["mr_x"] - 1) - 1
    d["tm_added_cpu"] = None
    if d["tm_cpu_x"] is not None and d["mr_cpu_x"] is not None and d["mr_cpu_x"] > 1:
        d["tm_added_cpu"] = (d["tm_cpu_x"] - 1) / (d["mr_cpu_x"] - 1) - 1
    d["tm_bpa"] = ratio(res.get("tm_size"), a)
    d["tm_growth"] = None
    if res.get("tm_size") and res.get("mr_size"):
        d["tm_growth"] = res["tm_size"] / res["mr_size"] - 1
    d["ht_bpa"] = ratio(res.get("ht_size"), a)
    d["bpa_ratio"] = ratio(res.get("mr_size"), res.get("ht_size"))
    d["mp_s"] = mp["wall"] if mp else None
    d["hp_s"] = hp["wall"] if hp else None
    d["mp_aps"] = ratio(a, d["mp_s"])
    d["hp_aps"] = ratio(a, d["hp_s"])
    d["aps_ratio"] = ratio(d["hp_s"], d["mp_s"])
    d["mp_mb"] = mp["maxrss_kib"] / 1024 if mp else None
    d["hp_mb"] = hp["maxrss_kib"] / 1024 if hp else None
    d["mb_ratio"] = ratio(d["mp_mb"], d["hp_mb"])
    for name in ANALYSES:
        x = res.get(name)
        d[name + "_s"] = x["wall"] if x else None
        d[name + "_cpu"] = x["cpu"] if x else None
        d[name + "_mb"] = x["maxrss_kib"] / 1024 if x else None
        # Against plain memprint on the same recording (heaptrack_print's against plain heaptrack_print).
        plain = mp if name.startswith("mp_") else hp
        d[name + "_x"] = ratio(x and x["wall"], plain and plain["wall"])
        d[name + "_cpu_x"] = ratio(x and x["cpu"], plain and plain["cpu"])
        d[name + "_mb_x"] = ratio(d[name + "_mb"], plain and plain["maxrss_kib"] / 1024)
    return d


def snapshot_tools(build, dest):
    """Copy memrec, memprint and the preload library (which memrec looks for
    next to itself) to dest, so that a rebuild of the build directory during
    the run neither breaks it nor mixes two versions in one table. A copy
    taken while the linker was writing is detected by the mtime moving and
    taken again."""
    names = ("memrec", "memprint", "libmemrec_preload.so")
    os.makedirs(dest)
    for attempt in range(20):
        stamps = [os.stat(os.path.join(build, n)).st_mtime_ns for n in names]
        if time.time_ns() - max(stamps) > 2_000_000_000:
            for n in names:
                shutil.copy2(os.path.join(build, n), os.path.join(dest, n))
            if stamps == [os.stat(os.path.join(build, n)).st_mtime_ns for n in names]:
                ok = all(subprocess.run([os.path.join(dest, t), "--version"], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL).returncode == 0 for t in ("memrec", "memprint"))
                if ok:
                    for n in names:
                        SNAPSHOT[os.path.join(dest, n)] = os.path.join(build, n)
                    return {"memrec": os.path.join(dest, "memrec"), "memprint": os.path.join(dest, "memprint")}
        time.sleep(1)
    die(f"cannot take a stable copy of the tools in '{build}' (is a build running?)")


def build_workloads(src, out_dir):
    if not os.path.isfile(os.path.join(src, "Makefile")):
        die(f"cannot find the workloads in '{src}' (set MEMREC_BENCH_SRC or --src)")
    os.makedirs(out_dir, exist_ok=True)
    p = subprocess.run(["make", "-s", "-C", src, f"O={out_dir}"], stdout=sys.stderr, stderr=sys.stderr)
    if p.returncode != 0:
        die(f"cannot build the workloads: 'make -C {src} O={out_dir}' failed")


def tool_version(argv):
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
        return p.stdout.decode(errors="replace").strip().splitlines()[0]
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return "?"


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def machine_lines(build):
    lines = []
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    lines.append(f"machine: nproc {os.cpu_count()} (usable {len(os.sched_getaffinity(0))}), "
                 f"uname -r {os.uname().release}, {cpu}")
    lines.append("date: " + datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")
                 + f", load average at start {loadavg()}")
    btype = "?"
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("CMAKE_BUILD_TYPE:"):
                    btype = line.split("=", 1)[1].strip() or "CMAKE_BUILD_TYPE unset: CMakeLists.txt default"
    except OSError:
        pass
    rev = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL).stdout.decode().strip() or "?"
    built = max(os.path.getmtime(p) for p in SNAPSHOT)
    built = datetime.datetime.fromtimestamp(built).astimezone()
    lines.append(f"memrec: {rev}, build '{build}' ({btype}), tools built {built:%Y-%m-%d %H:%M:%S %Z}"
                 " (copied at start)")
    env = [f"{k}={v}" for k, v in os.environ.items() if k.startswith("MEMREC_")]
    if env:
        lines.append("environment: " + " ".join(env))
    return lines


def main():
    ap = argparse.ArgumentParser(
        prog=PROG,
        description="Benchmark memrec against heaptrack on the shared workloads.")
    ap.add_argument("build", nargs="?",
                    help="memrec build directory (default: $MEMREC_BUILD_DIR, else build/ in the repository)")
    ap.add_argument("-r", "--rounds", type=int, help="rounds per workload (default 5; 1 with --quick)")
    ap.add_argument("-w", "--workload", action="append", metavar="NAME",
                    help=f"workload to run, repeatable or comma-separated ({', '.join(WORKLOADS)}; default all)")
    ap.add_argument("--quick", action="store_true", help="smaller arguments and 1 round: a smoke test")
    ap.add_argument("--src", help="workload sources (default: $MEMREC_BENCH_SRC, else ../shared/bench)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds before one run counts as hung (default 600)")
    ap.add_argument("--keep", action="store_true", help="keep the recordings and logs in the temporary directory")
    ap.add_argument("--raw", metavar="FILE", help="also write every round's raw numbers to FILE as JSON")
    ap.add_argument("--no-heaptrack", action="store_true", help="run native, memrec and sampled only")
    ap.add_argument("--time-only", action="store_true",
                    help="run native, memrec and memrec --time only, no analyzers (the cost of --time)")
    ap.add_argument("--sample-rate", metavar="BYTES", default=TARGET_SAMPLE_RATE,
                    help=f"memrec --sample-rate of the sampled variant (default {TARGET_SAMPLE_RATE}, "
                         "where its targets are defined)")
    args = ap.parse_args()

    build = os.path.abspath(args.build or os.environ.get("MEMREC_BUILD_DIR") or os.path.join(REPO, "build"))
    src = os.path.abspath(args.src or os.environ.get("MEMREC_BENCH_SRC") or os.path.join(REPO, "..", "shared", "bench"))
    rounds = args.rounds if args.rounds is not None else (1 if args.quick else 5)
    if rounds < 1:
        die("invalid rounds (expected 1 or more)", 2)
    selected = []
    for item in args.workload or WORKLOADS:
        for name in item.split(","):
            if name not in WORKLOADS:
                die(f"unknown workload '{name}' (expected one of {', '.join(WORKLOADS)})", 2)
            if name not in selected:
                selected.append(name)
    wargs = ARGS_QUICK if args.quick else ARGS_FULL

    for name in ("memrec", "memprint", "libmemrec_preload.so"):
        if not os.path.isfile(os.path.join(build, name)):
            die(f"cannot find '{os.path.join(build, name)}' (build memrec first: cmake -B build && cmake --build build)")
    tmp = tempfile.mkdtemp(prefix="memrec-bench.")
    if not args.keep:
        atexit.register(shutil.rmtree, tmp, True)
    tools = snapshot_tools(build, os.path.join(tmp, "tools"))
    # Let memrec itself judge the rate now rather than after the first workload.
    argv = [tools["memrec"], "-q", "--sample-rate", args.sample_rate, "-o", os.path.join(tmp, "rate.mrec"), "true"]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        die(f"--sample-rate {args.sample_rate}: {p.stdout.decode(errors='replace').strip() or 'memrec failed'}",
            2 if p.returncode == 2 else 1)
    notes = []
    if args.sample_rate != TARGET_SAMPLE_RATE:
        notes.append(f"sampled at --sample-rate {args.sample_rate}: the sampling targets are defined "
                     f"at {TARGET_SAMPLE_RATE}")
    with_ht = False
    if args.time_only:
        notes.append("--time-only: native, memrec and memrec --time only, no analyzers")
    elif args.no_heaptrack:
        notes.append("heaptrack skipped (--no-heaptrack): native, memrec and sampled only")
    if args.time_only or args.no_heaptrack:
        pass
    elif shutil.which("heaptrack"):
        tools["heaptrack"] = shutil.which("heaptrack")
        with_ht = True
        if shutil.which("heaptrack_print"):
            tools["heaptrack_print"] = shutil.which("heaptrack_print")
        else:
            notes.append("heaptrack_print not installed: heaptrack analysis columns are empty")
    else:
        notes.append("heaptrack not installed: native, memrec and sampled only, heaptrack columns are empty")
    # Wall and CPU come from perf_counter and getrusage(RUSAGE_CHILDREN);
    # /usr/bin/time only serves the analyzers' peak RSS (see measure()).
    if not TIME:
        floor = measure(["true"], "/dev/null", "/dev/null", 60)["maxrss_kib"] / 1024
        notes.append(f"/usr/bin/time not found: analyzer peak RSS comes from wait4 and cannot read "
                     f"below this script's own RSS ({floor:.1f} MB)")
    if not become_subreaper():
        notes.append("could not become a child subreaper: CPU of processes that outlive their parent may be missed")

    try:
        if os.getloadavg()[0] > 0.5:
            notes.append(f"machine not idle at start (load average {loadavg()}): slowdowns may be inflated")
    except OSError:
        pass

    bench_bin = os.path.join(build, "bench")
    build_workloads(src, bench_bin)
    for w in selected:
        if not os.access(os.path.join(bench_bin, w), os.X_OK):
            die(f"cannot find workload '{os.path.join(bench_bin, w)}' after building")

    command = shlex.join([sys.executable, sys.argv[0]] + sys.argv[1:])
    header = [f"command: {command}"] + machine_lines(build)
    header.append(f"versions: {tool_version([tools['memrec'], '--version'])}"
                  + (f"; {tool_version([tools['heaptrack'], '--version'])}" if with_ht else ""))
    header.append(f"rounds: {rounds}; workloads: "
                  + "; ".join(f"{w} {' '.join(wargs[w])}" for w in selected))
    header.append(f"sampled: memrec -q --sample-rate {args.sample_rate}; timed: memrec -q --time")
    for line in header:
        progress(line)

    progress(f"recordings in {tmp}" + ("" if args.keep else " (removed at the end)"))
    all_rounds = {}
    # Cyclic rotations: over 4 rounds each variant runs once in each position.
    variants = ["native", "memrec", "heaptrack", "sampled", "timed"]
    orders = [variants[i:] + variants[:i] for i in range(len(variants))]
    try:
        for w in selected:
            cmd = [os.path.join(bench_bin, w)] + wargs[w]
            progress(f"{w}: {shlex.join(cmd)}")
            all_rounds[w] = []
            # One untimed native run first: page cache, CPU frequency, lazy binding.
            measure(cmd, "/dev/null", "/dev/null", args.timeout)
            for r in range(1, rounds + 1):
                # Accuracy from the first round with both recordings (normally round 1).
                want_acc = not any(x.get("accuracy") for x in all_rounds[w])
                res = run_round(w, r, cmd, tools, tmp, args.timeout, with_ht, orders[(r - 1) % len(orders)],
                                args.sample_rate, want_acc, args.time_only)
                all_rounds[w].append(res)
                if not args.keep:  # disk: a round's recordings reach tens of MB
                    for f in glob.glob(os.path.join(tmp, f"{w}.{r}.*")):
                        os.unlink(f)
    except KeyboardInterrupt:
        progress(f"{PROG}: interrupted; printing what was measured")

    # ---- table ----
    headers = [
        ["", "native", "", "memrec", "heaptrack", "added", "memrec", "heaptrack", "memrec", "heaptrack", "B/alloc",
         "memprint", "ht_print", "memprint", "ht_print", "allocs/s", "memprint", "ht_print", "peak"],
        ["workload", "s", "allocs", "x wall", "x wall", "mr/ht", "x cpu", "x cpu", "B/alloc", "B/alloc", "mr/ht",
         "s", "s", "allocs/s", "allocs/s", "mp/hp", "peak MB", "peak MB", "mp/hp"],
    ]
    sp_headers = [
        ["", "sampled", "sampled", "sampled", "exact", "sites", "worst", "worst site", "site", "1 sd", "max"],
        ["workload", "x wall", "x cpu", "B/alloc", "totals", ">1%", "error", "(own frame)", "share", "there",
         "1 sd"],
    ]
    an_headers = [
        ["", "memprint", "--folded", "--svg", "--sizes", "window", "--diff", "ht_print", "ht_print", "memprint",
         "--folded", "--svg", "--sizes", "window", "--diff"],
        ["workload", "s", "x cpu", "x cpu", "x cpu", "x cpu", "s", "-F s", "--diff s", "peak MB", "x MB", "x MB",
         "x MB", "x MB", "x MB"],
    ]
    tm_headers = [
        ["", "memrec", "--time", "--time", "memrec", "--time", "--time", "memrec", "--time", "file"],
        ["workload", "x wall", "x wall", "added", "x cpu", "x cpu", "added cpu", "B/alloc", "B/alloc", "growth"],
    ]
    rows, sp_rows, an_rows, tm_rows = [], [], [], []
    summary = {}
    for w in selected:
        ds = [derive(res) for res in all_rounds.get(w, [])]
        m = {k: med([d[k] for d in ds]) for k in (ds[0].keys() if ds else [])}
        exact = [res["sp_exact"] for res in all_rounds.get(w, []) if res.get("sp_exact") is not None]
        m["sp_exact"] = all(exact) if exact else None
        acc = next((res for res in all_rounds.get(w, []) if res.get("accuracy")), None)
        m["accuracy"] = acc and dict(acc["accuracy"], round=acc["round"])
        summary[w] = m
        if not ds:
            continue
        tm_rows.append([
            w, fmt(m["mr_x"], ".3f"), fmt(m["tm_x"], ".3f"), fmt(m["tm_added"], "+.1%"),
            fmt(m["mr_cpu_x"], ".3f"), fmt(m["tm_cpu_x"], ".3f"), fmt(m["tm_added_cpu"], "+.1%"),
            fmt(m["mr_bpa"], ".2f"), fmt(m["tm_bpa"], ".2f"),
            fmt(m["tm_growth"], "+.1%"),
        ])
        a = m["accuracy"] or {}
        site = a.get("worst_site") or "-"
        sp_rows.append([
            w, fmt(m["sp_x"], ".2f"), fmt(m["sp_cpu_x"], ".2f"), fmt(m["sp_bpa"], ".3f"),
            "-" if m["sp_exact"] is None else ("same" if m["sp_exact"] else "DIFF"),
            fmt(a.get("sites"), "d"), fmt(a.get("worst_err"), "+.1%"),
            site if len(site) <= 32 else site[:14] + "..." + site[-15:],
            fmt(a.get("worst_share"), ".1%"), fmt(a.get("worst_sigma"), ".1%"), fmt(a.get("max_sigma"), ".1%"),
        ])
        an_rows.append([
            w, fmt(m["mp_s"], ".3f"), fmt(m["mp_folded_cpu_x"], ".2f"), fmt(m["mp_svg_cpu_x"], ".2f"),
            fmt(m["mp_sizes_cpu_x"], ".2f"), fmt(m["mp_window_cpu_x"], ".2f"), fmt(m["mp_diff_s"], ".3f"),
            fmt(m["hp_flame_s"], ".3f"), fmt(m["hp_diff_s"], ".3f"), fmt(m["mp_mb"], ".1f"),
            fmt(m["mp_folded_mb_x"], ".2f"), fmt(m["mp_svg_mb_x"], ".2f"), fmt(m["mp_sizes_mb_x"], ".2f"),
            fmt(m["mp_window_mb_x"], ".2f"), fmt(m["mp_diff_mb_x"], ".2f"),
        ])
        rows.append([
            w, fmt(m["native_s"], ".3f"), fmt_rate(m["allocs"]),
            fmt(m["mr_x"], ".2f"), fmt(m["ht_x"], ".2f"), fmt(m["added"], ".3f"),
            fmt(m["mr_cpu_x"], ".2f"), fmt(m["ht_cpu_x"], ".2f"),
            fmt(m["mr_bpa"], ".2f"), fmt(m["ht_bpa"], ".2f"), fmt(m["bpa_ratio"], ".3f"),
            fmt(m["mp_s"], ".3f"), fmt(m["hp_s"], ".3f"), fmt_rate(m["mp_aps"]), fmt_rate(m["hp_aps"]),
            fmt(m["aps_ratio"], ".2f"), fmt(m["mp_mb"], ".1f"), fmt(m["hp_mb"], ".1f"), fmt(m["mb_ratio"], ".2f"),
        ])

    print()
    for line in header:
        print(line)
    for n in notes:
        print("note: " + n)
    print()
    print_table(headers, rows)
    print()
    print(f"medians over rounds; ratio columns are medians of per-round ratios; "
          f"load average at end {loadavg()}")
    if tm_rows:
        print()
        print("allocator time: memrec --time (the time of every forwarded allocator call in the recording)")
        print()
        print_table(tm_headers, tm_rows)
        print()
        print("added: what --time adds to memrec's added time, median of per-round (timed x - 1) / (memrec x - 1) - 1 "
              f"(target <= +{TARGET_TIMED_ADDED:.0%});\nadded cpu: the same on CPU time (user + system of the program "
              "and memrec), less sensitive to a loaded machine; growth: --time file size / memrec file size - 1")
    if an_rows and not args.time_only:
        print()
        print("analyses (memprint --folded, --svg, --sizes, a window [1/4, 1/2) of the run, --diff of a recording "
              "with itself; heaptrack_print -F and --diff likewise):")
        print()
        print_table(an_headers, an_rows)
        print()
        print("x cpu, x MB: medians of per-round ratios to plain memprint's CPU time and peak RSS on the same "
              "recording (target: <= 1.5 for --folded, --svg, --sizes, window)")
    if sp_rows and not args.time_only:
        print()
        print(f"sampling mode: memrec --sample-rate {args.sample_rate}")
        print()
        print_table(sp_headers, sp_rows)
        print()
        acc_rounds = sorted({summary[w]["accuracy"]["round"] for w in selected
                             if summary.get(w) and summary[w].get("accuracy")})
        print(f"x wall, x cpu, B/alloc: medians as above; exact totals: allocations and allocated bytes equal to "
              f"the full recording's in every round;\naccuracy (sites .. max 1 sd) from round "
              f"{', '.join(map(str, acc_rounds)) or '-'}: sites = call stacks with more than {SITE_SHARE:.0%} of the "
              f"allocated bytes, error = (sampled estimate - full) / full,\n1 sd = expected relative standard "
              f"deviation of an estimate from sampling alone (see bench/README.md)")
        cut = [w for w in selected if summary.get(w) and (summary[w].get("accuracy") or {}).get("cut")]
        if cut:
            print(f"warning: memprint --json -n {JSON_ENTRIES} may have cut most_allocated short for "
                  f"{', '.join(cut)}: accuracy may miss sites")

    # ---- targets ----
    if rows:
        print()
        if with_ht:
            print("targets (on medians): added mr/ht <= 0.333 (mt <= 0.200); B/alloc mr/ht <= 0.5; "
                  "allocs/s mp/hp >= 5; peak mp/hp <= 1;")
        else:
            print("targets (on medians):", end=" ")
        print(f"--time added <= +{TARGET_TIMED_ADDED:.0%}; "
              f"sampled x wall <= {TARGET_SAMPLED_X:.2f}; sampled worst error <= {TARGET_SAMPLED_ERR:.0%} "
              f"(defined at --sample-rate {TARGET_SAMPLE_RATE}"
              + ("" if args.sample_rate == TARGET_SAMPLE_RATE else f"; this run: {args.sample_rate}") + ")")
        for w in selected:
            m = summary.get(w)
            if not m:
                continue
            lim = TARGET_ADDED_MT if w == "mt" else TARGET_ADDED
            checks = [
                ("added", m.get("added"), lambda v: v <= lim),
                ("bytes", m.get("bpa_ratio"), lambda v: v <= TARGET_BYTES),
                ("allocs/s", m.get("aps_ratio"), lambda v: v >= TARGET_THROUGHPUT),
                ("peak", m.get("mb_ratio"), lambda v: v <= TARGET_PEAK),
            ] if with_ht else []
            acc = m.get("accuracy") or {}
            if not args.time_only:
                checks += [
                    ("sampled", m.get("sp_x"), lambda v: v <= TARGET_SAMPLED_X),
                    ("sampled error", acc.get("worst_err"), lambda v: abs(v) <= TARGET_SAMPLED_ERR),
                ]
            checks.append(("--time added", m.get("tm_added"), lambda v: v <= TARGET_TIMED_ADDED))
            cells = []
            for name, v, ok in checks:
                cells.append(f"{name} {'n/a ' if v is None else ('pass' if ok(v) else 'FAIL')}")
            print(f"  {w:6s} " + "   ".join(cells))

    if args.raw:
        with open(args.raw, "w") as f:
            json.dump({"header": header, "notes": notes, "rounds": all_rounds, "medians": summary}, f, indent=1)

    if errors:
        print()
        print(f"errors ({len(errors)}):")
        for what, cmd, detail in errors:
            print(f"  {what}\n    command: {cmd}\n    {detail}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
