// SPDX-License-Identifier: MIT
/* Encode and decode single file records into caller buffers. No allocation,
 * no zstd: the recorder links this file. Every record is
 * tag u8, payload length varint, payload; decoders ignore payload bytes past
 * the fields they know, so later versions may append fields. Allocation
 * events are not records of their own: events.c packs them into blocks. */
#include "memfmt.h"
#include "memfmt_internal.h"

/* ---- encoding ---- */

struct out {
    uint8_t *p, *end;
    int overflow;
};

static void put_u(struct out *o, uint64_t v)
{
    if (o->end - o->p < MEMFMT_VARINT_MAX) {
        o->overflow = 1;
        return;
    }
    o->p += memfmt_put_varint(o->p, v);
}

static void put_bytes(struct out *o, const void *src, uint32_t n)
{
    put_u(o, n);
    if (o->overflow || (size_t)(o->end - o->p) < n) {
        o->overflow = 1;
        return;
    }
    if (n) {
        memcpy(o->p, src, n);
    }
    o->p += n;
}

static uint64_t zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static void put_payload(struct out *o, const struct memfmt_record *r)
{
    switch (r->tag) {
    case MEMFMT_REC_PROCESS:
        put_u(o, r->u.process.pid);
        put_u(o, r->u.process.ppid);
        put_u(o, r->u.process.start_unix_ns);
        put_u(o, r->u.process.sample_rate);
        put_bytes(o, r->u.process.exe, r->u.process.exe_len);
        put_bytes(o, r->u.process.cmdline, r->u.process.cmdline_len);
        break;
    case MEMFMT_REC_MODULE:
        put_u(o, r->u.module.id);
        put_u(o, r->u.module.bias);
        put_bytes(o, r->u.module.path, r->u.module.path_len);
        put_bytes(o, r->u.module.build_id, r->u.module.build_id_len);
        put_u(o, r->u.module.nsegments);
        for (uint32_t i = 0; i < r->u.module.nsegments && i < MEMFMT_MAX_SEGMENTS; i++) {
            put_u(o, r->u.module.segments[i].vaddr);
            put_u(o, r->u.module.segments[i].memsz);
            put_u(o, r->u.module.segments[i].flags);
        }
        put_u(o, r->u.module.flags);
        break;
    case MEMFMT_REC_UNMODULE: put_u(o, r->u.unmodule.id); break;
    case MEMFMT_REC_THREAD:
        put_u(o, r->u.thread.index);
        put_u(o, r->u.thread.tid);
        break;
    case MEMFMT_REC_NODE:
        put_u(o, r->u.node.parent);
        put_u(o, r->u.node.ip);
        break;
    case MEMFMT_REC_TIME: put_u(o, r->u.time.ms); break;
    case MEMFMT_REC_RSS: put_u(o, r->u.rss.bytes); break;
    case MEMFMT_REC_END:
        put_u(o, r->u.end.how);
        put_u(o, zigzag(r->u.end.value));
        put_u(o, r->u.end.runtime_ms);
        put_u(o, r->u.end.cpu_user_ns);
        put_u(o, r->u.end.cpu_sys_ns);
        break;
    case MEMFMT_REC_STATS:
        put_u(o, r->u.stats.lost_events);
        put_u(o, r->u.stats.unmatched_frees);
        put_u(o, r->u.stats.startup_calls);
        put_u(o, r->u.stats.startup_bytes);
        break;
    case MEMFMT_REC_LOST:
        put_u(o, r->u.lost.from_ms);
        put_u(o, r->u.lost.to_ms);
        put_u(o, r->u.lost.events);
        break;
    case MEMFMT_REC_COUNTS:
        put_u(o, r->u.counts.thread);
        put_u(o, r->u.counts.calls);
        put_u(o, r->u.counts.bytes);
        break;
    case MEMFMT_REC_BASELINE:
        put_u(o, r->u.baseline.in_use);
        put_u(o, r->u.baseline.arena);
        break;
    case MEMFMT_REC_HEAPINFO:
        put_u(o, r->u.heapinfo.arena);
        put_u(o, r->u.heapinfo.ordblks);
        put_u(o, r->u.heapinfo.smblks);
        put_u(o, r->u.heapinfo.fordblks);
        put_u(o, r->u.heapinfo.fsmblks);
        put_u(o, r->u.heapinfo.uordblks);
        put_u(o, r->u.heapinfo.keepcost);
        put_u(o, r->u.heapinfo.hblks);
        put_u(o, r->u.heapinfo.hblkhd);
        put_u(o, r->u.heapinfo.cost_ns);
        put_u(o, r->u.heapinfo.wall_ns);
        put_u(o, r->u.heapinfo.brk_start);
        put_u(o, r->u.heapinfo.brk_end);
        break;
    case MEMFMT_REC_LAYOUT:
        put_u(o, r->u.layout.page);
        put_u(o, r->u.layout.heap_bytes);
        put_u(o, r->u.layout.live_bytes);
        put_u(o, r->u.layout.live_blocks);
        put_u(o, r->u.layout.free_pages);
        put_u(o, r->u.layout.top_end);
        put_u(o, r->u.layout.top_trace);
        put_u(o, r->u.layout.top_size);
        put_u(o, r->u.layout.top_held_pages);
        put_u(o, r->u.layout.ntraces);
        put_u(o, r->u.layout.cost_ns);
        put_u(o, r->u.layout.n < MEMFMT_MAX_LAYOUT ? r->u.layout.n : MEMFMT_MAX_LAYOUT);
        for (uint32_t i = 0; i < r->u.layout.n && i < MEMFMT_MAX_LAYOUT; i++) {
            put_u(o, r->u.layout.e[i].trace);
            put_u(o, r->u.layout.e[i].held_pages);
            put_u(o, r->u.layout.e[i].blocks);
            put_u(o, r->u.layout.e[i].pages_alone);
        }
        put_u(o, r->u.layout.heap);
        put_u(o, r->u.layout.heaps);
        put_u(o, r->u.layout.ntops < MEMFMT_MAX_LAYOUT ? r->u.layout.ntops : MEMFMT_MAX_LAYOUT);
        for (uint32_t i = 0; i < r->u.layout.ntops && i < MEMFMT_MAX_LAYOUT; i++) {
            put_u(o, r->u.layout.tops[i].trace);
            put_u(o, r->u.layout.tops[i].size);
            put_u(o, r->u.layout.tops[i].held_pages);
            put_u(o, r->u.layout.tops[i].free_pages);
            put_u(o, r->u.layout.tops[i].live_blocks);
        }
        break;
    case MEMFMT_REC_REACH:
        put_u(o, r->u.reach.status);
        put_u(o, r->u.reach.reachable_bytes);
        put_u(o, r->u.reach.reachable_blocks);
        put_u(o, r->u.reach.possible_bytes);
        put_u(o, r->u.reach.possible_blocks);
        put_u(o, r->u.reach.unreachable_bytes);
        put_u(o, r->u.reach.unreachable_blocks);
        put_u(o, r->u.reach.indirect_bytes);
        put_u(o, r->u.reach.indirect_blocks);
        put_u(o, r->u.reach.root_bytes);
        put_u(o, r->u.reach.threads);
        put_u(o, r->u.reach.stopped_ns);
        put_u(o, r->u.reach.cost_ns);
        break;
    case MEMFMT_REC_REACH_TRACE:
        put_u(o, r->u.reach_trace.trace);
        put_u(o, r->u.reach_trace.unreachable_bytes);
        put_u(o, r->u.reach_trace.unreachable_blocks);
        put_u(o, r->u.reach_trace.indirect_bytes);
        put_u(o, r->u.reach_trace.indirect_blocks);
        put_u(o, r->u.reach_trace.possible_bytes);
        put_u(o, r->u.reach_trace.possible_blocks);
        break;
    case MEMFMT_REC_MAP:
        put_u(o, r->u.map.thread);
        put_u(o, r->u.map.kind);
        put_u(o, r->u.map.trace);
        put_u(o, zigzag(r->u.map.delta));
        put_u(o, r->u.map.call);
        break;
    case MEMFMT_REC_THREAD_TIMES:
        put_u(o, r->u.thread_times.thread);
        put_u(o, r->u.thread_times.wall_ns);
        put_u(o, r->u.thread_times.cpu_ns);
        break;
    case MEMFMT_REC_PACK_STRING: put_bytes(o, r->u.pack_string.str, r->u.pack_string.len); break;
    case MEMFMT_REC_PACK_FRAMES:
        put_u(o, r->u.pack_frames.module);
        put_u(o, r->u.pack_frames.offset);
        put_u(o, r->u.pack_frames.nframes);
        for (uint32_t i = 0; i < r->u.pack_frames.nframes && i < MEMFMT_MAX_PACK_FRAMES; i++) {
            put_u(o, r->u.pack_frames.frames[i].function);
            put_u(o, r->u.pack_frames.frames[i].file);
            put_u(o, r->u.pack_frames.frames[i].line);
            put_u(o, r->u.pack_frames.frames[i].flags);
        }
        break;
    default: break;
    }
}

