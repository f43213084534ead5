// SPDX-License-Identifier: MIT
/* What the files of the merge share (merge.h is the contract): the queued
 * events, the streams, the merge's state, the declarations of one file's
 * functions another calls, and the small functions of the hot path,
 * static inline here as they were static in one file before: output, the
 * pair hash and the block functions. What gcc did not inline then (push,
 * info_id) is not inline now either: memrec's CPU time on churn stays
 * within 2% of the one-file merge. Only recorder/merge/ includes it. */
#ifndef MERGE_INTERNAL_H
#define MERGE_INTERNAL_H

#include <stdlib.h>
#include <string.h>

#include "accounting.h"
#include "mapranges.h"
#include "memfmt.h"
#include "startup.h"
#include "poolmap.h"
#include "u64map.h"
#include "util.h"

/* Q_P*: pool events of memrec.h; their pool id travels in old_block. */
enum qtype {
    Q_ALLOC,
    Q_FREE,
    Q_RFREE,
    Q_RALLOC,
    Q_RECORD,
    Q_PALLOC,
    Q_PFREE,
    Q_PRESET,
    Q_MAP,
    Q_UNMAP,
    Q_MREMAP_OLD,
    Q_MREMAP_NEW,
    Q_BRK
};

/* A queued event, 40 bytes: every event passes through a queue. */
struct qev {
    uint64_t seq;
    uint64_t size; /* Q_RECORD: the length of rec */
    union {
        uint64_t addr;
        uint8_t *rec; /* Q_RECORD: owned copy */
    };
    uint32_t trace; /* file node id */
    uint32_t old_block; /* Q_RALLOC: the old block's info; Q_P*: the pool id */
    uint8_t type;
    uint8_t kind;
    uint8_t has_old; /* Q_RALLOC: enum old_block, what the free part found */
    uint8_t old_latest; /* Q_RALLOC: the old block was its thread's latest allocation */
    uint32_t ticks; /* memrec --time: the call's time in the allocator (a realloc's: on Q_RALLOC), saturated */
};

enum old_block { OLD_NONE, OLD_FOUND, OLD_SET_APART };

/* The value addr_block holds for a block set apart as allocator start-up
 * (startup.h): its free is dropped without a word. */
#define BLOCK_SET_APART UINT64_MAX

struct stream {
    int used;
    int active; /* listed in merge.active */
    int ended; /* BYE seen: free the thread index once drained */
    uint64_t tid;
    uint32_t thread; /* file thread index */
    uint32_t *nodes; /* local node id -> file node id */
    size_t nnodes, nodes_cap;
    struct qev *q; /* pending events, [head, len) */
    size_t head, len, cap;
    uint64_t remap_bytes; /* Q_MREMAP_OLD took these bytes of remap_trace; Q_MREMAP_NEW follows */
    uint32_t remap_trace;
};

/* What memrec knows of a live block fits in the address map's value: its
 * (size, trace) pair and the thread that allocated it. A free then costs
 * one look-up in the map and one in the (smaller) table of pairs, and
 * nothing grows with the live blocks but the map. */
#define BLOCK_THREAD_BITS 24

static inline uint64_t block_pack(uint32_t info, uint32_t thread)
{
    return (uint64_t)info << BLOCK_THREAD_BITS | thread;
}

static inline uint32_t block_info(uint64_t b)
{
    return (uint32_t)(b >> BLOCK_THREAD_BITS);
}

static inline uint32_t block_thread(uint64_t b)
{
    return (uint32_t)(b & ((1u << BLOCK_THREAD_BITS) - 1));
}

/* A thread's latest allocation, while it is its latest event: the block
 * at (pool, addr) (pool 0: the heap) is a temporary if this thread frees
 * it next. Its size and trace are kept too: most frees of a temporary then
 * need no look-up of its pair, whose cell is far less likely cached than
 * this one. */
struct latest {
    uint64_t addr;
    uint64_t size;
    uint32_t pool;
    uint32_t trace;
    uint32_t set;
};

/* A (size, trace) pair of the file's EVENTS blocks, by its info id. */
struct pair_info {
    uint64_t size;
    uint32_t trace;
};

