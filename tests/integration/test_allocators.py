# SPDX-License-Identifier: MIT
"""Other allocators (docs/capture.md, "Other allocators"): the test
programs recorded with glibc's malloc, with LD_PRELOAD=libtcmalloc.so.4 and
with LD_PRELOAD=libjemalloc.so.2 give the same figures, in the summary and
per call site, and the glibc run gives the figures known by construction
(tests/progs/EXPECTED.md).

What the preloaded allocators' own start-up allocates (libstdc++'s 72,704
byte emergency pool when only the allocator brings libstdc++ in;
tcmalloc's TCMallocGuard and MallocExtension blocks) is set apart and
counted in the STATS record, not in the figures.

One documented exception, the loader's and not the allocators': glibc
sizes the thread vector (DTV) it callocs in pthread_create by the number
of loaded modules with thread-local storage, 16 * (modules + 16) bytes,
and tcmalloc and jemalloc bring two more (themselves and libstdc++). Those
call sites (found by pthread_create in their stack) must have the same
calls, and exactly that size in each run.

tests/progs/aligned is not run under jemalloc: it crashes there without
memrec too (jemalloc's pvalloc/memalign). A part whose allocator library
is missing is skipped with a message (scripts/deps.sh installs both), and
so are both with a memrec built with AddressSanitizer: the user's
LD_PRELOAD reaches memrec itself, and ASan refuses to run after another
preloaded library (the recorder and the programs are never sanitized, so
the plain build's run covers them)."""
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

LIBDIR = "/usr/lib/x86_64-linux-gnu"
ALLOCATORS = (("tcmalloc", "libtcmalloc.so.4"), ("jemalloc", "libjemalloc.so.2"))
PRELOAD = os.path.join(BUILD, "libmemrec_preload.so")
POOL = 72704  # libstdc++'s emergency exception pool

# allocations, temporary, peak, leaked bytes, leaked blocks, allocated bytes:
# tests/progs/EXPECTED.md (cxx: the program's own libstdc++ pool included,
# as in test_progs.py; threads: without glibc's four DTV callocs).
EXPECTED = {
    "chain":       (11, 5, 200015, 70001, 1, 390057),
    "aligned":     (10, 5, 150005, 100003, 3, 200070),
    "cxx":         (17, 8, 342901, 60001, 1, 482946),
    "threads":     (20, 8, 372030, 164010, 4, 452050),
    "temporaries": (17, 12, 170002, 0, 0, 920062),
    "atexit_free": (3, 0, 70003, 40001, 1, 70003),
    "inlined":     (2, 1, 30002, 10001, 1, 30002),
    "nothing":     (0, 0, 0, 0, 0, 0),
}
FIELDS = ("allocations", "temporary", "peak_heap_bytes", "leaked_bytes", "leaked_allocations", "allocated_bytes")
SITE_FIELDS = ("calls", "temporary", "allocated_bytes", "leaked_bytes", "leaked_allocations", "peak_bytes")
C_PROGRAMS = ("chain", "aligned", "threads", "temporaries", "atexit_free", "inlined", "nothing")


def sanitized():
    """Whether memrec was built with -DMEMREC_SANITIZE=address,..."""
    try:
        with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
            return any(line.startswith("MEMREC_SANITIZE:") and "address" in line for line in f)
    except OSError:
        return False


def tls_modules(preload, program):
    """Modules with a PT_TLS header that the loader maps for `program`
    with LD_PRELOAD=`preload` (asked with LD_TRACE_LOADED_OBJECTS)."""
    env = dict(os.environ, LD_TRACE_LOADED_OBJECTS="1", LD_PRELOAD=preload)
    listing = subprocess.run([program], env=env, stdout=subprocess.PIPE, check=True).stdout.decode()
    n = 0
    for line in listing.splitlines():
        parts = line.split()
        path = parts[2] if len(parts) > 2 and parts[1] == "=>" else (parts[0] if parts else "")
        if not path.startswith("/"):
            continue
        with open(path, "rb") as f:
            head = f.read(65536)
        phoff, = struct.unpack_from("<Q", head, 32)
        phentsize, phnum = struct.unpack_from("<HH", head, 54)
        if any(struct.unpack_from("<I", head, phoff + i * phentsize)[0] == 7 for i in range(phnum)):  # PT_TLS
            n += 1
    return n


def is_dtv(site):
    return any("pthread_create" in (f["function"] or "") for f in site["frames"])


def site_key(site):
    return tuple((f["function"], f["file"], f["line"], os.path.basename(f["module"] or ""), f["inlined"])
                 for f in site["frames"])


def sites(j):
    """Per call site figures, glibc's DTV callocs apart."""
    own, dtv = {}, []
    for s in j["sections"]["most_calls"]:
        if is_dtv(s):
            dtv.append(s)
        else:
            own[site_key(s)] = tuple(s[k] for k in SITE_FIELDS)
    return own, dtv


def summary(j, dtv):
    calls = sum(s["calls"] for s in dtv)
    size = sum(s["allocated_bytes"] for s in dtv)
    return (j["allocations"] - calls, j["temporary"], j["peak_heap_bytes"] - size, j["leaked_bytes"] - size,
            j["leaked_allocations"] - calls, j["allocated_bytes"] - size)


d = tmpdir()


def record_with(name, alloc, lib):
    out = os.path.join(d, "%s.%s.zst" % (name, alloc))
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if lib:
        env["LD_PRELOAD"] = lib
    r = record([prog(name)], out, env=env)
    check_eq(r.returncode, 0, "%s under %s: memrec exit status" % (name, alloc))
    j = report_json(out, top=100000)
    check(j["complete"], "%s under %s: recording complete" % (name, alloc))
    check_eq(j["unmatched_frees"], 0, "%s under %s: no unmatched frees" % (name, alloc))
    return j