int memfmt_encode(const struct memfmt_record *rec, uint8_t *buf, size_t cap)
{
    if (rec->tag >= MEMFMT_REC_ALLOC || rec->tag == MEMFMT_REC_EVENTS || rec->tag == 0) {
        return MEMFMT_E_INVALID;
    }
    /* Reserve one length byte, which covers the hot records; move the
     * payload when its length needs more. */
    if (cap < 2) {
        return MEMFMT_E_TOOBIG;
    }
    struct out o = {buf + 2, buf + cap, 0};
    put_payload(&o, rec);
    if (o.overflow) {
        return MEMFMT_E_TOOBIG;
    }
    size_t len = (size_t)(o.p - (buf + 2));
    if (len > MEMFMT_MAX_RECORD) {
        return MEMFMT_E_TOOBIG;
    }
    uint8_t lenbuf[MEMFMT_VARINT_MAX];
    size_t ln = memfmt_put_varint(lenbuf, len);
    if (1 + ln + len > cap) {
        return MEMFMT_E_TOOBIG;
    }
    if (ln != 1) {
        memmove(buf + 1 + ln, buf + 2, len);
    }
    buf[0] = (uint8_t)rec->tag;
    memcpy(buf + 1, lenbuf, ln);
    return (int)(1 + ln + len);
}

