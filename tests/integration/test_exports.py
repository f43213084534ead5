# SPDX-License-Identifier: MIT
"""memprint --pprof and --massif on tests/progs/export_heap, whose figures
are derived in its header comment.

pprof: the file is gzip (read with Python's gzip, not our zlib writer) of a
profile.proto decoded by python3-protobuf with tests/data/profile.proto
compiled by protoc: a decoder that shares nothing with analyzer/protobuf.c.
Its sums equal memprint's JSON figures exactly (calls, bytes allocated,
blocks and bytes live at the end, or at the peak with --pprof-at peak),
its ids and references are consistent, stacks are leaf first with inline
frames innermost first. `pprof -top` or `go tool pprof -top` reads it where
installed.

massif: ms_print (valgrind) reads the file; the peak it prints is
memprint's peak_heap_bytes and the peak tree's top entry is the biggest
site; the file's grammar is checked line by line.

Both: bad output paths and options give one line and a non-zero exit, and
no half-written file is left."""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

D = tmpdir()
REC = os.path.join(D, "export_heap.zst")
PROTO = os.path.join(SRC, "tests", "data", "profile.proto")
SOURCE = "tests/progs/export_heap.c"

# From the program's header comment.
ALLOCATIONS = 50
ALLOCATED = 1053354
PEAK = 1032351
PEAK_BLOCKS = 47
LEAKED = 31093
LEAKED_BLOCKS = 13
BIG_SITE_AT_PEAK = 800024
TINY_AT_PEAK = 2012


def mp(args):
    return run([MEMPRINT] + args)


# Phases a second apart (the program's argument), the windows cut at 0.5 s:
# the first phase is before the cut and the second after it however slow
# the start on a loaded machine (with the default 150 ms and a cut at 0.1 s
# a start slower than 100 ms moved the first phase into the window).
GAP_MS = "1000"
FROM = "0.5"
r = record([prog("export_heap"), GAP_MS], REC)
# A failed recording is a failure: every check below needs it.
if not check_eq(r.returncode, 0, "memrec export_heap: exit status (%s)" % r.stderr.decode().strip()):
    done()
rep = report_json(REC)
check_eq(rep["allocations"], ALLOCATIONS, "export_heap: allocations")
check_eq(rep["allocated_bytes"], ALLOCATED, "export_heap: allocated bytes")
check_eq(rep["peak_heap_bytes"], PEAK, "export_heap: peak")
check_eq(rep["leaked_bytes"], LEAKED, "export_heap: leaked bytes")
check_eq(rep["leaked_allocations"], LEAKED_BLOCKS, "export_heap: leaked blocks")


def build_id(path):
    """The GNU build-id of an ELF file, in hex, read with readelf; None
    when readelf is missing."""
    if not shutil.which("readelf"):
        return None
    out = run(["readelf", "-n", path]).stdout.decode()
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if m else None


# ---- pprof ----

def load_protobuf():
    """profile_pb2 compiled by protoc, or None with the reason."""
    if not shutil.which("protoc"):
        return None, "protoc is not installed (Debian: protobuf-compiler)"
    r = run(["protoc", "--python_out=" + D, "-I", os.path.dirname(PROTO), PROTO])
    if r.returncode != 0:
        return None, "protoc failed: %s" % r.stderr.decode().strip()
    sys.path.insert(0, D)
    try:
        import google.protobuf  # noqa: F401
    except ImportError:
        # Debian's python3-protobuf lives where the system python looks; a
        # python of its own (pyenv, a venv) does not look there.
        sys.path.append("/usr/lib/python3/dist-packages")
    try:
        import profile_pb2
    except ImportError as e:
        return None, "python3-protobuf is not installed (%s)" % e
    return profile_pb2, None


def decode(pb2, path):
    with open(path, "rb") as f:
        raw = f.read()
    check(raw[:2] == b"\x1f\x8b", "%s: gzip magic" % os.path.basename(path))
    p = pb2.Profile()
    p.ParseFromString(gzip.decompress(raw))
    return p