def check_dtv(name, alloc, dtv, lib):
    """glibc's thread vectors: one per pthread_create, 16 * (TLS modules + 16) bytes."""
    if name != "threads":
        check_eq(len(dtv), 0, "%s under %s: no pthread_create" % (name, alloc))
        return
    preload = PRELOAD + (":" + lib if lib else "")
    size = 16 * (tls_modules(preload, prog(name)) + 16)
    calls = sum(s["calls"] for s in dtv)
    check_eq(calls, 4, "%s under %s: one DTV calloc per pthread_create" % (name, alloc))
    check_eq(sum(s["allocated_bytes"] for s in dtv), 4 * size, "%s under %s: DTV callocs of %d bytes" % (name, alloc, size))


glibc = {}
for name, exp in sorted(EXPECTED.items()):
    j = record_with(name, "glibc", None)
    own, dtv = sites(j)
    check_eq(summary(j, dtv), exp, "%s under glibc: the figures known by construction" % name)
    check_eq((j["startup_set_apart_calls"], j["startup_set_apart_bytes"]), (0, 0),
             "%s under glibc: nothing set apart" % name)
    check_dtv(name, "glibc", dtv, None)
    glibc[name] = own

missing = []
set_apart = {}
for alloc, soname in ALLOCATORS:
    lib = os.path.join(LIBDIR, soname)
    if sanitized():
        skip_part(alloc, "memrec is built with AddressSanitizer, which must come first in LD_PRELOAD; "
                  "the plain build runs this part")
        missing.append(alloc)
        continue
    if not os.path.exists(lib):
        skip_part(alloc, "%s is not installed (%s missing; scripts/deps.sh installs it)" % (alloc, lib))
        missing.append(alloc)
        continue
    for name, exp in sorted(EXPECTED.items()):
        if alloc == "jemalloc" and name == "aligned":
            continue  # crashes under jemalloc without memrec too
        j = record_with(name, alloc, lib)
        own, dtv = sites(j)
        what = "%s under %s" % (name, alloc)
        check_eq(summary(j, dtv), exp, "%s: the same figures as glibc's" % what)
        check_eq(len(own), len(glibc[name]), "%s: as many call sites as glibc's" % what)
        for key, figures in sorted(glibc[name].items(), key=lambda kv: repr(kv[0])):
            where = "%s:%s" % (key[0][1], key[0][2]) if key else "(no stack)"
            check_eq(own.get(key), figures, "%s: site %s %s" % (what, key[0][0] if key else "", where))
        check_dtv(name, alloc, dtv, lib)
        set_apart[(alloc, name)] = (j["startup_set_apart_calls"], j["startup_set_apart_bytes"])

# What was set apart. The C programs load libstdc++ only because the
# allocator needs it: its pool is set apart there, and it is the only
# difference with cxx, which links libstdc++ itself and counts its pool.
if "jemalloc" not in missing:
    for name in EXPECTED:
        if name != "aligned":
            check_eq(set_apart[("jemalloc", name)], (0, 0) if name == "cxx" else (1, POOL),
                     "%s under jemalloc: set apart (libstdc++'s pool only in C programs)" % name)
# memprint's summary says it in one line, and only when something was set apart.
code, text, err = report_text(os.path.join(d, "chain.glibc.zst"))
check(code == 0 and "allocator start-up" not in text, "chain under glibc: no allocator start-up line")
if "jemalloc" not in missing:
    code, text, err = report_text(os.path.join(d, "chain.jemalloc.zst"))
    check(code == 0 and ("\nallocator start-up: 1 allocations (%d bytes) by preloaded libraries' initialization, "
                         "not counted\n" % POOL) in text, "chain under jemalloc: the allocator start-up line")
if "tcmalloc" not in missing:
    calls, size = set_apart[("tcmalloc", "cxx")]
    check(calls > 0 and size > 0, "cxx under tcmalloc: tcmalloc's own start-up set apart (%d, %d)" % (calls, size))
    for name in C_PROGRAMS:
        check_eq(set_apart[("tcmalloc", name)], (calls + 1, size + POOL),
                 "%s under tcmalloc: set apart: tcmalloc's start-up and libstdc++'s pool" % name)

# Threads: stress (no seed; its interleaving varies from run to run) gives
# the same allocations per site in worker(), none leaked, every free matched.
for alloc, soname in (("glibc", None),) + ALLOCATORS:
    if alloc in missing:
        continue
    j = record_with("stress", alloc, os.path.join(LIBDIR, soname) if soname else None)
    mine = [s for s in j["sections"]["most_calls"] if any((f["function"] or "") == "worker" for f in s["frames"])]
    check_eq((sum(s["calls"] for s in mine), sum(s["allocated_bytes"] for s in mine),
              sum(s["leaked_allocations"] for s in mine)),
             # 24 threads x 20,000 mallocs of 1000 + (i + salt) % 64 bytes,
             # salt = thread number, and a realloc 7 bytes larger of every
             # 8th (i % 8 == 1): 540,000 calls, 557,425,872 bytes
             (540000, 557425872, 0), "stress under %s: worker()'s calls, bytes and leaks" % alloc)

# Under AddressSanitizer the other allocators cannot be preloaded by design:
# the glibc runs are this build's test, the groups above say what the plain
# build checks. Elsewhere, neither being installed is a skip (deps.sh
# installs both, so scripts/test.sh fails on it).
if len(missing) == len(ALLOCATORS) and not sanitized():
    skip("neither tcmalloc nor jemalloc could be run (see above): only the glibc runs were checked")
done()
