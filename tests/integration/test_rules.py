# SPDX-License-Identifier: MIT
"""The architecture's rules (docs/design.md, "The pieces and their rules"),
checked on the built binaries and the sources instead of only written down:

- the preload library imports no allocator, no stdio and no zstd, and
  exports only the functions it interposes (names that libc, libdl or
  libstdc++ define) and its own memrec_ entry points;
- memrec links neither libdw/libelf (the symbolizer) nor libstdc++ nor
  libunwind;
- format/, util/, analyzer/ and tui/ include nothing from recorder/, and
  format/ and util/ include nothing from the analyzer;
- format/memfmt_internal.h (the file's byte layout) is internal to
  format/: only format/*.c include it, and the few tests of those internals
  named in INTERNAL_USERS. The recorder, memrec and the merge speak the
  pipe protocol of format/memwire.h and the varints of format/varint.h;
- inside each library of LIBRARIES (the preload library, the merge,
  memrec, format/, memtui, the analyzer), calls go down the layers of its table only (for the
  preload library hooks -> lifecycle -> modules -> buffers -> base): no
  object file of a lower layer refers to a symbol that a file of a higher
  layer defines, no files call each other in a cycle except the sets of
  the library's MUTUAL, every file has a layer, and docs/design.md's layer
  table of the library is the test's."""
import fnmatch
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import BUILD, SRC, check, check_eq, done, skip  # noqa: E402

PRELOAD = os.path.join(BUILD, "libmemrec_preload.so")
MEMREC = os.path.join(BUILD, "memrec")

# What the library must never call: the hooked allocator (its own calls go
# through its own definitions), stdio (it allocates and takes locks), zstd.
FORBIDDEN_IMPORTS = re.compile(
    r"^(malloc|calloc|realloc|reallocarray|free|posix_memalign|aligned_alloc|memalign|valloc|pvalloc"
    r"|strdup|strndup|asprintf|vasprintf|getline|getdelim|open_memstream"
    r"|printf|fprintf|sprintf|snprintf|vprintf|vfprintf|vsprintf|vsnprintf|dprintf"
    r"|fopen|fdopen|fclose|fread|fwrite|fputs|fputc|puts|putchar|fgets|fflush|perror|setvbuf|setenv|putenv"
    r"|_Znwm.*|_Znam.*|_ZdlPv.*|_ZdaPv.*|ZSTD_.*)$")


# The exceptions, each with its reason: with --follow-fork the recorder runs
# its own popen()/pclose() (glibc's start the shell through an internal
# posix_spawn that no hook sees); popen's contract is a FILE, made with
# fdopen() and closed with fclose() exactly where glibc's popen would make
# and close its own, so the program's allocations stay those of a native run.
ALLOWED_IMPORTS = {"fdopen", "fclose"}


