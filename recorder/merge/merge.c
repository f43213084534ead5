// SPDX-License-Identifier: MIT
/* Orders the recorder's events and writes them as file records (merge.h).
 * Events wait in per-stream queues until a SYNC says every smaller
 * sequence number has arrived; then they are written smallest first. Runs
 * in memrec, outside the target, so it may allocate freely. */
#include "merge.h"

#include <stdlib.h>
#include <string.h>

#include "mapranges.h"
#include "memwire.h"
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

struct info_cell;

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
};

/* ---- set-up ---- */

static void info_table_free(struct merge *m);

struct merge *merge_new(memfmt_writer *w, struct accounting *acct, uint64_t start_ms)
{
    struct merge *m = xcalloc(1, sizeof *m);
    m->w = w;
    m->acct = acct;
    m->start_ms = start_ms;
    m->next_thread = 1;
    m->nnodes = 1; /* id 0 is the root */
    m->startup = startup_new();
    m->pools = poolmap_new();
    return m;
}

void merge_free(struct merge *m)
{
    if (!m) {
        return;
    }
    for (size_t i = 0; i < m->nstreams_cap; i++) {
        struct stream *s = &m->streams[i];
        for (size_t k = s->head; k < s->len; k++) {
            if (s->q[k].type == Q_RECORD) {
                free(s->q[k].rec);
            }
        }
        free(s->q);
        free(s->nodes);
    }
    free(m->streams);
    u64map_release(&m->addr_block);
    poolmap_free(m->pools);
    info_table_free(m);
    free(m->latest);
    free(m->infos);
    u64map_release(&m->node_ids);
    u64map_release(&m->tid_thread);
    free(m->free_threads);
    free(m->active);
    free(m->node_ip);
    free(m->node_parent);
    free(m->live_modules);
    startup_free(m->startup);
    mapranges_release(&m->maps);
    free(m);
}

const struct merge_stats *merge_stats(const struct merge *m)
{
    return &m->st;
}

/* ---- output ---- */

static int out(struct merge *m, const struct memfmt_record *r)
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

/* The id of a (size, trace) pair; new pairs get the next id. */
/* The (size, trace) pairs: an open-addressing table of 16-byte cells that
 * compare the pair directly, so a lookup is usually one cache line. */
struct info_cell {
    uint64_t size;
    uint32_t trace;
    uint32_t id; /* 0 = empty */
};

static uint64_t pair_hash(uint64_t size, uint32_t trace)
{
    return u64map_mix(size * 0x9E3779B97F4A7C15ull ^ ((uint64_t)trace << 17) ^ trace);
}

static void info_table_free(struct merge *m)
{
    u64map_table_free(m->info_table, m->info_table_cap, sizeof *m->info_table);
}

static void info_table_grow(struct merge *m)
{
    size_t ncap = m->info_table_cap ? m->info_table_cap * 2 : 4096;
    struct info_cell *t = u64map_table_alloc(ncap, sizeof *t);
    for (size_t i = 0; i < m->info_table_cap; i++) {
        struct info_cell *c = &m->info_table[i];
        if (!c->id) {
            continue;
        }
        size_t j = pair_hash(c->size, c->trace) & (ncap - 1);
        while (t[j].id) {
            j = (j + 1) & (ncap - 1);
        }
        t[j] = *c;
    }
    u64map_table_free(m->info_table, m->info_table_cap, sizeof *m->info_table);
    m->info_table = t;
    m->info_table_cap = ncap;
}

/* The id of a (size, trace) pair; new pairs get the next id. */
static uint32_t info_id(struct merge *m, uint64_t size, uint32_t trace)
{
    if ((m->ninfos + 1) * 2 > m->info_table_cap) {
        info_table_grow(m);
    }
    size_t mask = m->info_table_cap - 1;
    size_t j = pair_hash(size, trace) & mask;
    for (;;) {
        struct info_cell *c = &m->info_table[j];
        if (c->id == 0) {
            break;
        }
        if (c->size == size && c->trace == trace) {
            return c->id;
        }
        j = (j + 1) & mask;
    }
    uint32_t id = (uint32_t)++m->ninfos;
    if (id >= m->infos_cap) {
        xgrow((void **)&m->infos, &m->infos_cap, (size_t)id + 1, sizeof *m->infos);
    }
    m->infos[id].size = size;
    m->infos[id].trace = trace;
    m->info_table[j] = (struct info_cell){size, trace, id};
    return id;
}