def check_profile(p, what, timed=False):
    """Ids, references and the string table as profile.proto requires;
    returns (strings, locations by id, functions by id). A timed recording
    has a fifth sample type, alloc_time, after the four of an untimed one."""
    S = p.string_table
    check_eq(S[0] if S else None, "", "%s: string_table[0]" % what)
    nvalues = 5 if timed else 4
    check_eq([(S[t.type], S[t.unit]) for t in p.sample_type],
             [("alloc_objects", "count"), ("alloc_space", "bytes"), ("inuse_objects", "count"),
              ("inuse_space", "bytes"), ("alloc_time", "nanoseconds")][:nvalues], "%s: sample types" % what)
    check_eq(S[p.default_sample_type], "inuse_space", "%s: default sample type" % what)
    check_eq((S[p.period_type.type], S[p.period_type.unit]), ("space", "bytes"), "%s: period type" % what)
    locs = {l.id: l for l in p.location}
    funcs = {f.id: f for f in p.function}
    maps = {m.id: m for m in p.mapping}
    check(len(locs) == len(p.location) and 0 not in locs, "%s: location ids unique and nonzero" % what)
    check(len(funcs) == len(p.function) and 0 not in funcs, "%s: function ids unique and nonzero" % what)
    check(len(maps) == len(p.mapping) and 0 not in maps, "%s: mapping ids unique and nonzero" % what)
    check(all(len(s.value) == nvalues for s in p.sample), "%s: %d values per sample" % (what, nvalues))
    check(all(s.location_id and all(i in locs for i in s.location_id) for s in p.sample),
          "%s: every sample's locations exist" % what)
    check(all(l.mapping_id == 0 or l.mapping_id in maps for l in p.location),
          "%s: every location's mapping exists" % what)
    check(all(ln.function_id in funcs for l in p.location for ln in l.line),
          "%s: every line's function exists" % what)
    check(all(0 <= f.name < len(S) and 0 <= f.filename < len(S) and 0 <= f.system_name < len(S)
              for f in p.function), "%s: function strings in the table" % what)
    check(all(m.memory_start <= l.address < m.memory_limit for l in p.location if l.mapping_id
              for m in [maps[l.mapping_id]]), "%s: addresses inside their mappings" % what)
    return S, locs, funcs


def stack_names(s, S, locs, funcs):
    """A sample's stack: per location (leaf first), its lines' functions
    (innermost first)."""
    return [[S[funcs[ln.function_id].name] for ln in locs[i].line] for i in s.location_id]


def sums(p, n=4):
    return [sum(s.value[i] for s in p.sample) for i in range(n)]


pb2, why = load_protobuf()
out_end = os.path.join(D, "end.pb.gz")
out_peak = os.path.join(D, "peak.pb.gz")
r = mp(["--pprof", out_end, REC])
check_eq(r.returncode, 0, "memprint --pprof: exit status (%s)" % r.stderr.decode().strip())
check_eq(r.stdout, b"", "memprint --pprof: no report on stdout")
r = mp(["--pprof", out_peak, "--pprof-at", "peak", REC])
check_eq(r.returncode, 0, "memprint --pprof --pprof-at peak: exit status")
check_eq(sorted(f for f in os.listdir(D) if f.endswith(".tmp")), [],
         "memprint --pprof: no temporary file left")

if pb2 is None:
    skip_part("decoding the pprof file with protoc's python3-protobuf", why)
