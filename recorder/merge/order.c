// SPDX-License-Identifier: MIT
/* The merge's ordering and application: events leave the per-stream
 * queues smallest sequence number first and are applied (blocks, pools,
 * records of the recorder) as file records. */
#include "merge.h"

#include "merge_internal.h"

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
            rc = write_free(m, s->thread, MEMFMT_K_POOL_FREE, b, e->old_block, addr, 0);
        }
        return rc;
    }
    if (poolmap_del(m->pools, e->old_block, e->addr, &b)) {
        rc = write_free(m, s->thread, MEMFMT_K_POOL_FREE, b, e->old_block, e->addr, 0);
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
            rc = write_free(m, s->thread, MEMFMT_K_FREE, cell->val, 0, e->addr, 0);
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
        r.u.alloc.ns = tick_ns(m, e->ticks);
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
        rc = write_free(m, s->thread, e->kind, b, 0, e->addr, tick_ns(m, e->ticks));
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
            if (rc == MEMFMT_E_INVALID || rc == MEMFMT_E_TOOBIG) {
                /* A record the writer refuses (an event's tag, say) came
                 * from the process, as untrusted as a file: it is dropped,
                 * and the writer, which such a refusal leaves working,
                 * goes on. */
                free(e->rec);
                e->rec = NULL;
                return 0;
            }
            startup_module(m->startup, &r);
            layout_note_record(m, &r);
            if (rc == 0 && r.tag == MEMFMT_REC_HEAPINFO) {
                rc = layout_after_heapinfo(m, &r);
            }
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

/* A thread that ended gives its index back once its last event is
 * written, so a later thread (maybe with the same tid) gets an index of its
 * own without mixing with the events still queued. */
static void retire(struct merge *m, struct stream *s)
{
    s->ended = 0;
    uint64_t idx;
    if (u64map_get(&m->tid_thread, s->tid, &idx) && idx == s->thread) {
        thread_times_out(m, s->thread); /* a failed write is sticky in m->failed */
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

int release_until(struct merge *m, uint64_t limit)
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
