#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the hostile recordings of tests/data/hostile/ (issue 11): small
files whose ids, counts and names once made memprint use gigabytes, run for
minutes or drive the terminal. tests/integration/test_hostile.py runs
memprint on each and asserts bounded time and memory, the message and the
exit status; tests/fuzz/make_corpus.py copies them into the fuzz corpus.

The files are committed; run this again only to change them (it needs the
`zstd` command, 1.5). With --large DIR it writes instead the large inputs
of bench/fuzz.sh (thousands of modules, nodes, threads, deep chains), which
are not committed.

Every file is a version 1 recording (events with their fields after each
operation byte: see tests/data/make_bad.py), spelt out here byte by byte,
except heapinfo-extremes (version 3, no events).
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "hostile")

MAGIC = b"\x89MEMREC\n"
# Record tags (format/memfmt.h)
REC_PROCESS, REC_MODULE, REC_UNMODULE, REC_THREAD, REC_NODE, REC_EVENTS = 1, 2, 3, 4, 5, 6
REC_TIME, REC_STATS, REC_END = 9, 12, 11
REC_RSS, REC_HEAPINFO, REC_LAYOUT = 10, 16, 25
REC_PACK_STRING, REC_PACK_FRAMES = 18, 19
HF_PACKED = 1 << 2  # header flag: the file carries its frames (memprint --pack)
# EVENTS operations (format/memfmt_internal.h), as in make_bad.py
OP_ALLOC, OP_FREE, OP_REALLOC, OP_THREAD = 0 << 2, 1 << 2, 2 << 2, 3 << 2
OP_NEW, OP_TEMP = 1 << 1, 1 << 0
K_MALLOC, K_REALLOC, K_FREE = 0, 2, 11
EVENTS_MAX = 60000  # payload bytes per EVENTS record (the format allows 64 KiB)


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def header(version=1, flags=0):
    return MAGIC + version.to_bytes(2, "little") + bytes([8, 1]) + flags.to_bytes(4, "little")


def field(f):
    return f if isinstance(f, bytes) else varint(f)


def blob(b):
    return varint(len(b)) + b


def record(tag, *fields):
    payload = b"".join(field(f) for f in fields)
    return bytes([tag]) + varint(len(payload)) + payload


def process(exe=b"/bin/prog", cmdline=b"prog", sample_rate=0):
    return record(REC_PROCESS, 4242, 1, 0, sample_rate, blob(exe), blob(cmdline))


def module(mid, bias, path, segments=((0, 0x10000, 5),)):
    fields = [mid, bias, blob(path), blob(b""), len(segments)]
    for s in segments:
        fields += list(s)
    return record(REC_MODULE, *fields, 0)


def op(operation, kind, *fields):
    return bytes([operation << 4 | kind]) + b"".join(varint(f) for f in fields)


def events(ops):
    """EVENTS records holding the operations (bytes each), split so that no
    payload is larger than EVENTS_MAX."""
    out = bytearray()
    cur = bytearray()
    for o in ops:
        if len(cur) + len(o) > EVENTS_MAX:
            out += bytes([REC_EVENTS]) + varint(len(cur)) + cur
            cur = bytearray()
        cur += o
    if cur:
        out += bytes([REC_EVENTS]) + varint(len(cur)) + cur
    return bytes(out)


def end_exited(status=0, runtime_ms=5):
    return record(REC_STATS, 0, 0) + record(REC_END, 0, status * 2, runtime_ms)


def zstd(raw):
    """Compress like memrec does: one frame with a checksum."""
    r = subprocess.run(["zstd", "-q", "-3", "--check", "-c"], input=raw, stdout=subprocess.PIPE, check=True)
    return r.stdout


def start(**kw):
    return header() + process(**kw) + record(REC_THREAD, 1, 4242) + record(REC_TIME, 1)


# ---- the files: name -> decompressed bytes ----

def free_trace(trace):
    # One malloc whose pair names trace `trace` (no NODE defines it), and
    # its free: the free carries the same trace.
    return start() + events([op(OP_THREAD, 0, 1), op(OP_ALLOC | OP_NEW, K_MALLOC, 10001, trace),
                             op(OP_FREE, K_FREE, 1)]) + end_exited()


def realloc_trace(trace):
    return start() + events([op(OP_THREAD, 0, 1), op(OP_ALLOC | OP_NEW, K_MALLOC, 10001, trace),
                             op(OP_REALLOC | OP_NEW, K_REALLOC, 1, 20001, trace),
                             op(OP_FREE, K_FREE, 2)]) + end_exited()


