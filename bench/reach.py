#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The reachability scan on real programs (docs/performance.md,
"Reachability at the end"): for each command, memrec's unreachable figure
(bytes in blocks, of which indirectly) against memcheck's definitely +
indirectly lost on the same command, LeakSanitizer's for the programs
built here with clang -fsanitize=leak, and the scan's cost (memrec's REACH
record: the time from memrec taking the request to its record, the
program's threads stopped for most of it), median of --rounds runs.

    bench/reach.py [BUILD] [--rounds N] [--no-valgrind]
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
from mrecread import Recording  # noqa: E402


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=900, **kw)


def memcheck(cmd, cwd):
    err = run(["valgrind", "--leak-check=full"] + cmd, cwd=cwd).stderr.decode()

    def get(kind):
        m = re.search(r"%s: ([\d,]+) bytes in ([\d,]+) blocks" % kind, err)
        return (int(m.group(1).replace(",", "")), int(m.group(2).replace(",", ""))) if m else (0, 0)

    d, i, p = get("definitely lost"), get("indirectly lost"), get("possibly lost")
    return d[0] + i[0], d[1] + i[1], i[1], p[1]


def lsan(binary, args, cwd):
    r = run([binary] + args, cwd=cwd, env=dict(os.environ, LSAN_OPTIONS="exitcode=0"))
    m = re.search(r"SUMMARY: LeakSanitizer: (\d+) byte\(s\) leaked in (\d+) allocation", r.stderr.decode())
    ind = sum(int(x) for x in re.findall(r"Indirect leak of \d+ byte\(s\) in (\d+) object", r.stderr.decode()))
    return (int(m.group(1)), int(m.group(2)), ind) if m else (0, 0, 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-valgrind", action="store_true")
    a = ap.parse_args()
    memrec = os.path.join(a.build, "memrec")
    memprint = os.path.join(a.build, "memprint")
    d = tempfile.mkdtemp(prefix="memrec-reach-")
    with open(os.path.join(d, "q.sql"), "w") as f:
        f.write("create table t(a, b); insert into t values (1, 'x'), (2, 'y');\n"
                "select count(*), group_concat(b) from t;\n")
    with open(os.path.join(d, "CMakeLists.txt"), "w") as f:
        f.write("cmake_minimum_required(VERSION 3.13)\nproject(p NONE)\n")
    lsan_bins = {}
    if shutil.which("clang"):
        src = os.path.join(HERE, "..", "tests", "progs", "reach.c")
        out = os.path.join(d, "reach_lsan")
        if run(["clang", "-O2", "-g", "-pthread", "-fsanitize=leak", src, "-o", out]).returncode == 0:
            lsan_bins["reach"] = out
        cxx = os.path.join(HERE, "..", "tests", "progs", "cxx.cpp")
        out = os.path.join(d, "cxx_lsan")
        if run(["clang++", "-O2", "-g", "-std=c++17", "-fsized-deallocation", "-fsanitize=leak", cxx, "-o",
                out]).returncode == 0:
            lsan_bins["cxx"] = out
    progs = os.path.join(a.build, "tests", "progs")
    cases = [
        ("python3", ["/usr/bin/python3", "-c", "import json, decimal; print(len(json.dumps(list(range(1000)))))"]),
        ("perl", ["perl", "-e", "my %h = map { $_ => [$_] } 1..20000; print scalar(keys %h), qq(\\n)"]),
        ("git", ["git", "-C", os.path.join(HERE, ".."), "log", "-n", "20", "--stat"]),
        ("sqlite3", ["sqlite3", ":memory:", ".read q.sql"]),
        ("cmake", ["cmake", "-S", ".", "-B", "b"]),
        ("reach (C)", [os.path.join(progs, "reach")]),
    ]
    if os.path.exists(os.path.join(progs, "cxx")):
        cases.append(("cxx (C++)", [os.path.join(progs, "cxx")]))
    print("| program | leaked | memrec unreachable (indirectly) | memcheck definitely + indirectly (indirectly) | "
          "LeakSanitizer (indirectly) | scan cost, median of %d (stopped) |" % a.rounds)
    print("|---|---|---|---|---|---|")
    for name, cmd in cases:
        costs, stops, fig = [], [], None
        for i in range(a.rounds):
            out = os.path.join(d, "r.zst")
            if os.path.exists(out):
                os.unlink(out)
            shutil.rmtree(os.path.join(d, "b"), ignore_errors=True)
            r = run([memrec, "-q", "-o", out, "--"] + cmd, cwd=d)
            if not os.path.exists(out):
                print("| %s | memrec failed: %s |" % (name, r.stderr.decode().strip()))
                break
            rec = Recording(out, events=False)
            x = rec.reach[0] if rec.reach else None
            j = json.loads(run([memprint, "--json", "--no-builtin-suppressions", out]).stdout.decode())
            if x:
                costs.append(x["cost_ns"])
                stops.append(x["stopped_ns"])
            fig = (j["leaked_bytes"], j["leaked_allocations"], j["unreachable_bytes"], j["unreachable_allocations"],
                   j["indirectly_unreachable_allocations"])
        if not fig:
            continue
        shutil.rmtree(os.path.join(d, "b"), ignore_errors=True)
        mc = "-"
        if not a.no_valgrind and shutil.which("valgrind"):
            b, n, ind, _ = memcheck(cmd, d)
            mc = "%d B in %d (%d)" % (b, n, ind)
        key = "reach" if name.startswith("reach") else "cxx" if name.startswith("cxx") else None
        ls = "-"
        if key in lsan_bins:
            b, n, ind = lsan(lsan_bins[key], [], d)
            ls = "%d B in %d (%d)" % (b, n, ind)
        cost = "%.1f ms (%.1f ms)" % (statistics.median(costs) / 1e6, statistics.median(stops) / 1e6) if costs else "-"
        print("| %s | %d B in %d | %s B in %s (%s) | %s | %s | %s |" %
              (name, fig[0], fig[1], fig[2], fig[3], fig[4], mc, ls, cost))
    shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
