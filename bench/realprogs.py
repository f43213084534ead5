#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/realprogs.py: the analyzers on recordings of real programs. Records
a fixed set of programs found on a Debian machine (gcc's cc1 compiling a
source of this repository, python3, perl, git log, sqlite3, a cmake
configure of a tiny project, bash) once with memrec and once with
heaptrack, then times, in rounds, memprint against heaptrack_print (wall
time and peak RSS), memtui's first screen (memtui --batch, which prints the
summary screen and exits), memprint --folded, --svg and a time window
(--from/--to over the middle half of the run), and prints medians.
Programs that are not installed are left out with a note. Writes only a
temporary directory (removed at the end unless --keep). See bench/README.md.

usage: bench/realprogs.py [-r ROUNDS] [-p NAME[,NAME]] [--keep] [BUILD]"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
ANALYZER_ENV = None  # set in main(): the environment of the timed analyzer runs

# Targets of issue 25.
TARGET_SPEED = 5.0   # heaptrack_print time / memprint time
TARGET_RSS = 1.0     # memprint peak RSS / heaptrack_print peak RSS
TARGET_FIRST = 1.0   # memtui's first screen, seconds

PYTHON_WORK = ("import json, re, collections\n"
               "d = [{'k%d' % i: [i] * (i % 7), 's': str(i) * 3} for i in range(300000)]\n"
               "t = json.dumps(d)\n"
               "c = collections.Counter(re.findall(r'k[0-9]+', t))\n"
               "print(len(t), len(c))\n")
PERL_WORK = ("my %h; for my $i (1..600000) { $h{\"k$i\"} = [ ($i) x ($i % 5) ]; }"
             " my @k = sort keys %h; my $s = join(',', @k[0..999]); print scalar(@k), \"\\n\";")
SQLITE_WORK = ("create table t(a integer primary key, b text);"
               " with recursive c(x) as (select 1 union all select x + 1 from c where x < 300000)"
               " insert into t select x, hex(randomblob(24)) from c;"
               " create index tb on t(b); select count(*), max(b) from t;")
BASH_WORK = "for i in $(seq 1 100000); do a[$i]=\"v$i\"; done; s=\"${a[*]}\"; echo ${#a[@]} ${#s}"
TINY_CMAKE = "cmake_minimum_required(VERSION 3.13)\nproject(tiny C)\nadd_executable(tiny tiny.c)\n"


def note(msg):
    print("note: " + msg, flush=True)


def progress(msg):
    print(msg, file=sys.stderr, flush=True)


def programs(tmp):
    """[(name, argv, extra env, working directory)] of the programs present."""
    out = []
    gcc = shutil.which("gcc")
    if gcc:
        cc1 = subprocess.run([gcc, "-print-prog-name=cc1"], stdout=subprocess.PIPE, text=True).stdout.strip()
        source = os.path.join(tmp, "report.i")
        # Preprocessed once here, so that cc1 alone is recorded (the driver would run it as a child).
        pre = subprocess.run([gcc, "-E", "-I" + os.path.join(REPO, "analyzer"), "-I" + os.path.join(REPO, "format"),
                              "-I" + os.path.join(REPO, "util"), os.path.join(REPO, "analyzer", "report.c"), "-o",
                              source])
        if os.path.isabs(cc1) and os.access(cc1, os.X_OK) and pre.returncode == 0:
            out.append(("cc1", [cc1, "-fpreprocessed", "-quiet", "-O2", "-g", source, "-o", os.path.join(tmp, "report.s")],
                        {}, tmp))
    python3 = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else shutil.which("python3")
    if python3:
        # The interpreter's own allocator would hide its objects from both profilers.
        # A script file: heaptrack's own file format is line-based, and a command line with
        # newlines (python3 -c) breaks its interpreter.
        script = os.path.join(tmp, "work.py")
        with open(script, "w") as f:
            f.write(PYTHON_WORK)
        out.append(("python3", [python3, script], {"PYTHONMALLOC": "malloc"}, tmp))
    if shutil.which("perl"):
        out.append(("perl", [shutil.which("perl"), "-e", PERL_WORK], {}, tmp))
    if shutil.which("git") and os.path.exists(os.path.join(REPO, ".git")):
        out.append(("git log", [shutil.which("git"), "-C", REPO, "log", "--stat", "-p", "-n", "400"], {"GIT_PAGER": "cat"},
                    tmp))
    if shutil.which("sqlite3"):
        out.append(("sqlite3", [shutil.which("sqlite3"), ":memory:", SQLITE_WORK], {}, tmp))
    if shutil.which("cmake") and gcc:
        src = os.path.join(tmp, "tiny")
        os.makedirs(src, exist_ok=True)
        with open(os.path.join(src, "CMakeLists.txt"), "w") as f:
            f.write(TINY_CMAKE)
        with open(os.path.join(src, "tiny.c"), "w") as f:
            f.write("int main(void) { return 0; }\n")
        # A fresh build directory per recording (configure caches its findings): see record().
        out.append(("cmake", [shutil.which("cmake"), "-S", src, "-B", "@BUILDDIR@"], {}, tmp))
    if shutil.which("bash"):
        out.append(("bash", [shutil.which("bash"), "-c", BASH_WORK], {}, tmp))
    return out


TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def run(argv, env=None, cwd=None):
    """(wall seconds, peak RSS in bytes, exit status) of one run, output
    discarded. The RSS comes from /usr/bin/time -f %M where it is installed:
    a child's ru_maxrss counts the RSS this Python process had when it
    forked, before the exec (14 MB for /bin/true), which would floor every
    small analyzer's figure."""
    # Every analyzer run shares the benchmark's own symbol cache (see main()).
    if env is None and ANALYZER_ENV:
        env = ANALYZER_ENV
    rss_file = None
    if TIME:
        fd, rss_file = tempfile.mkstemp(prefix="memrec-rss-")
        os.close(fd)
        argv = [TIME, "-f", "%M", "-o", rss_file] + list(argv)
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    rss = usage.ru_maxrss * 1024
    if rss_file:
        try:
            with open(rss_file) as f:
                rss = int(f.read().split()[-1]) * 1024
        except (OSError, ValueError, IndexError):
            pass
        os.unlink(rss_file)
    return wall, rss, p.returncode


def record(tmp, build, name, argv, extra, cwd, tool):
    slug = name.replace(" ", "_")
    env = dict(os.environ)
    env.update(extra)
    argv = [a.replace("@BUILDDIR@", os.path.join(tmp, "cmake-" + tool)) for a in argv]
    if tool == "memrec":
        out = os.path.join(tmp, slug + ".zst")
        cmd = [os.path.join(build, "memrec"), "-q", "-o", out, "--"] + argv
    else:
        base = os.path.join(tmp, slug + ".ht")
        out = base + ".zst"
        cmd = ["heaptrack", "-o", base] + argv
    _, _, rc = run(cmd, env=env, cwd=cwd)
    if rc != 0 or not os.path.exists(out):
        raise RuntimeError("recording failed (status %d): %s" % (rc, " ".join(cmd)))
    return out


def summary(build, path):
    r = subprocess.run([os.path.join(build, "memprint"), "--json", path], stdout=subprocess.PIPE, text=True)
    d = json.loads(r.stdout)
    return d["allocations"], d["runtime_ms"]