/* A block is a temporary when its free is the allocating thread's very
 * next event (an allocation or a free of a recorded block). */
static struct latest *latest_of(struct merge *m, uint32_t thread)
{
    if (thread >= m->latest_cap) {
        xgrow((void **)&m->latest, &m->latest_cap, (size_t)thread + 1, sizeof *m->latest);
    }
    return &m->latest[thread];
}

/* A new block at (pool, addr): its value for the map. */
static uint64_t block_new(struct merge *m, uint32_t info, uint32_t thread, uint32_t pool, uint64_t addr,
                          const struct qev *e)
{
    *latest_of(m, thread) = (struct latest){addr, e->size, pool, e->trace, 1};
    return block_pack(info, thread);
}

/* Whether block b at (pool, addr) is `thread`'s latest allocation. */
static int block_is_latest(struct merge *m, uint64_t b, uint32_t thread, uint32_t pool, uint64_t addr)
{
    const struct latest *l = latest_of(m, thread);
    return block_thread(b) == thread && l->set && l->addr == addr && l->pool == pool;
}

/* The thread's free of a block: nothing it allocated before is its latest
 * allocation any more. */
static void block_gone(struct merge *m, uint32_t thread)
{
    latest_of(m, thread)->set = 0;
}

/* The size and trace of a block ending: the thread's latest allocation's
 * for a temporary, else its pair's. */
static void freed_pair(struct merge *m, uint32_t thread, int temporary, uint32_t info, uint64_t *size, uint32_t *trace)
{
    const struct latest *l = latest_of(m, thread);
    *size = temporary ? l->size : m->infos[info].size;
    *trace = temporary ? l->trace : m->infos[info].trace;
}

static int write_free(struct merge *m, uint32_t thread, uint32_t kind, uint64_t b, uint32_t pool, uint64_t addr)
{
    /* Not zero-initialized: the record's union is large (module segments)
     * and this runs for every free. */
    struct memfmt_record r;
    r.tag = MEMFMT_REC_FREE;
    r.u.free.thread = thread;
    r.u.free.kind = kind;
    r.u.free.info = block_info(b);
    r.u.free.temporary = block_is_latest(m, b, thread, pool, addr);
    freed_pair(m, thread, r.u.free.temporary, r.u.free.info, &r.u.free.size, &r.u.free.trace);
    block_gone(m, thread);
    return out(m, &r);
}

/* Module ids in the file: the image's own id plus the ids used by the
 * images before it. */
static void renumber_module(struct merge *m, struct memfmt_record *r)
{
    if (r->tag == MEMFMT_REC_MODULE) {
        r->u.module.id += m->module_base;
        if (r->u.module.id > m->module_top) {
            m->module_top = r->u.module.id;
        }
        xgrow((void **)&m->live_modules, &m->live_modules_cap, m->nlive_modules + 1, sizeof *m->live_modules);
        m->live_modules[m->nlive_modules++] = r->u.module.id;
    } else if (r->tag == MEMFMT_REC_UNMODULE) {
        r->u.unmodule.id += m->module_base;
        for (size_t i = 0; i < m->nlive_modules; i++) {
            if (m->live_modules[i] == r->u.unmodule.id) {
                m->live_modules[i] = m->live_modules[--m->nlive_modules];
                break;
            }
        }
    }
}

/* A pool event (memrec.h). Pool blocks are ordinary blocks of kind
 * pool_alloc, found by (pool, address) instead of by address. A free or
 * reset of blocks memrec does not know is the program's business (or
 * blocks not sampled) and is ignored; a block reported twice without a
 * free between ends at the second report. */