struct merge {
    memfmt_writer *w;
    struct accounting *acct;
    uint64_t start_ms;
    uint64_t last_ms;
    struct stream *streams;
    size_t nstreams_cap;
    struct u64map addr_block; /* live block address -> block_pack() */
    struct poolmap *pools; /* live pool blocks, by (pool, address) -> block_pack() */
    struct latest *latest; /* per thread index */
    size_t latest_cap;
    struct info_cell *info_table; /* (size, trace) -> info id, see info_id() */
    size_t info_table_cap;
    struct pair_info *infos; /* per info id */
    size_t ninfos, infos_cap;
    struct u64map node_ids; /* hash(parent, ip) chain head -> see node_find */
    uint64_t *node_ip;
    uint32_t *node_parent;
    size_t nnodes, nodes_cap;
    struct u64map tid_thread; /* live tid -> thread index */
    uint32_t next_thread;
    uint32_t *free_threads; /* indexes of threads that ended, for reuse */
    size_t nfree_threads, free_threads_cap;
    uint32_t *active; /* streams with queued events or waiting to retire */
    size_t nactive, active_cap;
    struct merge_stats st;
    struct startup *startup; /* allocations set apart as preloaded libraries' start-up */
    int failed;
    /* Process images (exec): module ids restart in each image, so the file
     * numbers them from module_base on; the live ones are unloaded when the
     * image ends. */
    uint32_t images;
    uint32_t module_base, module_top;
    uint32_t *live_modules;
    size_t nlive_modules, live_modules_cap;
    struct mapranges maps; /* anonymous ranges the program mapped directly */
    uint64_t tick_mult; /* memrec --time: ns per tick of the recorder's clock, times 2^TICK_SHIFT (merge_set_clock) */
    uint64_t cpu_user_ns, cpu_sys_ns; /* for END (merge_set_cpu) */
    struct thread_clock *thr; /* per thread index: its lifetime (THREAD_TIMES) */
    size_t thr_cap;
    /* layout.c: glibc's main heap as the latest HEAPINFO said it (0: not
     * known), when the next layout may be made, and how many were. */
    uint64_t heap_start, heap_end;
    uint64_t layout_next_ns;
    uint64_t layouts;
    int layout_sampled; /* the image is sampled: its layout is not known */
    uint64_t hblks; /* the latest sample's count of chunks mapped on their own */
};

/* What the merge knows of a live thread's times, for THREAD_TIMES. */
struct thread_clock {
    uint64_t born_ns; /* CLOCK_MONOTONIC of its first event (HELLO); 0: not known */
    uint64_t wall_ns, cpu_ns; /* as the thread said when it ended (W_TIMES) */
    int has_times;
};

/* ns per tick is kept in fixed point: an integer multiply per event, not
 * a conversion to double and back. 24 bits of fraction are 6e-8 of a tick. */
#define TICK_SHIFT 24

/* An event's time in ns, from the recorder's ticks. */
static inline uint64_t tick_ns(const struct merge *m, uint32_t ticks)
{
    return (uint64_t)(((unsigned __int128)ticks * m->tick_mult + (1u << (TICK_SHIFT - 1))) >> TICK_SHIFT);
}

/* The id of a (size, trace) pair; new pairs get the next id. */
/* The (size, trace) pairs: an open-addressing table of 16-byte cells that
 * compare the pair directly, so a lookup is usually one cache line. */
struct info_cell {
    uint64_t size;
    uint32_t trace;
    uint32_t id; /* 0 = empty */
};

/* ---- output ---- */

static inline int out(struct merge *m, const struct memfmt_record *r)
{
    if (m->failed) {
        return m->failed;
    }
    int rc = memfmt_write(m->w, r);
    if (rc < 0) {
        m->failed = rc;
        return rc;
    }
    accounting_feed(m->acct, r);
    return 0;
}

/* ---- the (size, trace) pairs and the blocks ---- */

static inline uint64_t pair_hash(uint64_t size, uint32_t trace)
{
    return u64map_mix(size * 0x9E3779B97F4A7C15ull ^ ((uint64_t)trace << 17) ^ trace);
}

/* ---- pairs.c ---- */

/** Release the pair table. */
void info_table_free(struct merge *m);
/** The id of a (size, trace) pair; new pairs get the next id. */
uint32_t info_id(struct merge *m, uint64_t size, uint32_t trace);

