# SPDX-License-Identifier: MIT
"""The symbol cache on disk (analyzer/sym_cache.c): memprint keeps the frames
it resolved from a module's DWARF in $XDG_CACHE_HOME/memrec/symbols, one
file per build-id, and a later run reads them from there. A copy of
tests/progs/inlined (inlined frames, file:line) is recorded; every run's
output must equal the output without a cache (MEMREC_SYMBOL_CACHE=off). The
cache is shown to be read (a name changed inside the cache file shows up),
to be dropped once the module file changes (its modification time), and to
be untrusted input: garbage, a cut file, absurd counts, a symlink and a FIFO
in its place give the output without a cache and never hang; the directory
stays within 256 files."""
import os
import shutil
import stat
import struct
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

MEMTUI = os.path.join(BUILD, "memtui")

tmp = tmpdir()
exe = os.path.join(tmp, "inlined")
shutil.copy2(prog("inlined"), exe)
rec = os.path.join(tmp, "inlined.zst")
r = record([exe], rec)
check_eq(r.returncode, 0, "memrec records the copy of inlined")

cache_home = os.path.join(tmp, "cache")
cache_dir = os.path.join(cache_home, "memrec", "symbols")
env_on = dict(os.environ, XDG_CACHE_HOME=cache_home)
env_on.pop("MEMREC_SYMBOL_CACHE", None)
env_off = dict(os.environ, MEMREC_SYMBOL_CACHE="off", XDG_CACHE_HOME=os.path.join(tmp, "unused"))


def memprint(env, *args):
    p = run([MEMPRINT] + list(args) + [rec], env=env)
    return p.returncode, p.stdout.decode(errors="replace")


ref_text = memprint(env_off)
ref_json = memprint(env_off, "--json")
ref_tui = run([MEMTUI, "--batch", "--keys", "2 Down Enter", rec], env=env_off).stdout
check_eq(ref_text[0], 0, "memprint without a cache exits 0")
check("build_table" in ref_text[1] and "make_block" in ref_text[1], "the report names build_table and make_block")
check(not os.path.exists(os.path.join(tmp, "unused")), "MEMREC_SYMBOL_CACHE=off writes no cache")

# First run: resolves, writes the cache; second run: reads it.
check(memprint(env_on) == ref_text, "first run with a cache: the same text")
files = sorted(os.listdir(cache_dir)) if os.path.isdir(cache_dir) else []
ours = [f for f in files if f.endswith(".frames") and exe.encode() in open(os.path.join(cache_dir, f), "rb").read()]
check_eq(len(ours), 1, "one cache file of memprint names the module (%s)" % files)
if not ours:
    done()
path = os.path.join(cache_dir, ours[0])
check_eq(stat.S_IMODE(os.stat(cache_dir).st_mode), 0o700, "the cache directory is private (0700)")
check_eq(stat.S_IMODE(os.stat(path).st_mode), 0o600, "the cache file is private (0600)")
good = open(path, "rb").read()
check(good.startswith(b"memrecSC"), "the cache file starts with its magic")
check(memprint(env_on) == ref_text, "second run, from the cache: the same text")
check(memprint(env_on, "--json") == ref_json, "from the cache: the same JSON")
check(run([MEMTUI, "--batch", "--keys", "2 Down Enter", rec], env=env_on).stdout == ref_tui,
      "memtui with a cache: the same tree")
check(run([MEMTUI, "--batch", "--keys", "2 Down Enter", rec], env=env_on).stdout == ref_tui,
      "memtui from its cache: the same tree")
mine = [f for f in os.listdir(cache_dir) if f.startswith(ours[0].split("-")[0])]
check_eq(len(mine), 2, "memprint and memtui keep a cache file each for the module (%s)" % mine)
check(memprint(env_on) == ref_text and open(path, "rb").read() == good,
      "memprint's file, read again after memtui's runs, is unchanged (no turns at throwing it out)")

# The cache is what the second run read: a name changed in it shows up.
check(b"build_table" in good, "the cache holds the name build_table")
with open(path, "wb") as f:
    f.write(good.replace(b"build_table", b"BUILD_TABLE"))