static int apply_pool(struct merge *m, struct stream *s, const struct qev *e)
{
    uint64_t addr, b;
    int rc = 0;
    if (e->type == Q_PRESET) {
        while (rc == 0 && poolmap_pop(m->pools, e->old_block, &addr, &b)) {
            rc = write_free(m, s->thread, MEMFMT_K_POOL_FREE, b, e->old_block, addr);
        }
        return rc;
    }
    if (poolmap_del(m->pools, e->old_block, e->addr, &b)) {
        rc = write_free(m, s->thread, MEMFMT_K_POOL_FREE, b, e->old_block, e->addr);
    }
    if (e->type == Q_PFREE || rc < 0) {
        return rc;
    }
    struct memfmt_record r = {.tag = MEMFMT_REC_ALLOC};
    r.u.alloc.thread = s->thread;
    r.u.alloc.kind = MEMFMT_K_POOL_ALLOC;
    r.u.alloc.size = e->size;
    r.u.alloc.trace = e->trace;
    r.u.alloc.info = info_id(m, e->size, e->trace);
    poolmap_add(m->pools, e->old_block, e->addr, block_new(m, r.u.alloc.info, s->thread, e->old_block, e->addr, e));
    return out(m, &r);
}

/* ---- direct mappings ---- */

/* What a removal from the set writes: one MAP record per piece, giving
 * the bytes back to the trace that mapped them. */
struct unmap_out {
    struct merge *m;
    uint32_t thread, kind;
    int rc;
};

static void write_unmapped(void *ctx, uint32_t trace, uint64_t bytes)
{
    struct unmap_out *u = ctx;
    struct memfmt_record r = {.tag = MEMFMT_REC_MAP};
    r.u.map.thread = u->thread;
    r.u.map.kind = u->kind;
    r.u.map.trace = trace;
    r.u.map.delta = -(int64_t)bytes;
    int rc = out(u->m, &r);
    if (rc < 0) {
        u->rc = rc;
    }
}

static int write_mapped(struct merge *m, uint32_t thread, uint32_t kind, uint32_t trace, int64_t delta, int call)
{
    struct memfmt_record r = {.tag = MEMFMT_REC_MAP};
    r.u.map.thread = thread;
    r.u.map.kind = kind;
    r.u.map.trace = trace;
    r.u.map.delta = delta;
    r.u.map.call = (uint32_t)call;
    return out(m, &r);
}

/* A new range replaces whatever the set held there (MAP_FIXED, or an unmap
 * the recorder could not see); mremap keeps the owner of the old range. */
static int apply_map(struct merge *m, struct stream *s, struct qev *e)
{
    struct unmap_out u = {m, s->thread, MEMFMT_MK_MMAP, 0};
    switch (e->type) {
    case Q_MAP:
        mapranges_remove(&m->maps, e->addr, e->size, write_unmapped, &u);
        mapranges_add(&m->maps, e->addr, e->size, e->trace);
        return u.rc < 0 ? u.rc : write_mapped(m, s->thread, MEMFMT_MK_MMAP, e->trace, (int64_t)e->size, 1);
    case Q_UNMAP:
        u.kind = e->kind;
        mapranges_remove(&m->maps, e->addr, e->size, write_unmapped, &u);
        return u.rc;
    case Q_MREMAP_OLD: {
        /* Silent: the next event of this stream, Q_MREMAP_NEW, writes the
         * change as one delta. Only the old range's owner is kept (mremap
         * works on one mapping). */
        s->remap_trace = mapranges_owner(&m->maps, e->addr, e->size);
        s->remap_bytes = mapranges_remove(&m->maps, e->addr, e->size, NULL, NULL);
        return 0;
    }
    case Q_MREMAP_NEW:
        u.kind = MEMFMT_MK_MREMAP;
        mapranges_remove(&m->maps, e->addr, e->size, write_unmapped, &u);
        if (u.rc < 0 || s->remap_bytes == 0) {
            return u.rc; /* not a range of ours: the allocator's, or a file */
        }
        mapranges_add(&m->maps, e->addr, e->size, s->remap_trace);
        int64_t delta = (int64_t)e->size - (int64_t)s->remap_bytes;
        s->remap_bytes = 0;
        return delta ? write_mapped(m, s->thread, MEMFMT_MK_MREMAP, s->remap_trace, delta, 0) : 0;
    default: /* Q_BRK: addr = old break, size = new break */
        u.kind = MEMFMT_MK_BRK;
        if (e->size < e->addr) {
            mapranges_remove(&m->maps, e->size, e->addr - e->size, write_unmapped, &u);
            return u.rc;
        }
        mapranges_remove(&m->maps, e->addr, e->size - e->addr, write_unmapped, &u);
        mapranges_add(&m->maps, e->addr, e->size - e->addr, e->trace);
        return u.rc < 0 ? u.rc : write_mapped(m, s->thread, MEMFMT_MK_BRK, e->trace, (int64_t)(e->size - e->addr), 1);
    }
}

