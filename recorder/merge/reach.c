// SPDX-License-Identifier: MIT
/* The reachability of the live blocks at the program's end, on the merge's
 * side (merge.h): the live blocks out of the address map, sorted, handed
 * to the classifier (reachgraph.h) with the roots memrec read, and the
 * result written as one REACH record and a REACH_TRACE per stack with
 * blocks that are not plainly reachable (docs/format.md, "Reachability").
 * memrec stops the program meanwhile: about 0.3 µs a live block, reads
 * included (docs/performance.md, "Reachability at the end"). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "merge.h"
#include "merge_internal.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

unsigned merge_reach_check(const struct merge *m)
{
    if (m->layout_sampled) {
        return MEMFMT_REACH_SAMPLED;
    }
    if (m->addr_block.count > MERGE_REACH_MAX_BLOCKS) {
        return MEMFMT_REACH_TOO_BIG;
    }
    return MEMFMT_REACH_DONE;
}

int merge_reach_skipped(struct merge *m, unsigned status, uint64_t cost_ns)
{
    struct memfmt_record r = {.tag = MEMFMT_REC_REACH};
    r.u.reach.status = status;
    r.u.reach.cost_ns = cost_ns;
    return out(m, &r);
}

/* Sort by address: a radix sort of the bytes in which the addresses
 * differ (a million blocks out of the map and sorted: 85-115 ms, where
 * qsort() made it 400-700 ms). */
static void sort_by_addr(struct reach_block *b, size_t n)
{
    if (n < 2) {
        return;
    }
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        lo = b[i].addr < lo ? b[i].addr : lo;
        hi = b[i].addr > hi ? b[i].addr : hi;
    }
    struct reach_block *tmp = xmalloc(n * sizeof *tmp), *src = b, *dst = tmp;
    for (unsigned shift = 0; shift < 64 && (((lo ^ hi) >> shift) != 0); shift += 8) {
        size_t count[257] = {0};
        for (size_t i = 0; i < n; i++) {
            count[((src[i].addr >> shift) & 0xff) + 1]++;
        }
        for (int k = 0; k < 256; k++) {
            count[k + 1] += count[k];
        }
        for (size_t i = 0; i < n; i++) {
            dst[count[(src[i].addr >> shift) & 0xff]++] = src[i];
        }
        struct reach_block *t = src;
        src = dst;
        dst = t;
    }
    if (src != b) {
        memcpy(b, src, n * sizeof *b);
    }
    free(tmp);
}

static int by_trace(const void *a, const void *b)
{
    const struct memfmt_record *x = a, *y = b;
    return x->u.reach_trace.trace < y->u.reach_trace.trace ? -1 : x->u.reach_trace.trace > y->u.reach_trace.trace;
}

/* The live heap blocks, sorted by address. Blocks set apart as a preloaded
 * library's start-up have no size known here: left out (docs/definitions.md). */
static struct reach_block *live_blocks(const struct merge *m, size_t *n)
{
    struct reach_block *b = xmalloc((m->addr_block.count + 1) * sizeof *b);
    size_t k = 0;
    for (size_t i = 0; i < m->addr_block.cap; i++) {
        const struct u64map_cell *c = &m->addr_block.cells[i];
        if (!c->key || c->val == BLOCK_SET_APART) {
            continue;
        }
        const struct pair_info *p = &m->infos[block_info(c->val)];
        b[k++] = (struct reach_block){c->key, p->size, p->trace, 0, 0};
    }
    sort_by_addr(b, k);
    *n = k;
    return b;
}

/* The stacks' counts: one REACH_TRACE record each, found through a map of
 * trace -> index + 1. */
struct per_trace {
    struct u64map index;
    struct memfmt_record *recs;
    size_t n, cap;
};

static struct memfmt_record *trace_rec(struct per_trace *pt, uint32_t trace)
{
    int existed;
    struct u64map_cell *c = u64map_claim(&pt->index, (uint64_t)trace + 1, &existed);
    if (!existed) {
        if (pt->n == pt->cap) {
            xgrow((void **)&pt->recs, &pt->cap, pt->n + 1, sizeof *pt->recs);
        }
        pt->recs[pt->n] = (struct memfmt_record){.tag = MEMFMT_REC_REACH_TRACE};
        pt->recs[pt->n].u.reach_trace.trace = trace;
        c->val = ++pt->n;
    }
    return &pt->recs[c->val - 1];
}

int merge_reach(struct merge *m, const struct merge_reach_in *in, struct memfmt_record *res)
{
    int rc = merge_drain(m);
    if (rc < 0) {
        return rc;
    }
    /* What the caller checked may have changed with the events just
     * written (the PROCESS record that says the image is sampled). */
    unsigned st0 = merge_reach_check(m);
    if (st0 != MEMFMT_REACH_DONE) {
        *res = (struct memfmt_record){.tag = MEMFMT_REC_REACH};
        res->u.reach.status = st0;
        return merge_reach_skipped(m, st0, in->asked_ns ? now_ns() - in->asked_ns : 0);
    }
    size_t n;
    struct reach_block *b = live_blocks(m, &n);
    struct reach_stats st;
    int cr = reach_classify(b, n, in->roots, in->nroots, in->words, in->nwords, &in->rd, in->deadline_ns,
                            MERGE_REACH_READ_AHEAD, &st);
    struct memfmt_record r = {.tag = MEMFMT_REC_REACH};
    struct per_trace pt = {0};
    if (cr == REACH_E_TIME) {
        r.u.reach.status = MEMFMT_REACH_TOO_SLOW;
    } else {
        for (size_t i = 0; i < n; i++) {
            uint64_t sz = b[i].size;
            if (b[i].cls == REACH_REACHABLE || b[i].cls == REACH_POSSIBLE) {
                r.u.reach.reachable_bytes += sz;
                r.u.reach.reachable_blocks++;
                if (b[i].cls == REACH_POSSIBLE) {
                    r.u.reach.possible_bytes += sz;
                    r.u.reach.possible_blocks++;
                    struct memfmt_record *t = trace_rec(&pt, b[i].trace);
                    t->u.reach_trace.possible_bytes += sz;
                    t->u.reach_trace.possible_blocks++;
                }
                continue;
            }
            struct memfmt_record *t = trace_rec(&pt, b[i].trace);
            r.u.reach.unreachable_bytes += sz;
            r.u.reach.unreachable_blocks++;
            t->u.reach_trace.unreachable_bytes += sz;
            t->u.reach_trace.unreachable_blocks++;
            if (b[i].cls == REACH_INDIRECT) {
                r.u.reach.indirect_bytes += sz;
                r.u.reach.indirect_blocks++;
                t->u.reach_trace.indirect_bytes += sz;
                t->u.reach_trace.indirect_blocks++;
            }
        }
    }
    free(b);
    uint64_t t1 = now_ns();
    r.u.reach.root_bytes = st.root_bytes;
    r.u.reach.threads = in->threads;
    r.u.reach.stopped_ns = in->stopped_ns && t1 > in->stopped_ns ? t1 - in->stopped_ns : 0;
    r.u.reach.cost_ns = in->asked_ns && t1 > in->asked_ns ? t1 - in->asked_ns : 0;
    rc = out(m, &r);
    if (pt.n) {
        qsort(pt.recs, pt.n, sizeof *pt.recs, by_trace); /* qsort(NULL, 0) is undefined */
    }
    for (size_t i = 0; i < pt.n && rc == 0; i++) {
        rc = out(m, &pt.recs[i]);
    }
    free(pt.recs);
    u64map_release(&pt.index);
    *res = r;
    return rc;
}
