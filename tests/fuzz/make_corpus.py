#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the seed corpus of the fuzz targets (tests/fuzz/corpus/).

The corpus is committed; this script is how it was made, run again only to
change it (`make_corpus.py --hostile` writes only corpus/hostile/). It needs a build tree (memrec, the preload library and the target
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


def main():
    if sys.argv[1:] == ["--hostile"]:
        hostile()
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