def modules_nodes(n, same_id):
    # n modules over the same range and n nodes in it, each with a malloc:
    # a scan of every module per node was n^2.
    base = 0x400000
    # Identical NODE records (which no writer makes) compress to nothing,
    # and cost the same lookups; a malloc at one node in a hundred.
    body = b"".join(module(1 if same_id else i + 1, base, b"/nonexistent/libhostile.so") for i in range(n))
    body += record(REC_NODE, 0, base - 0x100) * n  # in no module: every module is looked at
    ops = [op(OP_THREAD, 0, 1)] + [op(OP_ALLOC | OP_NEW, K_MALLOC, 10001, i + 1) for i in range(0, n, 100)]
    return start() + body + events(ops) + end_exited()


def module_unmodule(n):
    # n modules loaded and unloaded, each after a node in it.
    base = 0x400000
    body = bytearray()
    for i in range(n):
        body += module(i + 1, base + i * 0x10000, b"/nonexistent/lib.so")
        body += record(REC_NODE, 0, base + i * 0x10000 + 0x10)
        body += record(REC_UNMODULE, i + 1)
    ops = [op(OP_THREAD, 0, 1)] + [op(OP_ALLOC | OP_NEW, K_MALLOC, 10001, i + 1) for i in range(n)]
    return start() + bytes(body) + events(ops) + end_exited()


def same_file(n):
    # n modules of one real file (memprint itself, through /proc/self/exe)
    # at n addresses, a node and a malloc in each: a symbolizer that loads
    # the file once per module needed 190 s and 32 GB for 3,000 of libc.
    body = bytearray()
    for i in range(n):
        bias = (i + 1) << 28
        body += module(i + 1, bias, b"/proc/self/exe", segments=((0, 0x100000, 5),))
        body += record(REC_NODE, 0, bias + 0x3800 + (i % 64) * 16)  # in .text
    ops = [op(OP_THREAD, 0, 1)] + [op(OP_ALLOC | OP_NEW, K_MALLOC, 10001, i + 1) for i in range(n)]
    return start() + bytes(body) + events(ops) + end_exited()


def deep_chain(n):
    # A chain of n nodes (each the child of the previous) with a malloc at
    # each: n stacks of depths 1..n.
    # Deeper stacks allocate more, so that they rank first.
    body = b"".join(record(REC_NODE, i, 0x1000 + i) for i in range(n))
    ops = [op(OP_THREAD, 0, 1)] + [op(OP_ALLOC | OP_NEW, K_MALLOC, 10001 + i, i + 1) for i in range(n)]
    return start() + body + events(ops) + end_exited()


def many_threads(n):
    body = b"".join(record(REC_THREAD, i + 1, 5000 + i) for i in range(n))
    ops = []
    for i in range(n):
        ops += [op(OP_THREAD, 0, i + 1), op(OP_ALLOC | OP_NEW, K_MALLOC, 10001 + i, 0)]
    return start() + body + events(ops) + end_exited()


def hostile_names():
    # Names that drive a terminal (OSC title, clear screen, C1 CSI) and bytes
    # that are not UTF-8, in the program's name, arguments and a module path.
    exe = b"/bin/\x1b]0;pwned\x07prog\xff"
    cmdline = b"prog\x1b[2J\x00--flag=\xc2\x9b31m\x00\xfe\xffend"
    body = module(1, 0x400000, b"/nonexistent/\x1b[31mred\x1b[0m\xff.so")
    body += record(REC_NODE, 0, 0x400123)
    ops = [op(OP_THREAD, 0, 1), op(OP_ALLOC | OP_NEW, K_MALLOC, 10001, 1)]
    return header() + process(exe=exe, cmdline=cmdline) + record(REC_THREAD, 1, 4242) + body + events(ops) + \
        end_exited()


def module_fifo(path=b"/proc/self/fd/0"):
    # A module whose path is memprint's standard input (a pipe in the
    # test, left open), or a FIFO: opening or reading it for symbols
    # blocks for ever.
    body = module(1, 0x400000, path) + record(REC_NODE, 0, 0x400123)
    ops = [op(OP_THREAD, 0, 1), op(OP_ALLOC | OP_NEW, K_MALLOC, 10001, 1)]
    return start() + body + events(ops) + end_exited()


def wrap_total(n=131072):
    # n blocks of 128 TiB each, all leaked: 131,072 of them sum to 2^64,
    # which wrapped the totals to 0 ("0 B leaked in 131072 blocks").
    ops = [op(OP_THREAD, 0, 1), op(OP_ALLOC | OP_NEW, K_MALLOC, 1 << 47, 0)] + [op(OP_ALLOC, K_MALLOC, 1)] * (n - 1)
    return start() + events(ops) + end_exited()


def exe_fifo(path):
    # The recorded program's path names a FIFO here: memprint reads the
    # program's embedded leak suppressions from that file, and opening a
    # FIFO without a writer blocks for ever.
    ops = [op(OP_THREAD, 0, 1), op(OP_ALLOC | OP_NEW, K_MALLOC, 10001, 0)]
    return header() + process(exe=path) + record(REC_THREAD, 1, 4242) + record(REC_TIME, 1) + events(ops) + \
        end_exited()