else:
    p = decode(pb2, out_end)
    S, locs, funcs = check_profile(p, "pprof (end)")
    check_eq(sums(p), [ALLOCATIONS, ALLOCATED, LEAKED_BLOCKS, LEAKED],
             "pprof (end): sums of alloc_objects, alloc_space, inuse_objects, inuse_space")
    check_eq(sums(p), [rep["allocations"], rep["allocated_bytes"], rep["leaked_allocations"], rep["leaked_bytes"]],
             "pprof (end): sums equal memprint --json")
    check_eq(p.period, 1, "pprof: period of a complete recording")
    check_eq(p.duration_nanos, rep["runtime_ms"] * 1000000, "pprof: duration")
    check(p.time_nanos > 1600000000 * 10**9, "pprof: time_nanos is a time since the epoch (%d)" % p.time_nanos)
    check(any("export_heap" in S[c] for c in p.comment), "pprof: a comment names the program")
    stacks = {}
    for s in p.sample:
        names = stack_names(s, S, locs, funcs)
        stacks.setdefault(names[0][0], []).append((names, list(s.value)))
    big = stacks.get("big_site", [])
    check_eq([v for _, v in big], [[8, 800024, 0, 0]], "pprof: big_site's sample")
    check(big and big[0][0][0] == ["big_site"] and big[0][0][-1] == ["main"],
          "pprof: big_site's stack leaf first, main last: %r" % (big[0][0] if big else None))
    small = stacks.get("small_block", [])
    check_eq([v for _, v in small], [[30, 30270, 10, 10090]], "pprof: small_block's sample")
    check(small and small[0][0][0] == ["small_block", "small_site"],
          "pprof: the inlined small_block and small_site are two lines of one location, innermost first: %r" %
          (small[0][0] if small else None))
    leak = stacks.get("leak_site", [])
    check_eq([sum(v[i] for _, v in leak) for i in range(4)], [3, 21003, 3, 21003], "pprof: leak_site's samples")
    f_big = [f for f in p.function if S[f.name] == "big_site"]
    check(len(f_big) == 1 and S[f_big[0].filename].endswith(SOURCE) and S[f_big[0].system_name] == "big_site",
          "pprof: big_site's function has its file and system name")
    loc_big = [l for l in p.location if l.line and S[funcs[l.line[0].function_id].name] == "big_site"]
    check(loc_big and loc_big[0].line[0].line > 0, "pprof: big_site's line number")
    exe = [m for m in p.mapping if S[m.filename] == prog("export_heap")]
    check_eq(len(exe), 1, "pprof: one mapping of the executable")
    if exe:
        m = exe[0]
        check(m.has_functions and m.has_filenames and m.has_line_numbers and m.has_inline_frames,
              "pprof: the executable's mapping says functions, files, lines and inline frames")
        check(m.memory_start < m.memory_limit, "pprof: the executable's mapping has a range")
        bid = build_id(prog("export_heap"))
        if bid is None:
            skip_part("the executable's build id", "readelf is not installed")
        else:
            check_eq(S[m.build_id], bid, "pprof: the executable's build id")
        check_eq(p.mapping[0].id, m.id, "pprof: the executable is the first mapping")

    q = decode(pb2, out_peak)
    check_profile(q, "pprof (peak)")
    check_eq(sums(q), [ALLOCATIONS, ALLOCATED, PEAK_BLOCKS, PEAK], "pprof --pprof-at peak: sums")
    check_eq(sums(q)[3], rep["peak_heap_bytes"], "pprof --pprof-at peak: inuse_space equals peak_heap_bytes")
    S2, locs2, funcs2 = q.string_table, {l.id: l for l in q.location}, {f.id: f for f in q.function}
    top = max(q.sample, key=lambda s: s.value[3])
    check_eq((stack_names(top, S2, locs2, funcs2)[0][0], top.value[3]), ("big_site", BIG_SITE_AT_PEAK),
             "pprof --pprof-at peak: the biggest sample is big_site's")

    # A window: the export follows what memprint counts.
    win = os.path.join(D, "window.pb.gz")
    r = mp(["--pprof", win, "--from", FROM, REC])
    check_eq(r.returncode, 0, "memprint --pprof --from %s: exit status" % FROM)
    wj = json.loads(mp(["--json", "--from", FROM, REC]).stdout.decode())
    w = decode(pb2, win)
    check_eq(sums(w), [wj["allocations"], wj["allocated_bytes"], wj["leaked_allocations"], wj["leaked_bytes"]],
             "pprof --from %s: sums equal memprint --json --from %s" % (FROM, FROM))
    check_eq(sums(w)[:2], [5 + 3, 200045 + 21003], "pprof --from %s: medium_site and leak_site only" % FROM)

    # A sampled recording: the period is the rate, the values memprint's
    # estimates (the folded stacks' sums, which are the call tree's).
    srec = os.path.join(D, "sampled.zst")
    r = record([prog("export_heap")], srec, extra=["--sample-rate", "4096"])
    if r.returncode != 0:
        check(False, "memrec --sample-rate 4096 export_heap: %s" % r.stderr.decode())
    else:
        sout = os.path.join(D, "sampled.pb.gz")
        check_eq(mp(["--pprof", sout, srec]).returncode, 0, "memprint --pprof on a sampled recording")
        sp = decode(pb2, sout)
        check_profile(sp, "pprof (sampled)")
        check_eq(sp.period, 4096, "pprof (sampled): period is the sample rate")
        check(any("sampled" in sp.string_table[c] for c in sp.comment), "pprof (sampled): a comment says so")
        for i, cost in ((0, "calls"), (1, "allocated"), (3, "leaked")):
            fo = os.path.join(D, "s.folded")
            mp(["--folded", fo, "--cost", cost, srec])
            with open(fo) as f:
                total = sum(int(line.rsplit(" ", 1)[1]) for line in f if line.strip())
            check_eq(sums(sp)[i], total, "pprof (sampled): %s equals the folded stacks' estimate" % cost)

