#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the fixtures of tests/data/bad/ (see tests/data/README.md).

The fixtures are committed; this script is how they were made, and is run
again only to change them. It needs the `zstd` command (zstd 1.5); the tests
never run it. Each fixture is built from bytes spelt out here, so its content
does not depend on the machine: only zstd's compressed bytes may differ
between zstd versions, which is why the results are committed.

The files are named *.mrec, not *.zst: the top .gitignore ignores *.zst
(memrec's own output files), which would keep fixtures out of commits.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BAD = os.path.join(HERE, "bad")

MAGIC = b"\x89MEMREC\n"

# Record tags (format/memfmt.h)
REC_THREAD, REC_EVENTS, REC_TIME, REC_END = 4, 6, 9, 11
# Operations inside an EVENTS record (format/memfmt_internal.h): one byte,
# operation in the high nibble (type in bits 3-2, NEW bit 1, TEMP bit 0),
# memfmt_kind in the low one.
OP_ALLOC, OP_FREE, OP_REALLOC, OP_THREAD = 0 << 2, 1 << 2, 2 << 2, 3 << 2
OP_NEW, OP_TEMP = 1 << 1, 1 << 0
K_MALLOC, K_FREE = 0, 11


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def header(version=1, pointer_size=8, little_endian=1, flags=0):
    return (MAGIC + version.to_bytes(2, "little") + bytes([pointer_size, little_endian]) +
            flags.to_bytes(4, "little"))


def record(tag, *fields):
    payload = b"".join(varint(f) for f in fields)
    return bytes([tag]) + varint(len(payload)) + payload


def events(*ops):
    """An EVENTS record; each op is (operation, kind, fields...)."""
    payload = b"".join(bytes([op << 4 | kind]) + b"".join(varint(f) for f in fields) for op, kind, *fields in ops)
    return bytes([REC_EVENTS]) + varint(len(payload)) + payload


def end_exited(status=0, runtime_ms=5):
    return record(REC_END, 0, status * 2, runtime_ms)  # value is zigzag-coded


def zstd(raw):
    """Compress like memrec does: one frame with a checksum."""
    r = subprocess.run(["zstd", "-q", "-3", "--check", "-c"], input=raw, stdout=subprocess.PIPE, check=True)
    return r.stdout


def write(name, data):
    with open(os.path.join(BAD, name), "wb") as f:
        f.write(data)
    print("wrote %s (%d bytes)" % (os.path.join("bad", name), len(data)))


def main():
    os.makedirs(BAD, exist_ok=True)
    # Records of a valid minimal recording: thread 1 makes one malloc(10001)
    # and frees it.
    body = (record(REC_THREAD, 1, 4242) + record(REC_TIME, 1) +
            events((OP_THREAD, 0, 1), (OP_ALLOC | OP_NEW, K_MALLOC, 10001, 0), (OP_FREE | OP_TEMP, K_FREE)))

    # zstd, but the content is text, longer than a memrec header.
    write("not-memrec.mrec", zstd(b"This is plain text compressed with zstd; it is not a memrec recording.\n"))
    # zstd, content shorter than the 16-byte header and not a memrec magic.
    write("not-memrec-short.mrec", zstd(b"hello world\n"))
    # A memrec header of format version 99, then valid version-1 records.
    write("version99.mrec", zstd(header(version=99) + body + end_exited()))
    # Version 1 header, one thread, then a TIME record whose length varint
    # says 2 GiB (more than MEMFMT_MAX_RECORD), then valid records.
    write("record-too-long.mrec", zstd(header() + record(REC_THREAD, 1, 4242) + bytes([REC_TIME]) +
                                      varint(1 << 31) + varint(1) + end_exited()))
    # Version 1 header, thread 1 introduced, then events of thread index
    # 2^25 - 2, which no THREAD record introduced: corrupt data that a reader
    # must not take as an array size (8 bytes per thread index would make
    # it 256 MiB per table).
    write("bad-thread-index.mrec", zstd(header() + record(REC_THREAD, 1, 4242) + record(REC_TIME, 1) +
                                       events((OP_THREAD, 0, (1 << 25) - 2), (OP_ALLOC | OP_NEW, K_MALLOC, 10001, 0)) +
                                       end_exited()))
    # Version 1 header, thread 1 allocates a (10001, no stack) block and a
    # (5, no stack) block, then frees the second pair twice: the second free
    # names a pair with no live block, which no writer can produce.
    write("pair-freed-twice.mrec", zstd(header() + record(REC_THREAD, 1, 4242) + record(REC_TIME, 1) +
                                       events((OP_THREAD, 0, 1), (OP_ALLOC | OP_NEW, K_MALLOC, 10001, 0),
                                              (OP_ALLOC | OP_NEW, K_MALLOC, 5, 0), (OP_FREE, K_FREE, 2),
                                              (OP_FREE, K_FREE, 2)) +
                                       end_exited()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