static int apply(struct merge *m, struct stream *s, struct qev *e)
{
    int rc = 0;
    struct memfmt_record r;
    uint64_t b;
    switch (e->type) {
    case Q_ALLOC:
    case Q_RALLOC: {
        /* The block's cell: nothing below changes the map until its value
         * is set. A block still live at the address means its free was
         * never seen (made while the recorder could not record): the old
         * block ends first. */
        int existed;
        struct u64map_cell *cell = u64map_claim(&m->addr_block, e->addr, &existed);
        if (existed && cell->val != BLOCK_SET_APART) {
            m->st.unmatched_frees++;
            rc = write_free(m, s->thread, MEMFMT_K_FREE, cell->val, 0, e->addr);
        }
        if (e->has_old != OLD_FOUND && startup_marked(m->startup, e->trace, m->node_ip, m->node_parent, m->nnodes)) {
            startup_count(m->startup, e->size);
            cell->val = BLOCK_SET_APART;
            break;
        }
        r.tag = MEMFMT_REC_ALLOC;
        r.u.alloc.thread = s->thread;
        r.u.alloc.kind = e->kind;
        r.u.alloc.size = e->size;
        r.u.alloc.trace = e->trace;
        r.u.alloc.old_info = 0;
        r.u.alloc.old_size = 0;
        r.u.alloc.old_trace = 0;
        r.u.alloc.old_temporary = 0;
        if (e->has_old == OLD_FOUND) {
            /* The realloc's second part: the old block ends here. It is a
             * temporary if it was the thread's latest allocation at the
             * first part and no free of a stale block was written since. */
            r.tag = MEMFMT_REC_REALLOC;
            r.u.alloc.old_info = e->old_block;
            r.u.alloc.old_temporary = e->old_latest && latest_of(m, s->thread)->set;
            freed_pair(m, s->thread, r.u.alloc.old_temporary, e->old_block, &r.u.alloc.old_size, &r.u.alloc.old_trace);
            block_gone(m, s->thread);
        } else if (e->type == Q_RALLOC && e->has_old == OLD_NONE) {
            m->st.unmatched_frees++; /* a realloc of a block never seen: an allocation */
        }
        r.u.alloc.info = info_id(m, e->size, e->trace);
        cell->val = block_new(m, r.u.alloc.info, s->thread, 0, e->addr, e);
        if (rc == 0) {
            rc = out(m, &r);
        }
        break;
    }
    case Q_FREE:
        if (!u64map_del(&m->addr_block, e->addr, &b)) {
            m->st.unmatched_frees++;
            break;
        }
        if (b == BLOCK_SET_APART) {
            break;
        }
        rc = write_free(m, s->thread, e->kind, b, 0, e->addr);
        break;
    case Q_RFREE:
        /* The old address is free from now on; the block itself ends with
         * the realloc's second part (always the next event of this stream). */
        if (s->head + 1 < s->len && s->q[s->head + 1].type == Q_RALLOC) {
            struct qev *next = &s->q[s->head + 1];
            next->has_old = !u64map_del(&m->addr_block, e->addr, &b) ? OLD_NONE
                            : b == BLOCK_SET_APART                   ? OLD_SET_APART
                                                                     : OLD_FOUND;
            if (next->has_old == OLD_FOUND) {
                next->old_block = block_info(b);
                next->old_latest = (uint8_t)block_is_latest(m, b, s->thread, 0, e->addr);
            }
        }
        break;
    case Q_RECORD: {
        int n = memfmt_decode(e->rec, (size_t)e->size, &r);
        if (n > 0) {
            renumber_module(m, &r);
            rc = out(m, &r);
            startup_module(m->startup, &r);
        }
        free(e->rec);
        e->rec = NULL;
        break;
    }
    case Q_PALLOC:
    case Q_PFREE:
    case Q_PRESET: rc = apply_pool(m, s, e); break;
    default: rc = apply_map(m, s, e); break;
    }
    return rc;
}