# pprof itself, where installed: its totals and top entry. -symbolize=none:
# the profile carries its symbols, pprof must not look for binaries.
viewer = None
if shutil.which("pprof"):
    viewer = ["pprof"]
elif shutil.which("go"):
    viewer = ["go", "tool", "pprof"]
if viewer:
    env = dict(os.environ, GOCACHE=os.path.join(D, "gocache"), PPROF_TMPDIR=D)
    for args, total, top, name in ((["-unit=B", "-sample_index=inuse_space", out_peak], "%dB" % PEAK,
                                    "%dB" % BIG_SITE_AT_PEAK, "big_site"),
                                   (["-sample_index=alloc_objects", out_end], "%d" % ALLOCATIONS, "30", "small_block"),
                                   (["-unit=B", "-sample_index=alloc_space", out_end], "%dB" % ALLOCATED, "800024B",
                                    "big_site")):
        cmd = viewer + ["-top", "-symbolize=none"] + args
        what = " ".join(cmd[:-1] + [os.path.basename(cmd[-1])])
        r = run(cmd, env=env)
        text = r.stdout.decode()
        check_eq(r.returncode, 0, "%s: exit status (%s)" % (what, r.stderr.decode().strip()[-200:]))
        check("Total samples = %s " % total in text, "%s: total %s" % (what, total))
        rows = [l.split() for l in text.splitlines() if re.match(r"^\s*\d", l)]
        check(rows and rows[0][0] == top and rows[0][5] == name,
              "%s: top entry %s %s (%r)" % (what, name, top, rows[0] if rows else None))
else:
    skip_part("pprof -top on the file", "neither pprof nor go is installed")

# ---- pprof of a timed recording (memrec --time) ----
# export_heap again, timed: the four values are the untimed ones, the fifth,
# alloc_time, sums to memprint's allocator_time_ns (whole run, at the peak,
# in a window) and per stack to the folded stacks' --cost time.
# timea_sites: big_site (2,000 40 MiB mmap/munmap pairs) comes first by
# time, small_site (200,000 16-byte pairs) first by objects.
def record_timed(name, *args):
    out = os.path.join(D, name + ".timed.zst")
    r = record([prog(name)] + list(args), out, extra=["--time"])
    check_eq(r.returncode, 0, "memrec --time %s: exit status (%s)" % (name, r.stderr.decode().strip()[:300]))
    return out


