// SPDX-License-Identifier: MIT
/* The merge's decode switch: a recorder batch's wire events become
 * queued events; threads, trace nodes and process images are numbered for
 * the file here. */
#include "merge.h"

#include <string.h>

#include "memwire.h"
#include "merge_internal.h"

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

/* A call's ticks as the queue keeps them: saturated at 2^32 - 1 (over a
 * second); a difference that wrapped (the second clock read came out
 * before the first, which an unordered RDTSC may do on a call of a few
 * ns) counts as 0. */
static inline uint32_t clamp_ticks(uint64_t t)
{
    return t >> 63 ? 0 : t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

static uint32_t map_trace(struct stream *s, uint64_t local)
{
    if (local == 0 || local > s->nnodes) {
        return 0;
    }
    return s->nodes[local - 1];
}

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
    /* The old image's threads end with it. */
    for (uint32_t t = 1; t < m->thr_cap; t++) {
        if ((m->thr[t].born_ns || m->thr[t].has_times) && (rc = thread_times_out(m, t)) < 0) {
            return rc;
        }
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
    m->heap_start = m->heap_end = 0; /* the new image's heap: from its samples */
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
        case MEMFMT_W_HELLO: {
            s->tid = ev.a;
            s->thread = thread_for(m, ev.a);
            s->nnodes = 0;
            struct thread_clock *tc = thread_clock_of(m, s->thread);
            if (!tc->born_ns) {
                tc->born_ns = ev.b; /* a restarted stream of a known thread keeps its birth */
            }
            continue;
        }
        case MEMFMT_W_TIMES: {
            struct thread_clock *tc = thread_clock_of(m, s->thread);
            tc->wall_ns = ev.a;
            tc->cpu_ns = ev.b;
            tc->has_times = 1;
            continue;
        }
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
        case MEMFMT_W_LOST: {
            /* Batches the recorder dropped (its bound on waiting for us):
             * how many events and when, for the readers to say so. */
            m->st.lost_events += ev.a;
            struct memfmt_record r = {.tag = MEMFMT_REC_LOST};
            r.u.lost.from_ms = ev.b > m->start_ms ? ev.b - m->start_ms : 0;
            r.u.lost.to_ms = ev.c > m->start_ms ? ev.c - m->start_ms : 0;
            if (r.u.lost.to_ms < r.u.lost.from_ms) {
                r.u.lost.to_ms = r.u.lost.from_ms;
            }
            r.u.lost.events = ev.a;
            rc = out(m, &r);
            if (rc < 0) {
                return rc;
            }
            continue;
        }
        case MEMFMT_W_IMAGE:
            m->st.execing = 0;
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
        case MEMFMT_W_EXECING: m->st.execing = 1; continue;
        case MEMFMT_W_PROC_CPU:
            m->st.cpu_said = 1;
            m->st.cpu_user_ns = ev.a;
            m->st.cpu_sys_ns = ev.b;
            continue;
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
            m->st.execing = 0; /* the exec failed: the image goes on */
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
            q.ticks = clamp_ticks(ev.ticks);
            break;
        case MEMFMT_W_FREE:
            q.type = Q_FREE;
            q.seq = ev.seq;
            q.kind = ev.kind;
            q.addr = ev.addr;
            q.ticks = clamp_ticks(ev.ticks);
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
            q.ticks = clamp_ticks(ev.ticks);
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
    /* Threads still alive: every index in use and not retired. */
    for (uint32_t t = 1; t < m->thr_cap; t++) {
        if (m->thr[t].born_ns || m->thr[t].has_times) {
            int rc = thread_times_out(m, t);
            if (rc < 0) {
                return rc;
            }
        }
    }
    int rc = layout_final(m);
    if (rc < 0) {
        return rc;
    }
    struct memfmt_record r = {.tag = MEMFMT_REC_STATS};
    r.u.stats.lost_events = m->st.lost_events;
    r.u.stats.unmatched_frees = m->st.unmatched_frees;
    r.u.stats.startup_calls = startup_calls(m->startup);
    r.u.stats.startup_bytes = startup_bytes(m->startup);
    rc = out(m, &r);
    if (rc < 0) {
        return rc;
    }
    r.tag = MEMFMT_REC_END;
    r.u.end.how = how;
    r.u.end.value = value;
    r.u.end.runtime_ms = runtime_ms;
    r.u.end.cpu_user_ns = m->cpu_user_ns;
    r.u.end.cpu_sys_ns = m->cpu_sys_ns;
    return out(m, &r);
}