/* ---- queues ---- */

static struct stream *stream_get(struct merge *m, uint32_t id)
{
    if (id >= m->nstreams_cap) {
        xgrow((void **)&m->streams, &m->nstreams_cap, (size_t)id + 1, sizeof *m->streams);
    }
    struct stream *s = &m->streams[id];
    s->used = 1;
    return s;
}

/* Streams with something to do are listed, so that ordering costs grow
 * with the threads that are busy, not with all threads ever seen. */
static void activate(struct merge *m, struct stream *s)
{
    if (s->active) {
        return;
    }
    s->active = 1;
    if (m->nactive == m->active_cap) {
        xgrow((void **)&m->active, &m->active_cap, m->nactive + 1, sizeof *m->active);
    }
    m->active[m->nactive++] = (uint32_t)(s - m->streams);
}

static void push(struct merge *m, struct stream *s, const struct qev *e)
{
    activate(m, s);
    if (s->head > 0 && s->head == s->len) {
        s->head = s->len = 0;
    }
    if (s->len == s->cap) {
        if (s->head > s->cap / 2) {
            memmove(s->q, s->q + s->head, (s->len - s->head) * sizeof *s->q);
            s->len -= s->head;
            s->head = 0;
        } else {
            xgrow((void **)&s->q, &s->cap, s->len + 1, sizeof *s->q);
        }
    }
    s->q[s->len++] = *e;
}

/* A thread that ended gives its index back once its last event is
 * written, so a later thread (maybe with the same tid) gets an index of its
 * own without mixing with the events still queued. */
static void retire(struct merge *m, struct stream *s)
{
    s->ended = 0;
    uint64_t idx;
    if (u64map_get(&m->tid_thread, s->tid, &idx) && idx == s->thread) {
        u64map_del(&m->tid_thread, s->tid, &idx);
        if (m->nfree_threads == m->free_threads_cap) {
            xgrow((void **)&m->free_threads, &m->free_threads_cap, m->nfree_threads + 1, sizeof *m->free_threads);
        }
        m->free_threads[m->nfree_threads++] = s->thread;
    }
}

/* Drop drained streams from the active list, retiring those that ended. */
static void compact_active(struct merge *m)
{
    size_t j = 0;
    for (size_t i = 0; i < m->nactive; i++) {
        struct stream *s = &m->streams[m->active[i]];
        if (s->head < s->len) {
            m->active[j++] = m->active[i];
            continue;
        }
        s->active = 0;
        if (s->ended) {
            retire(m, s);
        }
    }
    m->nactive = j;
}

/* Write every queued event with seq < limit, smallest first. */
/* Applying an event costs cache misses (the address map, the pair table,
 * the block record: all far larger than the caches). Touching, for an
 * event well ahead in the queue, its map cell and pair cell, and for one a
 * little ahead the block its (by then cached) map cell names, lets those
 * misses overlap instead of following one another. */
#define PREFETCH_FAR 16
#define PREFETCH_NEAR 4

static inline __attribute__((always_inline)) void prefetch_far(const struct merge *m, const struct qev *e)
{
    if (e->type != Q_ALLOC && e->type != Q_FREE && e->type != Q_RALLOC && e->type != Q_RFREE) {
        return;
    }
    if (m->addr_block.cap) {
        __builtin_prefetch(&m->addr_block.cells[u64map_mix(e->addr) & (m->addr_block.cap - 1)]);
    }
    if ((e->type == Q_ALLOC || e->type == Q_RALLOC) && m->info_table_cap) {
        __builtin_prefetch(&m->info_table[pair_hash(e->size, e->trace) & (m->info_table_cap - 1)]);
    }
}

static inline __attribute__((always_inline)) void prefetch_near(const struct merge *m, const struct qev *e)
{
    if ((e->type != Q_FREE && e->type != Q_RFREE) || !m->addr_block.cap) {
        return;
    }
    const struct u64map_cell *c = &m->addr_block.cells[u64map_mix(e->addr) & (m->addr_block.cap - 1)];
    if (c->key == e->addr && c->val != BLOCK_SET_APART && block_info(c->val) <= m->ninfos) {
        __builtin_prefetch(&m->infos[block_info(c->val)]);
    }
}