def pprof_of(rec, name, extra=()):
    out = os.path.join(D, name + ".pb.gz")
    r = mp(["--pprof", out] + list(extra) + [rec])
    check_eq(r.returncode, 0, "memprint --pprof %s: exit status (%s)" % (name, r.stderr.decode().strip()))
    return out


def leaf(s, S, locs, funcs):
    return stack_names(s, S, locs, funcs)[0][0]


trec = record_timed("export_heap", GAP_MS)
tj = report_json(trec)
check(tj["timed"] and tj["allocator_time_ns"] > 0, "export_heap --time: timed, allocator time %r" %
      tj.get("allocator_time_ns"))
tout = pprof_of(trec, "timed")
tpeak = pprof_of(trec, "timed-peak", ["--pprof-at", "peak"])
twin = pprof_of(trec, "timed-window", ["--from", FROM])
twj = json.loads(mp(["--json", "--from", FROM, trec]).stdout.decode())
sites_rec = record_timed("timea_sites")
sites_j = report_json(sites_rec)
sites_out = pprof_of(sites_rec, "timea_sites")
if pb2 is None:
    skip_part("decoding the pprof files of timed recordings", why)
else:
    tp = decode(pb2, tout)
    S, locs, funcs = check_profile(tp, "pprof (timed)", timed=True)
    check_eq(sums(tp, 5), [ALLOCATIONS, ALLOCATED, LEAKED_BLOCKS, LEAKED, tj["allocator_time_ns"]],
             "pprof (timed): the four values as untimed, alloc_time sums to allocator_time_ns")
    check_eq(tp.default_sample_type, tp.sample_type[3].type, "pprof (timed): the default is still inuse_space")
    fo = os.path.join(D, "timed.folded")
    check_eq(mp(["--folded", fo, "--cost", "time", trec]).returncode, 0, "memprint --folded --cost time")
    folded = {}
    with open(fo) as f:
        for line in f:
            path, v = line.rsplit(" ", 1)
            folded[path] = folded.get(path, 0) + int(v)
    per_stack = {}
    for s in tp.sample:
        path = ";".join(n for loc in reversed(stack_names(s, S, locs, funcs)) for n in reversed(loc))
        per_stack[path] = per_stack.get(path, 0) + s.value[4]
    check_eq({k: v for k, v in per_stack.items() if v}, {k: v for k, v in folded.items() if v},
             "pprof (timed): alloc_time per stack equals the folded stacks' --cost time")
    check_eq(sums(decode(pb2, tpeak), 5), [ALLOCATIONS, ALLOCATED, PEAK_BLOCKS, PEAK, tj["allocator_time_ns"]],
             "pprof (timed) --pprof-at peak: sums")
    w = decode(pb2, twin)
    check_eq(sums(w, 5), [twj["allocations"], twj["allocated_bytes"], twj["leaked_allocations"],
                          twj["leaked_bytes"], twj["allocator_time_ns"]],
             "pprof (timed) --from %s: sums equal memprint --json --from %s" % (FROM, FROM))
    check_eq(sums(w, 2), [5 + 3, 200045 + 21003], "pprof (timed) --from %s: medium_site and leak_site only" % FROM)

    sp = decode(pb2, sites_out)
    S, locs, funcs = check_profile(sp, "pprof (timea_sites)", timed=True)
    check_eq(sums(sp, 5), [202000, 200000 * 16 + 2000 * 41943040, 0, 0, sites_j["allocator_time_ns"]],
             "pprof (timea_sites): sums (alloc_time = allocator_time_ns)")
    by_time = max(sp.sample, key=lambda s: s.value[4])
    by_calls = max(sp.sample, key=lambda s: s.value[0])
    check_eq((leaf(by_time, S, locs, funcs), by_time.value[0]), ("big_site", 2000),
             "pprof (timea_sites): the largest alloc_time is big_site's")
    check_eq((leaf(by_calls, S, locs, funcs), by_calls.value[0]), ("small_site", 200000),
             "pprof (timea_sites): the largest alloc_objects is small_site's")