def dynsyms(path, defined):
    """Names of the dynamic symbols of `path`, defined or undefined ones."""
    flag = "--defined-only" if defined else "--undefined-only"
    r = subprocess.run(["nm", "-D", flag, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError("nm failed on %s: %s" % (path, r.stderr))
    names = set()
    for line in r.stdout.splitlines():
        parts = line.split()
        if not parts:
            continue
        names.add(parts[-1].split("@")[0])
    return names


def system_library(soname):
    r = subprocess.run(["gcc", "-print-file-name=" + soname], stdout=subprocess.PIPE, text=True)
    path = r.stdout.strip()
    return path if os.path.isabs(path) and os.path.exists(path) else None


def needed(path):
    r = subprocess.run(["readelf", "-d", path], stdout=subprocess.PIPE, text=True)
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", r.stdout)


def check_preload():
    imports = dynsyms(PRELOAD, defined=False)
    bad = sorted(n for n in imports if FORBIDDEN_IMPORTS.match(n) and n not in ALLOWED_IMPORTS)
    check_eq(bad, [], "the preload library imports no allocator, stdio or zstd function")

    interposable = set()
    for soname in ("libc.so.6", "libstdc++.so.6"):
        lib = system_library(soname)
        if lib is None:
            skip("cannot find %s to tell interposed names from others" % soname)
        interposable |= dynsyms(lib, defined=True)
    exports = dynsyms(PRELOAD, defined=True)
    # Linker-made markers, not functions.
    exports -= {"_init", "_fini", "__bss_start", "_edata", "_end"}
    stray = sorted(n for n in exports if n not in interposable and not n.startswith("memrec_"))
    check_eq(stray, [], "the preload library exports only interposed functions and memrec_ entry points")
    check("malloc" in exports and "_Znwm" in exports and "memrec_pool_api_v1" in exports,
          "the preload library exports malloc, operator new and the pool API")


def check_memrec_links():
    libs = needed(MEMREC)
    for banned in ("libdw", "libelf", "libstdc++", "libunwind"):
        check(not any(lib.startswith(banned) for lib in libs), "memrec does not link %s (links %s)" % (banned, libs))


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def project_headers(folder):
    top = os.path.join(SRC, folder)
    found = set()
    for root, _, files in os.walk(top):
        found |= {f for f in files if f.endswith(".h")}
    return found


def sources(folder):
    top = os.path.join(SRC, folder)
    for root, _, files in os.walk(top):
        for f in sorted(files):
            if f.endswith((".c", ".h", ".cpp")):
                yield os.path.join(root, f)


def check_includes():
    owners = {}
    for folder in ("format", "util", "analyzer", "tui", "recorder", "include"):
        for h in project_headers(folder):
            owners.setdefault(h, set()).add(folder)
    # A folder may include its own headers and those of the folders below it.
    allowed = {
        "format": {"format"},
        "util": {"util"},
        "analyzer": {"analyzer", "format", "util"},
        "tui": {"tui", "analyzer", "format", "util"},
    }
    for folder, ok in allowed.items():
        if not os.path.isdir(os.path.join(SRC, folder)):
            continue
        wrong = []
        for path in sources(folder):
            with open(path, encoding="utf-8", errors="replace") as f:
                for name in INCLUDE.findall(f.read()):
                    base = os.path.basename(name)
                    homes = owners.get(base, set())
                    if homes and not (homes & ok):
                        wrong.append("%s includes %s (from %s)" % (os.path.relpath(path, SRC), name,
                                                                    ",".join(sorted(homes))))
        check_eq(wrong, [], "%s/ includes only from %s" % (folder, ", ".join(sorted(ok))))


# Who may include format/memfmt_internal.h besides format/*.c, and why.
INTERNAL_USERS = {
    # Unit tests of the internals themselves: the header layout (magic,
    # length), the varint bounds and the EVENTS column codec.
    "tests/unit/test_format.c",
    # Fuzzes the EVENTS column codec (encode, block, decode) directly.
    "tests/fuzz/fuzz_record.c",
    # Tells a raw decompressed stream (a corpus seed) by the file's magic and
    # compresses it, so the fuzzer can mutate the records themselves.
    "tests/fuzz/fuzz_common.c",
}


def check_internal_header():
    users = []
    for folder in ("format", "util", "analyzer", "tui", "recorder", "include", "tests", "bench", "examples"):
        for path in sources(folder):
            with open(path, encoding="utf-8", errors="replace") as f:
                if "memfmt_internal.h" in INCLUDE.findall(f.read()):
                    users.append(os.path.relpath(path, SRC))
    wrong = sorted(u for u in users
                   if not (u.startswith("format/") and u.endswith(".c")) and u not in INTERNAL_USERS)
    check_eq(wrong, [], "memfmt_internal.h is included only by format/*.c and the tests of its internals")
    check(any(u.startswith("format/") for u in users) and "tests/unit/test_format.c" in users,
          "the include scan sees format/ and tests/ (%d users)" % len(users))


# Layer tables, top to bottom: a file may refer (call a function, read a
# variable) to a name defined by a file of its own layer or of a layer
# below it, never above, and no files may refer to each other in a cycle
# but the pairs its MUTUAL names. docs/design.md holds the same tables
# (each under a header '| layer | files of <folder>/ |'); check_layers()
# compares the two, and both with the object files of the build.

# recorder/preload/ (libmemrec_preload.so); docs/design.md, "Inside the
# target", "Layers".
PRELOAD_LAYERS = [
    ("hooks", "preload.c syshooks.c maphooks.c pools.c dlopen_hook.c attach.c"),
    ("lifecycle", "init.c service.c crash.c"),
    ("modules", "modules.c preloaded.c heapinfo.c"),
    ("buffers", "buffer.c buflock.c seq.c sigevents.c buffer_map.c crashflush.c"),
    ("base", "pipe.c conn.c guard.c options.c log.c mem.c got.c envhide.c resolve.c sysnext.c "
             "tracetree.c unwind.c cfi.c ehframe.c sample.c sigdefer.c shmbuf.c"),
]

# Files of one layer that call each other, each with its reason.
PRELOAD_MUTUAL = {
    # The allocation path sends what signal handlers queued, inline, before
    # its own event (lock_mine()); the queued calls are written with the
    # buffer core's helpers. A function pointer would put an indirect call
    # on the allocation path.
    frozenset({"buffer.c", "sigevents.c"}),
}

# recorder/merge/ (memmerge); docs/design.md, "memrec", "Layers".
MERGE_LAYERS = [
    ("api", "merge.c decode.c reach.c"),
    ("order", "order.c"),
    ("state", "queue.c pairs.c mappings.c thread_clock.c layout.c"),
    ("tables", "startup.c poolmap.c mapranges.c u64map.c reachgraph.c"),
]

# recorder/memrec/ (the memrec program); docs/design.md, "memrec", "Layers".
MEMREC_LAYERS = [
    ("main", "memrec.c"),
    ("attach", "attachpid.c"),
    ("session", "loop.c cmdline.c"),
    ("pieces", "launch.c progcheck.c recording.c summary.c hub.c inject.c timing.c stopworld.c roots.c"),
]

# format/ (libmemfmt: memfmt and its encode-only part memfmt_record, which
# the preload library links: record.c and varint.c, in the two bottom
# layers); docs/design.md, "The pieces and their rules", "Layers of format/".
FORMAT_LAYERS = [
    ("files", "reader.c writer.c"),
    ("blocks", "events.c"),
    ("records", "record.c wire.c timecode.c"),
    ("base", "varint.c status.c"),
]

# One line per library: (its folder, the CMake targets whose objects are
# its files, its layer table[, its MUTUAL]).
TUI_LAYERS = [
    ("main", "memtui.c"),
    ("screen", "screen.c"),
    ("help", "help.c"),
    ("table", "views.c"),
    ("views", "view_*.c"),
    ("widgets", "listbox.c detail.c search.c livelist.c site.c columns.c editor.c chartcursor.c"),
    ("data", "data.c"),
    ("base", "crt.c text.c action.c filter.c sites.c"),
]

# analyzer/ (memaccounting, memanalysis, memexport: the library of
# memprint and memtui, and accounting.c, which memrec links too);
# docs/design.md, "memprint", "Layers of analyzer/".
ANALYZER_LAYERS = [
    ("outputs", "alloctime.c charts.c checks.c diff.c folded.c groups.c json.c massif.c packwriter.c pinned.c "
                "pprof.c suppress.c suppress_elf.c svg.c threadcosts.c topseries.c"),
    ("analyses", "analysis.c calltree.c costs.c figures.c report.c wrappers.c"),
    ("frames", "frames.c modcheck.c symfiles.c"),
    ("symbolizer", "symbolize.c"),
    ("dwarf", "sym_module.c sym_names.c sym_scopes.c sym_strings.c sym_symtab.c sym_cache.c"),
    ("model", "model.c"),
    ("base", "accounting.c addrmap.c growth.c heaplayout.c names.c outfile.c packframes.c protobuf.c readahead.c rssgap.c "
             "sizes.c threadtimes.c timeseries.c"),
]

LIBRARIES = [
    ("recorder/preload", "memrec_preload", PRELOAD_LAYERS, PRELOAD_MUTUAL),
    ("recorder/merge", "memmerge", MERGE_LAYERS),
    ("recorder/memrec", "memrec", MEMREC_LAYERS),
    ("format", "memfmt memfmt_record", FORMAT_LAYERS),
    ("tui", "memtui", TUI_LAYERS),
    ("analyzer", "memaccounting memanalysis memexport", ANALYZER_LAYERS),
]


def target_objects(targets):
    """{source path relative to SRC: object path} of the object files of
    the CMake targets named (space-separated). CMake builds target T of
    SRC/D/CMakeLists.txt under BUILD/D/CMakeFiles/T.dir/, an object of
    source D/X under X.o there."""
    objects = {}
    for target in targets.split():
        for root, _dirs, files in os.walk(BUILD):
            parts = os.path.relpath(root, BUILD).split(os.sep)
            if target + ".dir" not in parts:
                continue
            i = parts.index(target + ".dir")
            if i == 0 or parts[i - 1] != "CMakeFiles":
                continue
            for name in files:
                if name.endswith((".c.o", ".cpp.o")):
                    src = os.path.normpath(os.path.join(*(parts[:i - 1] + parts[i + 1:] + [name[:-2]])))
                    objects[src] = os.path.join(root, name)
    return objects


def object_symbols(path):
    """(defined global names, undefined names) of one object file."""
    r = subprocess.run(["nm", "-P", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError("nm failed on %s: %s" % (path, r.stderr))
    defined, undefined = set(), set()
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind.isupper():
            defined.add(name)
    return defined, undefined


def file_references(objects):
    """{(from file, to file): names} for every name one object uses and
    another defines."""
    owner, uses = {}, {}
    for src, obj in objects.items():
        defined, undefined = object_symbols(obj)
        for name in defined:
            owner[name] = src
        uses[src] = undefined
    refs = {}
    for src, names in uses.items():
        for name in names:
            dst = owner.get(name)
            if dst is not None and dst != src:
                refs.setdefault((src, dst), set()).add(name)
    return refs


def cycles(files, refs):
    """The strongly connected components of more than one file (Tarjan)."""
    succ = {f: sorted(b for (a, b) in refs if a == f) for f in files}
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    for f in sorted(files):
        if f not in index:
            visit(f)
    return out


def layer_violations(layers, layer_of, refs):
    """Lines naming each reference from a lower layer to a higher one."""
    bad = []
    for (src, dst), names in sorted(refs.items()):
        if src in layer_of and dst in layer_of and layer_of[src] > layer_of[dst]:
            bad.append("%s (%s) -> %s (%s): %s" % (src, layers[layer_of[src]][0], dst, layers[layer_of[dst]][0],
                                                  " ".join(sorted(names))))
    return bad


def design_layers(folder):
    """The layer table of `folder` in docs/design.md: rows
    '| layer | `a.c` `b.c` |' after the header '| layer | files of FOLDER/ |'."""
    rows, inside = [], False
    with open(os.path.join(SRC, "docs", "design.md"), encoding="utf-8") as f:
        for line in f:
            if re.match(r"\|\s*layer\s*\|\s*files of %s/\s*\|" % re.escape(folder), line):
                inside = True
                continue
            if inside:
                if not line.startswith("|"):
                    break
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if set(cells[0]) <= set("-"):
                    continue
                rows.append((cells[0], " ".join(re.findall(r"`([^`]+)`", cells[1]))))
    return rows


def check_layers(folder, targets, layers, mutual=frozenset()):
    """The layer rules of the library whose sources are the .c files of
    `folder` (under SRC) and whose objects are those of the CMake
    `targets` (space-separated names), against the table `layers` (top to
    bottom: [(name, "a.c b.c")]; an entry with a * is a pattern over the
    folder's files) and docs/design.md's table of `folder`.
    `mutual`: sets of files allowed to refer to each other in a cycle."""
    what = "%s/ (%s)" % (folder, targets)
    here = sorted(os.path.basename(p) for p in sources(folder) if p.endswith((".c", ".cpp")))
    layer_of, listed = {}, []
    for i, (_name, files) in enumerate(layers):
        for f in files.split():
            # A pattern (view_*.c) stands for every file of the folder it
            # matches, so that a new file of that kind needs no new entry.
            for g in (sorted(fnmatch.filter(here, f)) if "*" in f else [f]):
                layer_of[g] = i
                listed.append(g)
    check_eq(sorted(f for f in set(listed) if listed.count(f) > 1), [], "%s: no file is in two layers" % what)
    check_eq(sorted(set(layer_of) ^ set(here)), [], "%s: every file has a layer, and only those (%d files)"
             % (what, len(here)))
    objects = {os.path.basename(src): obj for src, obj in target_objects(targets).items()
               if (src + os.sep).startswith(os.path.normpath(folder) + os.sep)}
    if not check(objects, "%s: object files under %s" % (what, BUILD)):
        return
    check_eq(sorted(set(objects) ^ set(here)), [], "%s: the objects are the files of the folder" % what)
    refs = file_references(objects)
    check(len(refs) >= len(layers) - 1, "%s: the object scan sees the calls between files (%d pairs)"
          % (what, len(refs)))
    check_eq(layer_violations(layers, layer_of, refs), [], "%s: no file refers to a layer above it" % what)
    found = cycles(set(objects), refs)
    check_eq(sorted(sorted(c) for c in found if c not in mutual), [],
             "%s: no cycle between files%s" % (what, " but those of its MUTUAL" if mutual else ""))
    check_eq(design_layers(folder), [(n, " ".join(f.split())) for n, f in layers],
             "%s: docs/design.md's layer table is the test's" % what)


def main():
    for path in (PRELOAD, MEMREC):
        if not os.path.exists(path):
            print("FAIL missing %s" % path)
            sys.exit(1)
    check_preload()
    check_memrec_links()
    check_includes()
    check_internal_header()
    for library in LIBRARIES:
        check_layers(*library)
    done()


if __name__ == "__main__":
    main()