text = memprint(env_on)[1]
check("BUILD_TABLE" in text and "build_table" not in text, "a name changed in the cache file is what memprint prints")

# A changed module file (its modification time) is not trusted: the real names, and a new cache.
st = os.stat(exe)
os.utime(exe, ns=(st.st_atime_ns, st.st_mtime_ns + 1000000000))
check(memprint(env_on) == ref_text, "after the module file changed: the names from the file")
now = open(path, "rb").read()
check(b"BUILD_TABLE" not in now and b"build_table" in now, "the cache file was written again from the file")
good = now


def hostile(name, content):
    with open(path, "wb") as f:
        f.write(content)
    check(memprint(env_on) == ref_text, "hostile cache (%s): the output without a cache" % name)


hostile("garbage", os.urandom(4096))
hostile("empty", b"")
hostile("cut in half", good[:len(good) // 2])
hostile("one byte short", good[:-1])
hostile("one byte more", good + b"\0")
hostile("magic only", b"memrecSC")
hostile("wrong version", good[:8] + struct.pack("<I", 2) + good[12:])
hostile("another build of the tool", good[:12] + struct.pack("<Q", struct.unpack_from("<Q", good, 12)[0] + 1) + good[20:])
# The string count right after the header: find it as the header's length from the layout.
bid_len = good[12 + 40]  # after the magic, the version and the tool's stamp
p = 13 + 40 + bid_len
plen = struct.unpack_from("<I", good, p)[0]
p += 4 + plen + 40  # the module path, its stamp
dlen = struct.unpack_from("<I", good, p)[0]
p += 4 + (0 if dlen == 0xFFFFFFFF else dlen + 40)
ilen = struct.unpack_from("<I", good, p)[0]
p += 4 + (0 if ilen == 0xFFFFFFFF else ilen)
nstrings = struct.unpack_from("<I", good, p)[0]
check(0 < nstrings < 1000, "the layout reads as documented: %d strings" % nstrings)
hostile("string count 2^32-1", good[:p] + struct.pack("<I", 0xFFFFFFFF) + good[p + 4:])
hostile("string count one more", good[:p] + struct.pack("<I", nstrings + 1) + good[p + 4:])
# A frame naming a string past the table: the last entry's last frame's function id.
bad_ref = bytearray(good)
struct.pack_into("<I", bad_ref, len(good) - 13, nstrings + 5)
hostile("string id past the table", bytes(bad_ref))
zero_frames = bytearray(good)
# The first entry's frame count, after the string table.
q = p + 4
for _ in range(nstrings):
    q += 4 + struct.unpack_from("<I", good, q)[0]
q += 4 + 8
struct.pack_into("<H", zero_frames, q, 0)
hostile("an entry of zero frames", bytes(zero_frames))

# A symlink in its place is not followed, and its target not written.
target = os.path.join(tmp, "target")
with open(target, "wb") as f:
    f.write(good)
os.unlink(path)
os.symlink(target, path)
check(memprint(env_on) == ref_text, "a symlink as the cache file: the output without a cache")
check(open(target, "rb").read() == good, "the symlink's target is not written")
check(os.path.isfile(path) and not os.path.islink(path), "the symlink was replaced by a cache file")

# A FIFO in its place: no hang (a blocking open would wait for a writer for ever).
os.unlink(path)
os.mkfifo(path)
check(memprint(env_on) == ref_text, "a FIFO as the cache file: the output, no hang")

# The directory keeps at most 256 files.
os.unlink(path)
for i in range(300):
    with open(os.path.join(cache_dir, "%040x-0000000000000000.frames" % i), "wb") as f:
        f.write(b"x")
check(memprint(env_on) == ref_text, "with 300 other cache files: the same text")
left = [f for f in os.listdir(cache_dir) if f.endswith(".frames")]
check(len(left) <= 256, "the cache directory holds at most 256 files (%d)" % len(left))
check(os.path.exists(path), "the new cache file was written")

shutil.rmtree(tmp, ignore_errors=True)
done()