def median_of(rounds, key):
    return statistics.median(r[key] for r in rounds)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", nargs="?", default=os.environ.get("MEMREC_BUILD_DIR") or os.path.join(REPO, "build"))
    ap.add_argument("-r", "--rounds", type=int, default=3)
    ap.add_argument("-p", "--programs", action="append", help="names to run (comma-separated, repeatable)")
    ap.add_argument("--keep", action="store_true", help="keep the recordings (the directory is printed)")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    memprint = os.path.join(build, "memprint")
    memtui = os.path.join(build, "memtui")
    for tool in ("memrec", "memprint", "memtui"):
        if not os.access(os.path.join(build, tool), os.X_OK):
            print("realprogs.py: no %s in '%s' (build it first)" % (tool, build), file=sys.stderr)
            return 2
    have_heaptrack = shutil.which("heaptrack") and shutil.which("heaptrack_print")
    if not have_heaptrack:
        note("heaptrack is not installed: its columns stay '-'")
    tmp = tempfile.mkdtemp(prefix="memrec-realprogs-")
    # memprint and memtui keep the frames they resolve from DWARF in a cache (memprint(1),
    # FILES): one of the benchmark's own, filled by an untimed run per recording, then timed
    # warm; the cold figure (MEMREC_SYMBOL_CACHE=off) is its own column.
    global ANALYZER_ENV
    ANALYZER_ENV = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"))
    ANALYZER_ENV.pop("MEMREC_SYMBOL_CACHE", None)
    cold_env = dict(ANALYZER_ENV, MEMREC_SYMBOL_CACHE="off")
    wanted = set(",".join(args.programs).split(",")) if args.programs else None
    progs = [p for p in programs(tmp) if not wanted or p[0] in wanted]
    print("bench/realprogs.py: %d rounds, build %s, load %.2f" % (args.rounds, build, os.getloadavg()[0]))
    rows = []
    failures = []
    try:
        for name, argv, extra, cwd in progs:
            progress("recording %s" % name)
            try:
                mr = record(tmp, build, name, argv, extra, cwd, "memrec")
                ht = record(tmp, build, name, argv, extra, cwd, "heaptrack") if have_heaptrack else None
            except RuntimeError as e:
                failures.append("%s: %s" % (name, e))
                continue
            allocs, runtime_ms = summary(build, mr)
            window = ["--from", "%.3f" % (runtime_ms / 4000), "--to", "%.3f" % (runtime_ms * 3 / 4000)]
            run([memprint, mr])  # fills the symbol cache
            rounds = []
            for i in range(args.rounds):
                progress("  %s: round %d" % (name, i + 1))
                r = {}
                r["cold"], _, _ = run([memprint, mr], env=cold_env)
                r["mp"], r["mp_rss"], rc = run([memprint, mr])
                if rc != 0:
                    failures.append("%s: memprint %s exited %d" % (name, mr, rc))
                if ht:
                    r["hp"], r["hp_rss"], _ = run(["heaptrack_print", ht])
                r["tui"], r["tui_rss"], _ = run([memtui, "--batch", mr])
                r["folded"], _, _ = run([memprint, "--folded", "/dev/null", mr])
                r["svg"], _, _ = run([memprint, "--svg", "/dev/null", mr])
                r["window"], _, _ = run([memprint] + window + [mr])
                rounds.append(r)
            row = {"name": name, "allocs": allocs, "size": os.path.getsize(mr)}
            for key in rounds[0]:
                row[key] = median_of(rounds, key)
            rows.append(row)
    finally:
        if args.keep:
            note("recordings kept in " + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    head = ("| program | calls | memrec file | memprint | memprint, no cache | heaptrack_print | speed × | "
            "speed ×, no cache | memprint RSS | heaptrack_print RSS | RSS ratio | memtui first screen | --folded | "
            "--svg | window |")
    print()
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    ok = True
    for r in rows:
        speed = r["hp"] / r["mp"] if "hp" in r else None
        rss = r["mp_rss"] / r["hp_rss"] if "hp_rss" in r else None
        cold = r["hp"] / r["cold"] if "hp" in r else None
        print("| %s | %d | %.0f KB | %.3f s | %.3f s | %s | %s | %s | %.1f MB | %s | %s | %.3f s | %.3f s | %.3f s | "
              "%.3f s |" %
              (r["name"], r["allocs"], r["size"] / 1e3, r["mp"], r["cold"], "%.3f s" % r["hp"] if "hp" in r else "-",
               "%.1f" % speed if speed else "-", "%.1f" % cold if cold else "-", r["mp_rss"] / 1e6,
               "%.1f MB" % (r["hp_rss"] / 1e6) if "hp_rss" in r else "-", "%.2f" % rss if rss else "-", r["tui"],
               r["folded"], r["svg"], r["window"]))
    print()
    for r in rows:
        checks = []
        if "hp" in r:
            checks.append(("speed %.1f× >= %.0f×" % (r["hp"] / r["mp"], TARGET_SPEED), r["hp"] / r["mp"] >= TARGET_SPEED))
            checks.append(("RSS %.2f <= %.1f" % (r["mp_rss"] / r["hp_rss"], TARGET_RSS),
                           r["mp_rss"] / r["hp_rss"] <= TARGET_RSS))
        checks.append(("first screen %.2f s <= %.0f s" % (r["tui"], TARGET_FIRST), r["tui"] <= TARGET_FIRST))
        for what, good in checks:
            ok = ok and good
        print("%s %s: %s" % ("PASS" if all(g for _, g in checks) else "FAIL", r["name"],
                             ", ".join(("" if g else "NOT ") + w for w, g in checks)))
    for f in failures:
        print("error: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