def pack_frames(mid, offset, frames):
    """A PACK_FRAMES record: frames are (function id, file id, line, flags)."""
    fields = [mid, offset, len(frames)]
    for f in frames:
        fields += list(f)
    return record(REC_PACK_FRAMES, *fields)


def packed_garbage():
    # A packed file whose pack lies: besides one good address and one whose
    # name drives a terminal, a frame naming a string never defined, one
    # naming a module never defined, and an address given twice. The three
    # are refused (their addresses read as module+offset), nothing crashes.
    base = 0x400000
    body = module(1, base, b"/nonexistent/libpacked.so")
    body += record(REC_NODE, 0, base + 0x100) + record(REC_NODE, 1, base + 0x200) + record(REC_NODE, 2, base + 0x300)
    ops = [op(OP_THREAD, 0, 1), op(OP_ALLOC | OP_NEW, K_MALLOC, 10001, 3), op(OP_ALLOC | OP_NEW, K_MALLOC, 20001, 2)]
    pack = record(REC_PACK_STRING, blob(b"good_function")) + record(REC_PACK_STRING, blob(b"good.c"))
    pack += record(REC_PACK_STRING, blob(b"\x1b]0;pwned\x07evil\x1b[2J\xff"))
    pack += pack_frames(1, 0x300, [(1, 2, 42, 0)])  # the leaf of the first stack
    pack += pack_frames(1, 0x100, [(3, 0, 0, 0)])  # the outermost frame: the hostile name
    pack += pack_frames(1, 0x200, [(99, 0, 1, 0)])  # string 99 was never defined
    pack += pack_frames(7, 0x200, [(1, 0, 1, 0)])  # module 7 was never defined
    pack += pack_frames(1, 0x300, [(1, 0, 7, 0)])  # given before
    return header(flags=HF_PACKED) + process() + record(REC_THREAD, 1, 4242) + body + events(ops) + \
        end_exited() + pack


def packed_flood(n):
    # A packed file of one node whose pack claims n strings and n addresses
    # (identical records compress to nothing): the pack is bounded by the
    # nodes defined, so all but a few are refused at no cost.
    base = 0x400000
    body = module(1, base, b"/nonexistent/libpacked.so") + record(REC_NODE, 0, base + 0x100)
    ops = [op(OP_THREAD, 0, 1), op(OP_ALLOC | OP_NEW, K_MALLOC, 10001, 1)]
    pack = record(REC_PACK_STRING, blob(b"flood_function")) * n
    pack += b"".join(pack_frames(1, 0x100 + i, [(1, 0, 1, 0)] * 64) for i in range(n))
    return header(flags=HF_PACKED) + process() + record(REC_THREAD, 1, 4242) + body + events(ops) + \
        end_exited() + pack


def packed_corrupt():
    # A PACK_FRAMES record with 65 frames (the format allows 64): corrupt,
    # reading stops there.
    base = 0x400000
    body = module(1, base, b"/nonexistent/libpacked.so") + record(REC_NODE, 0, base + 0x100)
    ops = [op(OP_THREAD, 0, 1), op(OP_ALLOC | OP_NEW, K_MALLOC, 10001, 1)]
    pack = record(REC_PACK_STRING, blob(b"f")) + pack_frames(1, 0x100, [(1, 0, 1, 0)] * 65)
    return header(flags=HF_PACKED) + process() + record(REC_THREAD, 1, 4242) + body + events(ops) + \
        end_exited() + pack


def sampled_huge():
    # A sampled recording with an allocation of 2^64 - 1 bytes.
    ops = [op(OP_THREAD, 0, 1), op(OP_ALLOC | OP_NEW, K_MALLOC, (1 << 64) - 1, 0),
           op(OP_ALLOC | OP_NEW, K_MALLOC, 10001, 0)]
    return start(sample_rate=4096) + events(ops) + end_exited()