/* ---- decoding ---- */

struct in {
    const uint8_t *p, *end;
    int rc;
};

static uint64_t get_u(struct in *in)
{
    uint64_t v = 0;
    if (in->rc == 0) {
        int rc = memfmt_get_varint(&in->p, in->end, &v);
        if (rc < 0) {
            /* Inside a complete payload, running out is corruption. */
            in->rc = MEMFMT_E_CORRUPT;
            v = 0;
        }
    }
    return v;
}

/* A field appended in a later version: absent (0) where the payload ends
 * before it, as in files written before it existed. */
static uint64_t get_u_appended(struct in *in)
{
    return in->p < in->end ? get_u(in) : 0;
}

static uint32_t get_u32(struct in *in)
{
    uint64_t v = get_u(in);
    if (v > UINT32_MAX) {
        in->rc = MEMFMT_E_CORRUPT;
        return 0;
    }
    return (uint32_t)v;
}

static const uint8_t *get_bytes(struct in *in, uint32_t *n)
{
    *n = get_u32(in);
    if (in->rc != 0 || (size_t)(in->end - in->p) < *n) {
        in->rc = MEMFMT_E_CORRUPT;
        *n = 0;
        return NULL;
    }
    const uint8_t *s = in->p;
    in->p += *n;
    return s;
}