static int release_until(struct merge *m, uint64_t limit)
{
    for (;;) {
        struct stream *best = NULL;
        uint64_t others = UINT64_MAX; /* the smallest head of the other streams */
        for (size_t i = 0; i < m->nactive; i++) {
            struct stream *s = &m->streams[m->active[i]];
            if (s->head == s->len || s->q[s->head].seq >= limit) {
                continue;
            }
            if (!best || s->q[s->head].seq < best->q[best->head].seq) {
                if (best) {
                    others = best->q[best->head].seq;
                }
                best = s;
            } else if (s->q[s->head].seq < others) {
                others = s->q[s->head].seq;
            }
        }
        if (!best) {
            compact_active(m);
            return 0;
        }
        /* Drain the earliest stream while it stays ahead of every other.
         * Equal numbers (time stamps of two threads) are concurrent events:
         * either order is right, and taking them keeps the loop moving. */
        while (best->head < best->len && best->q[best->head].seq < limit && best->q[best->head].seq <= others) {
            if (best->head + PREFETCH_FAR < best->len) {
                prefetch_far(m, &best->q[best->head + PREFETCH_FAR]);
            }
            if (best->head + PREFETCH_NEAR < best->len) {
                prefetch_near(m, &best->q[best->head + PREFETCH_NEAR]);
            }
            int rc = apply(m, best, &best->q[best->head]);
            best->head++;
            if (rc < 0) {
                return rc;
            }
        }
    }
}

static uint32_t thread_for(struct merge *m, uint64_t tid)
{
    uint64_t idx;
    if (u64map_get(&m->tid_thread, tid, &idx)) {
        return (uint32_t)idx;
    }
    /* Reuse the index of a thread that ended, so that indexes stay below
     * the number of threads alive at once (and MEMFMT_MAX_THREADS). */
    if (m->nfree_threads) {
        idx = m->free_threads[--m->nfree_threads];
    } else {
        idx = m->next_thread++;
    }
    u64map_put(&m->tid_thread, tid, idx);
    struct memfmt_record r = {.tag = MEMFMT_REC_THREAD};
    r.u.thread.index = (uint32_t)idx;
    r.u.thread.tid = (uint32_t)tid;
    out(m, &r);
    return (uint32_t)idx;
}

/* One global tree: (parent, ip) pairs from all threads map to one id. */
static uint32_t node_file_id(struct merge *m, uint32_t parent, uint64_t ip)
{
    uint64_t key = u64map_mix(ip) ^ ((uint64_t)parent * 0x9E3779B97F4A7C15ull);
    uint64_t id;
    key = key ? key : 1;
    /* Chained through a probe on the key space: collisions of the 64-bit
     * key are resolved by checking the stored pair and rehashing. */
    for (uint64_t k = key;; k = u64map_mix(k + 1) | 1) {
        if (!u64map_get(&m->node_ids, k, &id)) {
            id = m->nnodes++;
            xgrow((void **)&m->node_ip, &m->nodes_cap, m->nnodes, sizeof *m->node_ip);
            size_t cap = m->nodes_cap;
            m->node_parent = xrealloc(m->node_parent, cap * sizeof *m->node_parent);
            m->node_ip[id] = ip;
            m->node_parent[id] = parent;
            u64map_put(&m->node_ids, k, id);
            struct memfmt_record r = {.tag = MEMFMT_REC_NODE};
            r.u.node.parent = parent;
            r.u.node.ip = ip;
            out(m, &r);
            return (uint32_t)id;
        }
        if (m->node_ip[id] == ip && m->node_parent[id] == parent) {
            return (uint32_t)id;
        }
    }
}

static uint32_t map_trace(struct stream *s, uint64_t local)
{
    if (local == 0 || local > s->nnodes) {
        return 0;
    }
    return s->nodes[local - 1];
}

static int release_until(struct merge *m, uint64_t limit);