if viewer:
    cmd = viewer + ["-top", "-symbolize=none", "-sample_index=alloc_time", "-unit=ns", sites_out]
    r = run(cmd, env=env)
    text = r.stdout.decode()
    check_eq(r.returncode, 0, "pprof -sample_index=alloc_time: exit status (%s)" % r.stderr.decode().strip()[-200:])
    check("Total samples = %dns " % sites_j["allocator_time_ns"] in text,
          "pprof -sample_index=alloc_time: total %dns (%r)" % (sites_j["allocator_time_ns"], text[:400]))
    rows = [l.split() for l in text.splitlines() if re.match(r"^\s*\d", l)]
    check(rows and rows[0][5] == "big_site", "pprof -sample_index=alloc_time: big_site first (%r)" %
          (rows[0] if rows else None))

# ---- massif ----

out_ms = os.path.join(D, "massif.out")
r = mp(["--massif", out_ms, REC])
check_eq(r.returncode, 0, "memprint --massif: exit status (%s)" % r.stderr.decode().strip())
check_eq(r.stdout, b"", "memprint --massif: no report on stdout")
with open(out_ms) as f:
    lines = f.read().splitlines()

# The grammar, line by line: header, then snapshot blocks.
check(lines[0].startswith("desc:") and lines[1].startswith("cmd: ") and lines[2] == "time_unit: ms",
      "massif: desc, cmd and time_unit lines")
check(prog("export_heap") in lines[1], "massif: cmd names the program")
snaps = []
i = 3
ok = True
node_re = re.compile(r"^( *)n(\d+): (\d+) (.*)$")
while i < len(lines):
    head = lines[i:i + 9]
    keys = ["#-----------", "snapshot=", "#-----------", "time=", "mem_heap_B=", "mem_heap_extra_B=",
            "mem_stacks_B=", "heap_tree="]
    if len(head) < 8 or not all(h.startswith(k) for h, k in zip(head, keys)):
        ok = False
        break
    snap = {"n": int(head[1][9:]), "time": int(head[3][5:]), "heap": int(head[4][11:]),
            "extra": int(head[5][17:]), "stacks": int(head[6][13:]), "tree": head[7][10:], "nodes": []}
    i += 8
    while i < len(lines) and not lines[i].startswith("#"):
        m = node_re.match(lines[i])
        if not m:
            ok = False
            break
        snap["nodes"].append((len(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4)))
        i += 1
    snaps.append(snap)
    if not ok:
        break
check(ok, "massif: every line follows the grammar (stopped at line %d: %r)" %
      (i + 1, lines[i] if i < len(lines) else None))
check_eq([s["n"] for s in snaps], list(range(len(snaps))), "massif: snapshots numbered from 0")
check(all(a["time"] <= b["time"] for a, b in zip(snaps, snaps[1:])), "massif: times do not decrease")
check_eq(snaps[-1]["time"], rep["runtime_ms"], "massif: the last snapshot at the end of the run")
check(all(s["extra"] == 0 and s["stacks"] == 0 for s in snaps), "massif: no extra-heap or stack figures")
peaks = [s for s in snaps if s["tree"] == "peak"]
check_eq(len(peaks), 1, "massif: one peak snapshot")
detailed = [s for s in snaps if s["tree"] == "detailed"]
check(len(detailed) >= 3, "massif: several detailed snapshots (%d)" % len(detailed))
check(all(s["tree"] in ("empty", "detailed", "peak") for s in snaps), "massif: heap_tree values")
check(all((s["tree"] == "empty") == (not s["nodes"]) for s in snaps), "massif: trees exactly where detailed")
check_eq(max(s["heap"] for s in snaps), PEAK, "massif: the largest snapshot is the peak")


def tree_consistent(s):
    """Node counts match the children that follow; no child exceeds its
    parent; the root is the snapshot's heap."""
    nodes = s["nodes"]
    if not nodes or nodes[0][0] != 0 or nodes[0][2] != s["heap"]:
        return False
    for k, (depth, nkids, b, _) in enumerate(nodes):
        kids = []
        for j in range(k + 1, len(nodes)):
            if nodes[j][0] <= depth:
                break
            if nodes[j][0] == depth + 1:
                kids.append(nodes[j][2])
        if len(kids) != nkids or sum(kids) > b:
            return False
    return True