/* A block is a temporary when its free is the allocating thread's very
 * next event (an allocation or a free of a recorded block). */
static inline struct latest *latest_of(struct merge *m, uint32_t thread)
{
    if (thread >= m->latest_cap) {
        xgrow((void **)&m->latest, &m->latest_cap, (size_t)thread + 1, sizeof *m->latest);
    }
    return &m->latest[thread];
}

/* A new block at (pool, addr): its value for the map. */
static inline uint64_t block_new(struct merge *m, uint32_t info, uint32_t thread, uint32_t pool, uint64_t addr,
                                 const struct qev *e)
{
    *latest_of(m, thread) = (struct latest){addr, e->size, pool, e->trace, 1};
    return block_pack(info, thread);
}

/* Whether block b at (pool, addr) is `thread`'s latest allocation. */
static inline int block_is_latest(struct merge *m, uint64_t b, uint32_t thread, uint32_t pool, uint64_t addr)
{
    const struct latest *l = latest_of(m, thread);
    return block_thread(b) == thread && l->set && l->addr == addr && l->pool == pool;
}

/* The thread's free of a block: nothing it allocated before is its latest
 * allocation any more. */
static inline void block_gone(struct merge *m, uint32_t thread)
{
    latest_of(m, thread)->set = 0;
}

/* The size and trace of a block ending: the thread's latest allocation's
 * for a temporary, else its pair's. */
static inline void freed_pair(struct merge *m, uint32_t thread, int temporary, uint32_t info, uint64_t *size,
                              uint32_t *trace)
{
    const struct latest *l = latest_of(m, thread);
    *size = temporary ? l->size : m->infos[info].size;
    *trace = temporary ? l->trace : m->infos[info].trace;
}

static inline int write_free(struct merge *m, uint32_t thread, uint32_t kind, uint64_t b, uint32_t pool, uint64_t addr,
                             uint64_t ns)
{
    /* Not zero-initialized: the record's union is large (module segments)
     * and this runs for every free. */
    struct memfmt_record r;
    r.tag = MEMFMT_REC_FREE;
    r.u.free.thread = thread;
    r.u.free.kind = kind;
    r.u.free.info = block_info(b);
    r.u.free.temporary = block_is_latest(m, b, thread, pool, addr);
    r.u.free.ns = ns;
    freed_pair(m, thread, r.u.free.temporary, r.u.free.info, &r.u.free.size, &r.u.free.trace);
    block_gone(m, thread);
    return out(m, &r);
}

/* ---- queue.c: the per-stream queues ---- */

/** The stream `id`, made if new. */
struct stream *stream_get(struct merge *m, uint32_t id);
/** List the stream among those with something to do. */
void activate(struct merge *m, struct stream *s);
/** Queue event e on stream s. */
void push(struct merge *m, struct stream *s, const struct qev *e);

/* ---- mappings.c ---- */

/** Apply a direct-mapping event (Q_MAP, Q_UNMAP, Q_MREMAP_*, Q_BRK). */
int apply_map(struct merge *m, struct stream *s, struct qev *e);

/* ---- thread_clock.c ---- */

/** The thread's times entry, made if new. */
struct thread_clock *thread_clock_of(struct merge *m, uint32_t thread);
/** Write THREAD_TIMES for a thread that ended and forget its times. */
int thread_times_out(struct merge *m, uint32_t thread);

/* ---- layout.c: LAYOUT records ---- */

/** Note what a record of the recorder says for the layouts (PROCESS: sampled or not). */
void layout_note_record(struct merge *m, const struct memfmt_record *r);
/** After a HEAPINFO record: take the heap's range and its count of mapped
 * chunks from it and write the LAYOUT records (the main heap's, then the
 * thread arenas' heaps' when there are any and the count checks out) when
 * the budget allows. Returns 0 or the writer's status. */
int layout_after_heapinfo(struct merge *m, const struct memfmt_record *r);
/** At the end: the last LAYOUT, whatever the budget, when the heap's range is known. */
int layout_final(struct merge *m);

/* ---- order.c ---- */

/** Write every queued event with seq < limit, smallest first. */
int release_until(struct merge *m, uint64_t limit);

#endif
