# SPDX-License-Identifier: MIT
"""A small reader of memrec files written from docs/format.md alone (not
through the format library), for the tests of memrec --time: the header,
the records the tests need, and every event with its thread, kind, size,
trace and time (ns; 0 in an untimed file). Decompresses with the zstd
command."""
import subprocess

TAG_PROCESS, TAG_THREAD, TAG_NODE, TAG_EVENTS, TAG_END, TAG_THREAD_TIMES = 1, 4, 5, 6, 11, 17
TAG_HEAPINFO, TAG_LOST, TAG_LAYOUT, TAG_REACH, TAG_REACH_TRACE = 16, 24, 25, 26, 27
REACH_FIELDS = ("status", "reachable_bytes", "reachable_blocks", "possible_bytes", "possible_blocks",
                "unreachable_bytes", "unreachable_blocks", "indirect_bytes", "indirect_blocks", "root_bytes",
                "threads", "stopped_ns", "cost_ns")
REACH_TRACE_FIELDS = ("trace", "unreachable_bytes", "unreachable_blocks", "indirect_bytes", "indirect_blocks",
                      "possible_bytes", "possible_blocks")
HF_TIMED = 1 << 1
OP_ALLOC, OP_FREE, OP_REALLOC, OP_THREAD = 0, 1, 2, 3