def heapinfo_extremes(n=200000):
    # Version 3: RSS and every allocator figure at 2^64 - 1, TIME going up
    # to it, and n HEAPINFO records, most of them within one period (the
    # moments waiting for steady RSS after them are a ring of 8).
    big = (1 << 64) - 1
    body = bytearray(record(REC_RSS, big) + record(REC_TIME, 5))
    for i in range(n):
        if i % 1000 == 0:
            body += record(REC_TIME, 5 + i // 1000 * 25)
        body += record(REC_HEAPINFO, *([big] * 11))
    body += record(REC_TIME, big) + record(REC_RSS, 1) + record(REC_TIME, big)
    return header(3) + process() + record(REC_THREAD, 1, 4242) + bytes(body) + end_exited()


def layout_extremes(n=20000):
    # Version 4: RSS and the allocator's figures at 2^64 - 1 with a heap
    # range, then n LAYOUT records (16 entries each, every count at 2^64 -
    # 1, pages of 1 GiB, the largest allowed) naming traces no NODE defines
    # (2^32 - 1), most within one period, between allocator samples.
    big = (1 << 64) - 1
    lay = [1 << 30] + [big] * 5 + [(1 << 32) - 1] + [big] * 4 + [16] + [(1 << 32) - 1, big, big, big] * 16
    body = bytearray(record(REC_RSS, big) + record(REC_TIME, 5))
    for i in range(n):
        if i % 1000 == 0:
            body += record(REC_TIME, 5 + i // 1000 * 25)
            body += record(REC_HEAPINFO, *([big] * 13))
        body += record(REC_LAYOUT, *lay)
    body += record(REC_TIME, big) + record(REC_RSS, 1) + record(REC_TIME, big)
    return header(4) + process() + record(REC_THREAD, 1, 4242) + bytes(body) + end_exited()


def plain():
    ops = [op(OP_THREAD, 0, 1), op(OP_ALLOC | OP_NEW, K_MALLOC, 10001, 0), op(OP_FREE | OP_TEMP, K_FREE)]
    return start() + events(ops) + end_exited()


def skippable(compressed):
    """A zstd skippable frame (magic 0x184D2A50), then the file."""
    payload = b"memrec test: a skippable frame comes first"
    return (0x184D2A50).to_bytes(4, "little") + len(payload).to_bytes(4, "little") + payload + compressed


def window_frame(window_log, raw=None):
    """A zstd frame whose header asks for a 2^window_log window (no content
    size, so the window is not shrunk to it), holding `raw`, by default
    the plain recording, in raw blocks of at most 128 KiB; no checksum.
    Needs no zstd command: tests use it to write files at run time."""
    raw = plain() if raw is None else raw
    fhd = 0x00  # no content size, not single-segment, no checksum, no dictionary
    wd = (window_log - 10) << 3
    out = bytearray(b"\x28\xb5\x2f\xfd" + bytes([fhd, wd]))
    block = min(128 << 10, 1 << window_log)
    for at in range(0, max(len(raw), 1), block):
        chunk = raw[at:at + block]
        last = at + block >= len(raw)
        out += (int(last) | (0 << 1) | (len(chunk) << 3)).to_bytes(3, "little") + chunk  # raw block
    return bytes(out)


SMALL = {
    "free-trace-2e24": lambda: zstd(free_trace(1 << 24)),
    "free-trace-max": lambda: zstd(free_trace((1 << 32) - 1)),
    "realloc-trace-2e26": lambda: zstd(realloc_trace(1 << 26)),
    "modules-same-id-30000": lambda: zstd(modules_nodes(30000, True)),
    "modules-30000": lambda: zstd(modules_nodes(30000, False)),
    "unmodule-10000": lambda: zstd(module_unmodule(10000)),
    "deep-chain-20000": lambda: zstd(deep_chain(20000)),
    "same-file-3000": lambda: zstd(same_file(3000)),
    "threads-5000": lambda: zstd(many_threads(5000)),
    "names": lambda: zstd(hostile_names()),
    "module-stdin": lambda: zstd(module_fifo()),
    "sampled-huge-size": lambda: zstd(sampled_huge()),
    "heapinfo-extremes": lambda: zstd(heapinfo_extremes()),
    "layout-extremes": lambda: zstd(layout_extremes()),
    "skippable-first": lambda: skippable(zstd(plain())),
    "window-2e27": lambda: window_frame(27),
    "window-2e28": lambda: window_frame(28),
    "window-2e31": lambda: window_frame(31),
    "packed-garbage": lambda: zstd(packed_garbage()),
    "packed-flood-20000": lambda: zstd(packed_flood(20000)),
    "packed-corrupt": lambda: zstd(packed_corrupt()),
}

LARGE = {
    "large-modules-100000": lambda: zstd(modules_nodes(100000, False)),
    "large-deep-chain-100000": lambda: zstd(deep_chain(100000)),
    "large-same-file-30000": lambda: zstd(same_file(30000)),
    "large-threads-200000": lambda: zstd(many_threads(200000)),
    "large-unmodule-100000": lambda: zstd(module_unmodule(100000)),
}


def main():
    out, files = OUT, SMALL
    if len(sys.argv) == 3 and sys.argv[1] == "--large":
        out, files = sys.argv[2], LARGE
    elif len(sys.argv) != 1:
        print("usage: make_hostile.py [--large DIR]", file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    for name, make in files.items():
        data = make()
        path = os.path.join(out, name + ".mrec")
        with open(path, "wb") as f:
            f.write(data)
        print("wrote %s (%d bytes)" % (path, len(data)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