check(all(tree_consistent(s) for s in snaps if s["nodes"]), "massif: every tree's counts and bytes add up")
if peaks:
    pk = peaks[0]
    check_eq(pk["heap"], rep["peak_heap_bytes"], "massif: the peak snapshot's heap is peak_heap_bytes")
    check_eq(pk["time"], rep["peak_heap_ms"], "massif: the peak snapshot's time is peak_heap_ms")
    top = pk["nodes"][1] if len(pk["nodes"]) > 1 else None
    check(top and top[2] == BIG_SITE_AT_PEAK and re.match(r"0x[0-9A-F]+: big_site \(.*export_heap\.c:\d+\)$",
                                                         top[3]),
          "massif: the peak tree's top entry is big_site with %d bytes: %r" % (BIG_SITE_AT_PEAK, top))
    below = [n for n in pk["nodes"] if "below massif's threshold" in n[3]]
    check_eq([(n[0], n[2], n[3]) for n in below],
             [(1, TINY_AT_PEAK, "in 1 place, below massif's threshold (1.00%)")],
             "massif: tiny_site, under 1% of the peak, as one 'in 1 place' line")
# The series is memprint --timeline's (same 50 points); each detailed
# snapshot's tree, accounted by a pass stopped at its time, holds exactly
# the series' heap there.
tl = json.loads(mp(["--timeline", "--json", "--points", "50", REC]).stdout.decode())["timeline"]["points"]
series = [s for s in snaps if s["tree"] != "peak"]
check_eq([(s["time"], s["heap"]) for s in series], [(p["ms"], p["heap"]) for p in tl],
         "massif: the snapshots but the peak are memprint --timeline's 50 points")
end = snaps[-1]
check_eq((end["tree"], end["heap"]), ("detailed", LEAKED), "massif: the last snapshot is detailed and holds the leak")
check_eq(sorted((n[2], n[3].split(" ")[1]) for n in end["nodes"] if n[0] == 1),
         [(10090, "small_block"), (21003, "leak_site")], "massif: the end's sites")

# Each node's file:line is its own stacks' line, not the first line merged
# into its function (examples/example.c: handle_request calls format_reply
# at line 24 and malloc at 28 and 30; main calls handle_request at 42).
ex = os.path.join(D, "example.zst")
check_eq(record([os.path.join(BUILD, "example")], ex).returncode, 0, "example: memrec exit status")
ex_ms = os.path.join(D, "example.massif")
check_eq(mp(["--massif", ex_ms, ex]).returncode, 0, "memprint --massif example: exit status")
with open(ex_ms) as f:
    ex_lines = f.read().split("\n")
start = max(i for i, line in enumerate(ex_lines) if line == "heap_tree=peak")
tree = []
for line in ex_lines[start + 1:]:
    m = node_re.match(line)
    if not m:
        break
    fl = re.search(r"^0x[0-9A-F]+: (\w+) \(.*example\.c:(\d+)\)$", m.group(4))
    tree.append((len(m.group(1)), fl.group(1) if fl else m.group(4), int(fl.group(2)) if fl else None))
check_eq(tree[1:3], [(1, "handle_request", 28), (2, "main", 42)],
         "massif, example's peak: the site handle_request at its malloc, line 28; its caller main at line 42")
check(all(ln in (24, 28, 30) for _, fn, ln in tree if fn == "handle_request"),
      "massif, example's peak: handle_request only at lines it passes through: %r" % tree)

if not shutil.which("ms_print"):
    skip_part("ms_print on the massif file", "ms_print (valgrind) is not installed")