def huffman_times(p, k, end):
    """The times of a Huffman-coded time column (version 4) that starts at
    p[k] (after its coding byte) and ends at `end`, as docs/format.md
    describes it: a count, 4-bit code lengths, then the codes of the
    canonical code, first bit first, with the large times' extra bits."""
    count, k = varint(p, k)
    nsym = p[k]
    k += 1
    lens = [(p[k + s // 2] >> 4) if s & 1 else (p[k + s // 2] & 15) for s in range(nsym)]
    k += (nsym + 1) // 2
    codes, code = {}, 0
    for length in range(1, 13):
        for s in range(nsym):
            if lens[s] == length:
                codes[(length, code)] = s
                code += 1
        code <<= 1
    pos = k * 8

    def bit():
        nonlocal pos
        if pos >= end * 8:
            raise ValueError("time column: the bits end before its count")
        b = (p[pos >> 3] >> (pos & 7)) & 1
        pos += 1
        return b

    times = []
    for _ in range(count):
        c = length = 0
        while (length, c) not in codes:
            if length == 12:
                raise ValueError("time column: bits that are no code")
            c, length = c << 1 | bit(), length + 1
        s = codes[(length, c)]
        if s < 128:
            times.append(s)
            continue
        extra = s - 120 - 1
        x = 0
        for i in range(extra):
            x |= bit() << i
        times.append(1 << extra | x)
    if (pos + 7) // 8 != end:
        raise ValueError("time column: bytes left after its count")
    return times


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return v, i
        shift += 7


class Recording:
    def __init__(self, path, events=True):
        """With events=False the EVENTS blocks are kept as bytes
        (events_bytes) but not decoded: the other records only."""
        raw = subprocess.run(["zstd", "-dc", path], stdout=subprocess.PIPE, check=True).stdout
        if raw[:8] != b"\x89MEMREC\n":
            raise ValueError("not a memrec recording")
        self.version = raw[8] | raw[9] << 8
        self.flags = int.from_bytes(raw[12:16], "little")
        self.timed = self.version >= 3 and bool(self.flags & HF_TIMED)
        # events: (thread, kind, type, size, trace, ns); a realloc is one
        # event of type OP_REALLOC with the new block's size.
        self.events = []
        self.thread_times = []  # (thread, wall_ns, cpu_ns)
        self.lost = []  # (from_ms, to_ms, events): what the recorder dropped
        # HEAPINFO: the allocator's samples, every field as a list (the
        # main heap's range appended as its 12th and 13th fields, 0 when absent).
        self.heapinfo = []
        # LAYOUT: dicts of a heap's layout (heap 0: the main heap; 1: the
        # thread arenas' heaps), entries as
        # (trace, held_pages, blocks, pages_alone); "at_event" is how many
        # events came before it.
        self.layouts = []
        self.end = None  # (how, runtime_ms, cpu_user_ns, cpu_sys_ns)
        # REACH: dicts of the reachability scan (REACH_FIELDS), and its
        # REACH_TRACE records (REACH_TRACE_FIELDS), in file order.
        self.reach = []
        self.reach_traces = []
        self.sample_rate = 0
        self.events_bytes = []  # every EVENTS payload, as written
        self._infos = [None]
        self._latest = {}
        self._thread = 0
        i = 16
        while i < len(raw):
            tag = raw[i]
            n, j = varint(raw, i + 1)
            payload = raw[j:j + n]
            i = j + n
            if tag == TAG_EVENTS:
                self.events_bytes.append(payload)
                if events:
                    self._block(payload)
            elif tag == TAG_THREAD_TIMES:
                t, k = varint(payload, 0)
                w, k = varint(payload, k)
                c, k = varint(payload, k)
                self.thread_times.append((t, w, c))
            elif tag == TAG_LOST:
                f, k = varint(payload, 0)
                t, k = varint(payload, k)
                e, k = varint(payload, k)
                self.lost.append((f, t, e))
            elif tag == TAG_HEAPINFO:
                vals, k = [], 0
                while k < len(payload):
                    v, k = varint(payload, k)
                    vals.append(v)
                self.heapinfo.append(vals + [0] * (13 - len(vals)))
            elif tag == TAG_LAYOUT:
                self.layouts.append(self._layout(payload))
            elif tag in (TAG_REACH, TAG_REACH_TRACE):
                names = REACH_FIELDS if tag == TAG_REACH else REACH_TRACE_FIELDS
                rec, k = {}, 0
                for name in names:
                    rec[name], k = varint(payload, k) if k < len(payload) else (0, k)
                (self.reach if tag == TAG_REACH else self.reach_traces).append(rec)
            elif tag == TAG_END:
                vals, k = [], 0
                while k < len(payload):
                    v, k = varint(payload, k)
                    vals.append(v)
                vals += [0] * (5 - len(vals))
                self.end = (vals[0], vals[2], vals[3], vals[4])
            elif tag == TAG_PROCESS:
                k = 0
                for _ in range(3):
                    _, k = varint(payload, k)
                self.sample_rate, k = varint(payload, k)

    def _layout(self, p):
        names = ("page", "heap_bytes", "live_bytes", "live_blocks", "free_pages", "top_end", "top_trace",
                 "top_size", "top_held_pages", "ntraces", "cost_ns", "n")
        lay, k = {"at_event": len(self.events)}, 0
        for name in names:
            lay[name], k = varint(p, k)
        if lay["n"] > 16:
            raise ValueError("LAYOUT: more than 16 entries")
        lay["entries"] = []
        for _ in range(lay["n"]):
            e = []
            for _ in range(4):
                v, k = varint(p, k)
                e.append(v)
            lay["entries"].append(tuple(e))
        # Appended: the heaps laid out (0 main, 1 the thread arenas') and how many.
        lay["heap"], lay["heaps"] = 0, 1
        if k < len(p):
            lay["heap"], k = varint(p, k)
        if k < len(p):
            lay["heaps"], k = varint(p, k)
        # Appended: the heaps' tops (trace, size, held pages, free pages, live blocks).
        lay["tops"] = []
        if k < len(p):
            n, k = varint(p, k)
            if n > 16:
                raise ValueError("LAYOUT: more than 16 heap tops")
            for _ in range(n):
                t = []
                for _ in range(5):
                    v, k = varint(p, k)
                    t.append(v)
                lay["tops"].append(tuple(t))
        return lay

    def _block(self, p):
        ncols = 5 if self.timed else 4
        lens, k = [], 0
        for _ in range(ncols):
            v, k = varint(p, k)
            lens.append(v)
        cols = []
        for n in lens:
            cols.append([p, k, k + n])
            k += n
        cols.append([p, k, len(p)])  # the last column: the rest
        if not self.timed:
            cols.append([p, len(p), len(p)])  # no time column
        ops, info, size, trace, thread, time = cols
        coded = None
        if self.timed and self.version >= 4:
            coding = p[time[1]]
            time[1] += 1
            if coding == 1:
                coded = iter(huffman_times(p, time[1], time[2]))
                time[1] = time[2]
            elif coding != 0:
                raise ValueError("time column: unknown coding %d" % coding)

        def get(col):
            v, col[1] = varint(col[0], col[1])
            return v

        for o in range(ops[1], ops[2]):
            h = p[o]
            op, kind = h >> 4, h & 15
            typ, new, temp = op >> 2, op & 2, op & 1
            if typ == OP_THREAD:
                self._thread = get(thread)
                continue
            if typ in (OP_FREE, OP_REALLOC):
                old = self._latest.get(self._thread) if temp else get(info)
                freed = self._infos[old]
            if typ in (OP_ALLOC, OP_REALLOC):
                if new:
                    self._infos.append((get(size), get(trace)))
                    inf = len(self._infos) - 1
                else:
                    inf = get(info)
                self._latest[self._thread] = inf
                sz, tr = self._infos[inf]
            else:
                self._latest[self._thread] = None
                sz, tr = freed
            ns = (next(coded) if coded else get(time)) if self.timed else 0
            self.events.append((self._thread, kind, typ, sz, tr, ns))
        ops[1] = ops[2]
        if coded is not None and next(coded, None) is not None:
            raise ValueError("time column: more times than events")
        for c in cols:
            if c[1] != c[2]:
                raise ValueError("a column has bytes left at the end of its block")