/* exec replaced the process image: everything of the old one is in (it
 * flushed before exec), so write it all; then the old image's streams,
 * threads, addresses and modules end. Blocks it left allocated stay live
 * in the recording: the image ended without freeing them. */
static int new_image(struct merge *m)
{
    if (m->images++ == 0) {
        return 0;
    }
    int rc = release_until(m, UINT64_MAX);
    if (rc < 0) {
        return rc;
    }
    for (size_t i = 0; i < m->nstreams_cap; i++) {
        struct stream *s = &m->streams[i];
        free(s->q);
        free(s->nodes);
        memset(s, 0, sizeof *s);
    }
    m->nactive = 0;
    u64map_release(&m->tid_thread);
    memset(&m->tid_thread, 0, sizeof m->tid_thread);
    m->nfree_threads = 0;
    u64map_release(&m->addr_block);
    memset(&m->addr_block, 0, sizeof m->addr_block);
    if (m->latest) {
        /* NULL while no thread of the old image sent anything (a followed
         * fork child that execs before allocating). */
        memset(m->latest, 0, m->latest_cap * sizeof *m->latest);
    }
    poolmap_free(m->pools);
    m->pools = poolmap_new();
    mapranges_release(&m->maps);
    memset(&m->maps, 0, sizeof m->maps);
    while (m->nlive_modules) {
        struct memfmt_record r = {.tag = MEMFMT_REC_UNMODULE};
        r.u.unmodule.id = m->live_modules[--m->nlive_modules];
        rc = out(m, &r);
        if (rc < 0) {
            return rc;
        }
    }
    m->module_base = m->module_top;
    m->st.images = m->images - 1;
    return 0;
}