static void get_payload(struct in *in, struct memfmt_record *r)
{
    switch (r->tag) {
    case MEMFMT_REC_PROCESS:
        r->u.process.pid = get_u32(in);
        r->u.process.ppid = get_u32(in);
        r->u.process.start_unix_ns = get_u(in);
        r->u.process.sample_rate = get_u(in);
        r->u.process.exe = (const char *)get_bytes(in, &r->u.process.exe_len);
        r->u.process.cmdline = (const char *)get_bytes(in, &r->u.process.cmdline_len);
        break;
    case MEMFMT_REC_MODULE:
        r->u.module.id = get_u32(in);
        r->u.module.bias = get_u(in);
        r->u.module.path = (const char *)get_bytes(in, &r->u.module.path_len);
        r->u.module.build_id = get_bytes(in, &r->u.module.build_id_len);
        r->u.module.nsegments = get_u32(in);
        if (r->u.module.nsegments > MEMFMT_MAX_SEGMENTS) {
            in->rc = MEMFMT_E_CORRUPT;
            r->u.module.nsegments = 0;
        }
        for (uint32_t i = 0; i < r->u.module.nsegments; i++) {
            r->u.module.segments[i].vaddr = get_u(in);
            r->u.module.segments[i].memsz = get_u(in);
            r->u.module.segments[i].flags = get_u32(in);
        }
        r->u.module.flags = (uint32_t)get_u_appended(in);
        break;
    case MEMFMT_REC_UNMODULE: r->u.unmodule.id = get_u32(in); break;
    case MEMFMT_REC_THREAD:
        r->u.thread.index = get_u32(in);
        r->u.thread.tid = get_u32(in);
        if (r->u.thread.index >= MEMFMT_MAX_THREADS) {
            in->rc = MEMFMT_E_CORRUPT;
        }
        break;
    case MEMFMT_REC_NODE:
        r->u.node.parent = get_u32(in);
        r->u.node.ip = get_u(in);
        break;
    case MEMFMT_REC_TIME: r->u.time.ms = get_u(in); break;
    case MEMFMT_REC_RSS: r->u.rss.bytes = get_u(in); break;
    case MEMFMT_REC_END:
        r->u.end.how = get_u32(in);
        r->u.end.value = (int32_t)unzigzag(get_u(in));
        r->u.end.runtime_ms = get_u(in);
        r->u.end.cpu_user_ns = get_u_appended(in);
        r->u.end.cpu_sys_ns = get_u_appended(in);
        break;
    case MEMFMT_REC_STATS:
        r->u.stats.lost_events = get_u(in);
        r->u.stats.unmatched_frees = get_u(in);
        r->u.stats.startup_calls = get_u_appended(in);
        r->u.stats.startup_bytes = get_u_appended(in);
        break;
    case MEMFMT_REC_LOST:
        r->u.lost.from_ms = get_u(in);
        r->u.lost.to_ms = get_u(in);
        r->u.lost.events = get_u(in);
        if (r->u.lost.to_ms < r->u.lost.from_ms) {
            in->rc = MEMFMT_E_CORRUPT;
        }
        break;
    case MEMFMT_REC_COUNTS:
        r->u.counts.thread = get_u32(in);
        r->u.counts.calls = get_u(in);
        r->u.counts.bytes = get_u(in);
        if (r->u.counts.thread >= MEMFMT_MAX_THREADS) {
            in->rc = MEMFMT_E_CORRUPT;
        }
        break;
    case MEMFMT_REC_BASELINE:
        r->u.baseline.in_use = get_u(in);
        r->u.baseline.arena = get_u(in);
        break;
    case MEMFMT_REC_HEAPINFO:
        r->u.heapinfo.arena = get_u(in);
        r->u.heapinfo.ordblks = get_u(in);
        r->u.heapinfo.smblks = get_u(in);
        r->u.heapinfo.fordblks = get_u(in);
        r->u.heapinfo.fsmblks = get_u(in);
        r->u.heapinfo.uordblks = get_u(in);
        r->u.heapinfo.keepcost = get_u(in);
        r->u.heapinfo.hblks = get_u(in);
        r->u.heapinfo.hblkhd = get_u(in);
        r->u.heapinfo.cost_ns = get_u(in);
        r->u.heapinfo.wall_ns = get_u(in);
        r->u.heapinfo.brk_start = get_u_appended(in);
        r->u.heapinfo.brk_end = get_u_appended(in);
        break;
    case MEMFMT_REC_LAYOUT:
        r->u.layout.page = get_u(in);
        r->u.layout.heap_bytes = get_u(in);
        r->u.layout.live_bytes = get_u(in);
        r->u.layout.live_blocks = get_u(in);
        r->u.layout.free_pages = get_u(in);
        r->u.layout.top_end = get_u(in);
        r->u.layout.top_trace = get_u32(in);
        r->u.layout.top_size = get_u(in);
        r->u.layout.top_held_pages = get_u(in);
        r->u.layout.ntraces = get_u(in);
        r->u.layout.cost_ns = get_u(in);
        r->u.layout.n = get_u32(in);
        /* A page is a power of two of at most 1 GiB; the entries fit the record. */
        if (r->u.layout.n > MEMFMT_MAX_LAYOUT || r->u.layout.page == 0 || r->u.layout.page > (1u << 30) ||
            (r->u.layout.page & (r->u.layout.page - 1)) != 0) {
            in->rc = MEMFMT_E_CORRUPT;
            r->u.layout.n = 0;
        }
        for (uint32_t i = 0; i < r->u.layout.n; i++) {
            r->u.layout.e[i].trace = get_u32(in);
            r->u.layout.e[i].held_pages = get_u(in);
            r->u.layout.e[i].blocks = get_u(in);
            r->u.layout.e[i].pages_alone = get_u(in);
        }
        /* Appended: a record without them lays out the main heap. */
        uint64_t heap = get_u_appended(in);
        r->u.layout.heap = heap > UINT32_MAX ? UINT32_MAX : (uint32_t)heap;
        r->u.layout.heaps = in->p < in->end ? get_u(in) : 1;
        uint64_t ntops = get_u_appended(in);
        if (ntops > MEMFMT_MAX_LAYOUT) {
            in->rc = MEMFMT_E_CORRUPT;
            ntops = 0;
        }
        r->u.layout.ntops = (uint32_t)ntops;
        for (uint32_t i = 0; i < r->u.layout.ntops; i++) {
            r->u.layout.tops[i].trace = get_u32(in);
            r->u.layout.tops[i].size = get_u(in);
            r->u.layout.tops[i].held_pages = get_u(in);
            r->u.layout.tops[i].free_pages = get_u(in);
            r->u.layout.tops[i].live_blocks = get_u(in);
        }
        break;
    case MEMFMT_REC_REACH:
        r->u.reach.status = get_u32(in);
        r->u.reach.reachable_bytes = get_u(in);
        r->u.reach.reachable_blocks = get_u(in);
        r->u.reach.possible_bytes = get_u(in);
        r->u.reach.possible_blocks = get_u(in);
        r->u.reach.unreachable_bytes = get_u(in);
        r->u.reach.unreachable_blocks = get_u(in);
        r->u.reach.indirect_bytes = get_u(in);
        r->u.reach.indirect_blocks = get_u(in);
        r->u.reach.root_bytes = get_u(in);
        r->u.reach.threads = get_u(in);
        r->u.reach.stopped_ns = get_u(in);
        r->u.reach.cost_ns = get_u(in);
        /* The parts are within their wholes; a status from a later version
         * is taken as "not classified". */
        if (r->u.reach.possible_bytes > r->u.reach.reachable_bytes ||
            r->u.reach.possible_blocks > r->u.reach.reachable_blocks ||
            r->u.reach.indirect_bytes > r->u.reach.unreachable_bytes ||
            r->u.reach.indirect_blocks > r->u.reach.unreachable_blocks) {
            in->rc = MEMFMT_E_CORRUPT;
        }
        break;
    case MEMFMT_REC_REACH_TRACE:
        r->u.reach_trace.trace = get_u32(in);
        r->u.reach_trace.unreachable_bytes = get_u(in);
        r->u.reach_trace.unreachable_blocks = get_u(in);
        r->u.reach_trace.indirect_bytes = get_u(in);
        r->u.reach_trace.indirect_blocks = get_u(in);
        r->u.reach_trace.possible_bytes = get_u(in);
        r->u.reach_trace.possible_blocks = get_u(in);
        if (r->u.reach_trace.indirect_bytes > r->u.reach_trace.unreachable_bytes ||
            r->u.reach_trace.indirect_blocks > r->u.reach_trace.unreachable_blocks) {
            in->rc = MEMFMT_E_CORRUPT;
        }
        break;
    case MEMFMT_REC_MAP:
        r->u.map.thread = get_u32(in);
        r->u.map.kind = get_u32(in);
        r->u.map.trace = get_u32(in);
        r->u.map.delta = unzigzag(get_u(in));
        r->u.map.call = get_u32(in);
        if (r->u.map.thread >= MEMFMT_MAX_THREADS || r->u.map.kind >= MEMFMT_MK_COUNT || r->u.map.call > 1) {
            in->rc = MEMFMT_E_CORRUPT;
        }
        break;
    case MEMFMT_REC_THREAD_TIMES:
        r->u.thread_times.thread = get_u32(in);
        r->u.thread_times.wall_ns = get_u(in);
        r->u.thread_times.cpu_ns = get_u(in);
        if (r->u.thread_times.thread >= MEMFMT_MAX_THREADS) {
            in->rc = MEMFMT_E_CORRUPT;
        }
        break;
    case MEMFMT_REC_PACK_STRING: r->u.pack_string.str = (const char *)get_bytes(in, &r->u.pack_string.len); break;
    case MEMFMT_REC_PACK_FRAMES:
        r->u.pack_frames.module = get_u32(in);
        r->u.pack_frames.offset = get_u(in);
        r->u.pack_frames.nframes = get_u32(in);
        if (r->u.pack_frames.nframes == 0 || r->u.pack_frames.nframes > MEMFMT_MAX_PACK_FRAMES) {
            in->rc = MEMFMT_E_CORRUPT;
            r->u.pack_frames.nframes = 0;
        }
        for (uint32_t i = 0; i < r->u.pack_frames.nframes; i++) {
            r->u.pack_frames.frames[i].function = get_u32(in);
            r->u.pack_frames.frames[i].file = get_u32(in);
            r->u.pack_frames.frames[i].line = get_u32(in);
            r->u.pack_frames.frames[i].flags = get_u32(in);
        }
        break;
    default: break;
    }
}

int memfmt_decode(const uint8_t *buf, size_t len, struct memfmt_record *rec)
{
    if (len < 1) {
        return MEMFMT_E_TRUNCATED;
    }
    const uint8_t *p = buf + 1;
    const uint8_t *end = buf + len;
    uint64_t plen;
    int rc = memfmt_get_varint(&p, end, &plen);
    if (rc < 0) {
        return rc;
    }
    if (plen > MEMFMT_MAX_RECORD) {
        return MEMFMT_E_TOOBIG;
    }
    if ((uint64_t)(end - p) < plen) {
        return MEMFMT_E_TRUNCATED;
    }
    if (buf[0] == 0) {
        return MEMFMT_E_CORRUPT;
    }
    rec->tag = buf[0];
    struct in in = {p, p + plen, 0};
    get_payload(&in, rec);
    if (in.rc < 0) {
        return in.rc;
    }
    return (int)((p - buf) + (ptrdiff_t)plen);
}