else:
    r = run(["ms_print", out_ms])
    text = r.stdout.decode()
    check_eq(r.returncode, 0, "ms_print: exit status (%s)" % r.stderr.decode().strip()[-300:])
    m = re.search(r"Detailed snapshots: \[([^\]]*)\]", text)
    peak_n = None
    if m:
        for item in m.group(1).split(","):
            if "(peak)" in item:
                peak_n = int(item.split()[0])
    check(peak_n is not None, "ms_print: lists a peak snapshot")
    row = re.search(r"^\s*%s\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s*$" % peak_n, text, re.M)
    check(row is not None and int(row.group(2).replace(",", "")) == rep["peak_heap_bytes"],
          "ms_print: the peak snapshot's total is peak_heap_bytes %d (%s)" %
          (rep["peak_heap_bytes"], row.group(0).strip() if row else None))
    after = text[row.end():] if row else ""
    first = re.search(r"^->([\d.]+)% \(([\d,]+)B\) (.*)$", after, re.M)
    check(first is not None and first.group(3).split(" ")[1] == "big_site" and
          int(first.group(2).replace(",", "")) == BIG_SITE_AT_PEAK,
          "ms_print: the peak tree's first entry is big_site (%s)" % (first.group(0) if first else None))

# ---- a stack deeper than massif's --depth ----
# tests/progs/deep allocates at the bottom of a 300-frame recursion: the
# tree stops 30 frames below the allocation functions, as massif's does,
# and ms_print reads it without warning about deep recursion.
DEEP = os.path.join(D, "deep.zst")
r = record([prog("deep")], DEEP)
check_eq(r.returncode, 0, "deep: recorded (%s)" % r.stderr.decode().strip()[-300:])
out_deep = os.path.join(D, "deep.massif")
r = mp(["--massif", out_deep, DEEP])
check_eq(r.returncode, 0, "deep: --massif exits 0")
depths = [len(line) - len(line.lstrip(" ")) for line in open(out_deep) if re.match(r"^ *n\d+: ", line)]
check_eq(max(depths), 30, "deep: the deepest tree line is 30 frames below the allocation functions")
if shutil.which("ms_print"):
    r = run(["ms_print", out_deep])
    check_eq(r.returncode, 0, "deep: ms_print exit status")
    check("Deep recursion" not in r.stderr.decode(), "deep: ms_print does not warn of deep recursion")

# ---- errors ----

for args, code, said in (
    (["--pprof", "/nonexistent-dir/x.pb.gz", REC], 1, r"cannot write '/nonexistent-dir/x\.pb\.gz\.tmp'"),
    (["--massif", "/nonexistent-dir/m.out", REC], 1, r"cannot write '/nonexistent-dir/m\.out\.tmp'"),
    (["--pprof", os.path.join(D, "x.pb.gz"), "--pprof-at", "middle", REC], 2, r"invalid --pprof-at 'middle'"),
    (["--pprof-at", "peak", REC], 2, r"--pprof-at applies to --pprof only"),
    (["--massif", os.path.join(D, "m2.out"), "--from", "1", REC], 2, r"--massif applies to the whole run only"),
    (["--pprof", os.path.join(D, "x.pb.gz"), "--json", REC], 2, r"do not combine"),
    (["--pprof", os.path.join(D, "x.pb.gz"), os.path.join(D, "missing.zst")], 1, r"cannot read"),
):
    r = mp(args)
    err = r.stderr.decode().splitlines()
    what = "memprint %s" % " ".join(os.path.basename(a) if a.startswith(D) else a for a in args)
    check_eq(r.returncode, code, "%s: exit status" % what)
    check(len(err) == 1 and err[0].startswith("memprint: ") and re.search(said, err[0]),
          "%s: one line saying /%s/: %r" % (what, said, err))
check(not os.path.exists(os.path.join(D, "x.pb.gz")) and not os.path.exists(os.path.join(D, "m2.out")),
      "no output file after an error")
check_eq(sorted(f for f in os.listdir(D) if f.endswith(".tmp")), [], "no temporary file left after errors")

shutil.rmtree(D, ignore_errors=True)
done()