int merge_batch(struct merge *m, const uint8_t *p, size_t len)
{
    if (len < 4) {
        return MEMFMT_E_CORRUPT;
    }
    uint32_t sid;
    memcpy(&sid, p, 4);
    const uint8_t *end = p + len;
    p += 4;
    struct stream *s = stream_get(m, sid);
    uint64_t prev = 0;
    while (p < end) {
        struct memfmt_wire_event ev;
        int rc = memfmt_wire_decode(&p, end, &prev, &ev);
        if (rc < 0) {
            return rc;
        }
        struct qev q = {0};
        switch (ev.tag) {
        case MEMFMT_W_HELLO:
            s->tid = ev.a;
            s->thread = thread_for(m, ev.a);
            s->nnodes = 0;
            continue;
        case MEMFMT_W_BYE:
            s->ended = 1;
            activate(m, s); /* retired when drained */
            continue;
        case MEMFMT_W_NODE: {
            uint32_t parent = map_trace(s, ev.a);
            uint32_t id = node_file_id(m, parent, ev.b);
            xgrow((void **)&s->nodes, &s->nodes_cap, s->nnodes + 1, sizeof *s->nodes);
            s->nodes[s->nnodes++] = id;
            continue;
        }
        case MEMFMT_W_LOST: m->st.lost_events += ev.a; continue;
        case MEMFMT_W_IMAGE:
            rc = new_image(m);
            if (rc < 0) {
                return rc;
            }
            /* new_image() may have moved the streams array */
            s = stream_get(m, sid);
            continue;
        case MEMFMT_W_EXITING:
            m->st.exiting = 1;
            m->st.exit_status = ev.a ? (int)(ev.a - 1) : -1;
            continue;
        case MEMFMT_W_SIGNALED: m->st.signaled = (int)ev.a; continue;
        case MEMFMT_W_COUNTS: {
            /* Cumulative per thread: order does not matter. */
            struct memfmt_record r = {.tag = MEMFMT_REC_COUNTS};
            r.u.counts.thread = s->thread;
            r.u.counts.calls = ev.a;
            r.u.counts.bytes = ev.b;
            rc = out(m, &r);
            if (rc < 0) {
                return rc;
            }
            continue;
        }
        case MEMFMT_W_SYNC:
            rc = release_until(m, ev.seq);
            if (rc < 0) {
                return rc;
            }
            if (ev.a > m->start_ms && ev.a - m->start_ms > m->last_ms) {
                m->last_ms = ev.a - m->start_ms;
                struct memfmt_record r = {.tag = MEMFMT_REC_TIME};
                r.u.time.ms = m->last_ms;
                rc = out(m, &r);
                if (rc < 0) {
                    return rc;
                }
            }
            continue;
        case MEMFMT_W_ALLOC:
            q.type = Q_ALLOC;
            q.seq = ev.seq;
            q.kind = ev.kind;
            q.size = ev.size;
            q.addr = ev.addr;
            q.trace = map_trace(s, ev.a);
            break;
        case MEMFMT_W_FREE:
            q.type = Q_FREE;
            q.seq = ev.seq;
            q.kind = ev.kind;
            q.addr = ev.addr;
            break;
        case MEMFMT_W_REALLOC:
            q.type = Q_RFREE;
            q.seq = ev.seq;
            q.kind = ev.kind;
            q.addr = ev.addr;
            push(m, s, &q);
            q.type = Q_RALLOC;
            q.seq = ev.seq2;
            q.size = ev.size;
            q.addr = ev.addr2;
            q.trace = map_trace(s, ev.a);
            break;
        case MEMFMT_W_POOL_ALLOC:
        case MEMFMT_W_POOL_FREE:
        case MEMFMT_W_POOL_RESET:
            q.type = ev.tag == MEMFMT_W_POOL_ALLOC ? Q_PALLOC : ev.tag == MEMFMT_W_POOL_FREE ? Q_PFREE : Q_PRESET;
            q.seq = ev.seq;
            q.size = ev.size;
            q.addr = ev.addr;
            q.trace = ev.tag == MEMFMT_W_POOL_ALLOC ? map_trace(s, ev.a) : 0;
            q.old_block = poolmap_pool(m->pools, ev.b);
            break;
        case MEMFMT_W_RECORD:
            q.type = Q_RECORD;
            q.seq = ev.seq;
            q.rec = xmalloc(ev.rec_len ? ev.rec_len : 1);
            memcpy(q.rec, ev.rec, ev.rec_len);
            q.size = ev.rec_len;
            break;
        case MEMFMT_W_MAP:
        case MEMFMT_W_UNMAP:
        case MEMFMT_W_BRK:
            q.type = ev.tag == MEMFMT_W_MAP ? Q_MAP : ev.tag == MEMFMT_W_UNMAP ? Q_UNMAP : Q_BRK;
            q.seq = ev.seq;
            q.kind = ev.tag == MEMFMT_W_UNMAP ? (uint8_t)ev.kind : 0;
            q.addr = ev.addr;
            q.size = ev.tag == MEMFMT_W_BRK ? ev.addr2 : ev.size;
            q.trace = ev.tag == MEMFMT_W_UNMAP ? 0 : map_trace(s, ev.a);
            break;
        case MEMFMT_W_MREMAP:
            q.type = Q_MREMAP_OLD;
            q.seq = ev.seq;
            q.addr = ev.addr;
            q.size = ev.size;
            push(m, s, &q);
            q.type = Q_MREMAP_NEW;
            q.seq = ev.seq2;
            q.addr = ev.addr2;
            q.size = ev.b;
            break;
        default: return MEMFMT_E_CORRUPT;
        }
        push(m, s, &q);
    }
    return 0;
}

int merge_rss(struct merge *m, uint64_t bytes)
{
    struct memfmt_record r = {.tag = MEMFMT_REC_RSS};
    r.u.rss.bytes = bytes;
    return out(m, &r);
}

int merge_drain(struct merge *m)
{
    return release_until(m, UINT64_MAX);
}

int merge_end(struct merge *m, unsigned how, int value, uint64_t runtime_ms)
{
    struct memfmt_record r = {.tag = MEMFMT_REC_STATS};
    r.u.stats.lost_events = m->st.lost_events;
    r.u.stats.unmatched_frees = m->st.unmatched_frees;
    r.u.stats.startup_calls = startup_calls(m->startup);
    r.u.stats.startup_bytes = startup_bytes(m->startup);
    int rc = out(m, &r);
    if (rc < 0) {
        return rc;
    }
    r.tag = MEMFMT_REC_END;
    r.u.end.how = how;
    r.u.end.value = value;
    r.u.end.runtime_ms = runtime_ms;
    return out(m, &r);
}
