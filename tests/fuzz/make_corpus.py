#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the seed corpus of the fuzz targets (tests/fuzz/corpus/).

The corpus is committed; this script is how it was made, run again only to
change it (`make_corpus.py --hostile` writes only corpus/hostile/, `--layout`
only the LAYOUT seeds). It needs a build tree (memrec, the preload library and the target
programs of tests/progs), python3 and the `zstd` command.

Recordings are named *.mrec: the top .gitignore ignores *.zst.

corpus/reader/   whole recordings for fuzz_reader: real ones of small target
                 programs, a cut one, and the fixtures of tests/data/bad/;
                 and the decompressed streams of the real ones (*.stream),
                 which fuzz_reader compresses before reading
corpus/hostile/  the hostile recordings of tests/data/hostile/ (and their
                 decompressed streams): replayed by every target in ctest
                 and run once each by bench/fuzz.sh, but no seed of a
                 libFuzzer run (large inputs would slow every mutation)
corpus/record/   inputs for fuzz_record: the decompressed records of real
                 recordings (header removed), and wire batches as the
                 preloaded recorder writes them into memrec's pipe (batch
                 header removed)
"""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("MEMREC_BUILD_DIR") or os.path.join(SRC, "build")
CORPUS = os.path.join(HERE, "corpus")
HEADER_LEN = 16
# Fixtures that still make a fuzz target abort: their reproducers are in
# tests/fuzz/crashes/ and they join the corpus once the bug is fixed (a
# crashing seed would stop every libFuzzer run at start-up). None is open.
OPEN_BUGS = set()
# Decompressed streams larger than this are not added: the replay reads
# each input several times.
STREAM_MAX = 300000
WIRE_HEADER = 8


def prog(name):
    return os.path.join(BUILD, "tests", "progs", name)


def record(argv, out, extra=()):
    if os.path.exists(out):
        os.unlink(out)
    subprocess.run([os.path.join(BUILD, "memrec"), "-q", "-o", out] + list(extra) + ["--"] + argv, check=True)
    with open(out, "rb") as f:
        return f.read()


def decompress(data):
    r = subprocess.run(["zstd", "-q", "-d", "-c"], input=data, stdout=subprocess.PIPE, check=True)
    return r.stdout


def wire_batches(argv):
    """Run argv with the recorder preloaded, writing into a pipe of ours,
    and return the batches it wrote (without their 8-byte headers)."""
    r, w = os.pipe()
    ino = os.fstat(r).st_ino

    def child_setup():
        # MEMREC_PIPE=fd:inode:pid, as memrec sets it (recorder/preload/init.c).
        os.environ["MEMREC_PIPE"] = "%d:%d:%d" % (w, ino, os.getpid())
        os.environ["LD_PRELOAD"] = os.path.join(BUILD, "libmemrec_preload.so")

    p = subprocess.Popen(argv, preexec_fn=child_setup, pass_fds=(w,))
    os.close(w)
    data = bytearray()
    while True:
        k = os.read(r, 1 << 16)
        if not k:
            break
        data += k
    os.close(r)
    p.wait()
    batches = []
    pos = 0
    while pos + 4 <= len(data):
        n = int.from_bytes(data[pos:pos + 4], "little")
        batches.append(bytes(data[pos + WIRE_HEADER:pos + 4 + n]))
        pos += 4 + n
    return batches


def write(sub, name, data):
    path = os.path.join(CORPUS, sub, name)
    with open(path, "wb") as f:
        f.write(data)
    print("wrote %s (%d bytes)" % (os.path.relpath(path, HERE), len(data)))


def hostile():
    """corpus/hostile/: tests/data/hostile/ as it is, and decompressed."""
    shutil.rmtree(os.path.join(CORPUS, "hostile"), ignore_errors=True)
    os.makedirs(os.path.join(CORPUS, "hostile"))
    src = os.path.join(SRC, "tests", "data", "hostile")
    for name in sorted(os.listdir(src)):
        with open(os.path.join(src, name), "rb") as f:
            data = f.read()
        write("hostile", "hostile-" + name, data)
        try:
            raw = decompress(data)
        except subprocess.CalledProcessError:
            continue  # the window fixtures need more memory than zstd allows by default
        if raw.startswith(b"\x89MEMREC\n") and len(raw) <= STREAM_MAX:
            write("hostile", "hostile-" + os.path.splitext(name)[0] + ".stream", raw)


def layout_seeds():
    """Seeds with LAYOUT records (and HEAPINFO with the heap's range),
    spelled out byte by byte: a real recording with them (rss_pinned) holds
    80,000 blocks' events, too large a seed."""
    def varint(v):
        out = bytearray()
        while True:
            b = v & 0x7F
            v >>= 7
            out.append(b | (0x80 if v else 0))
            if not v:
                return bytes(out)

    def rec(tag, *fields):
        payload = b"".join(f if isinstance(f, bytes) else varint(f) for f in fields)
        return bytes([tag]) + varint(len(payload)) + payload

    def blob(b):
        return varint(len(b)) + b

    heap = 0x55d1c2a3f000
    records = (rec(1, 4242, 1, 0, 0, blob(b"/bin/prog"), blob(b"prog")) + rec(4, 1, 4242) + rec(5, 0, 0x401000)
               + rec(5, 1, 0x401100) + rec(9, 5) + rec(10, 90 << 20) + rec(9, 30)
               + rec(16, 80 << 20, 2, 0, 80 << 20, 0, 11216, 51136, 0, 0, 524, 938, heap, heap + (80 << 20))
               + rec(25, 4096, 80 << 20, 1001, 1, 19688, 80644160, 2, 1001, 19688, 2, 41000, 2, 2, 19688, 1, 1, 1, 0, 0, 3)
               # the thread arenas' heaps (appended fields: heap 1, 2 heaps, 1 heap top)
               + rec(25, 4096, 40320096, 1001, 1, 9843, 40320096, 2, 1001, 9843, 1, 30000, 1, 2, 9843, 1, 1, 1, 2,
                     1, 2, 1001, 9843, 9843, 1)
               + rec(9, 60) + rec(12, 0, 0) + rec(11, 0, 0, 60))
    header = b"\x89MEMREC\n" + (4).to_bytes(2, "little") + bytes([8, 1]) + (0).to_bytes(4, "little")
    write("record", "layout.records", records)
    write("reader", "layout.stream", header + records)


def main():
    if sys.argv[1:] == ["--hostile"]:
        hostile()
        return 0
    if sys.argv[1:] == ["--layout"]:
        layout_seeds()
        return 0
    hostile()
    for sub in ("reader", "record"):
        shutil.rmtree(os.path.join(CORPUS, sub), ignore_errors=True)
        os.makedirs(os.path.join(CORPUS, sub))
    tmp = os.path.join(CORPUS, "tmp.zst")
    recordings = {}
    for name, argv in (("chain", [prog("chain")]), ("nothing", [prog("nothing")]),
                       ("threads", [prog("threads")]), ("slow-300-segv", [prog("slow"), "300", "segv"])):
        try:
            recordings[name] = record(argv, tmp)
        except subprocess.CalledProcessError:
            # slow segv exits 139 by design; keep what it wrote.
            with open(tmp, "rb") as f:
                recordings[name] = f.read()
    # memrec --time: the timed layout of EVENTS (format version 4: a coded time column).
    for name, argv in (("timed-chain", [prog("chain")]), ("timed-threads", [prog("threads")])):
        recordings[name] = record(argv, tmp, ("--time",))
    os.unlink(tmp)
    for name, data in recordings.items():
        raw = decompress(data)
        write("reader", name + ".mrec", data)
        # fuzz_reader compresses an input that starts with the memrec magic.
        write("reader", name + ".stream", raw)
        write("record", name + ".records", raw[HEADER_LEN:])
    # A recording cut in its second half: a truncated frame.
    slow = recordings["slow-300-segv"]
    write("reader", "slow-cut.mrec", slow[:len(slow) * 3 // 4])
    for name in sorted(os.listdir(os.path.join(SRC, "tests", "data", "bad"))):
        if name in OPEN_BUGS:
            continue
        with open(os.path.join(SRC, "tests", "data", "bad", name), "rb") as f:
            data = f.read()
        write("reader", "bad-" + name, data)
        raw = decompress(data)
        if raw.startswith(b"\x89MEMREC\n"):
            write("reader", "bad-" + os.path.splitext(name)[0] + ".stream", raw)
    for name, argv in (("chain", [prog("chain")]), ("threads", [prog("threads")])):
        for i, batch in enumerate(wire_batches(argv)[:6]):
            write("record", "wire-%s-%d.bin" % (name, i), batch)
    layout_seeds()
    return 0


if __name__ == "__main__":
    sys.exit(main())
