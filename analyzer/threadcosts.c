// SPDX-License-Identifier: MIT
/* Per-thread costs (threadcosts.h): an accounting whose "traces" are threads
 * (dense ids, in the order threads first allocate), fed one event at a
 * time with the thread that owns each block, so that its per-trace peak
 * and leaks are the threads'. Which thread owns a freed block is told by
 * live counts per (size, stack) pair and thread. */
#define _GNU_SOURCE
#include "threadcosts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accounting.h"
#include "idmap.h"
#include "util.h"

/* Live blocks of one (size, trace) pair held by one thread. */
struct holder {
    uint32_t thread; /* dense id */
    uint64_t live;
};

/* The threads holding live blocks of one (size, trace) pair, indexed by
 * the pair's info id (the file numbers its pairs: docs/format.md). */
struct pair {
    struct holder *h;
    uint32_t nh, cap;
};

struct tpass {
    struct accounting *acct;
    struct pair *pairs; /* by info id */
    size_t pairs_cap;
    uint32_t max_info; /* largest id made so far */
    uint32_t *index_of; /* dense id -> thread index */
    uint32_t *tid_of;
    size_t ndense, dense_cap;
    struct idmap thread_map;
    /* Thread index -> tid from THREAD records, looked up when a thread is first seen. */
    uint32_t *tids;
    size_t ntids_cap;
    /* Dense id -> THREAD_TIMES; grows along index_of: times of a thread
     * that never allocated are not kept. */
    struct thread_times *times_of;
};

/* The pair with info id `info`; NULL for id 0, or for an id not met yet
 * without `make`. */
static struct pair *pair_of(struct tpass *p, uint32_t info, int make)
{
    return idmap_dense((void **)&p->pairs, &p->pairs_cap, &p->max_info, info, make, sizeof *p->pairs);
}

static uint64_t thread_rehash(const void *ctx, uint32_t i)
{
    return idmap_mix(((const struct tpass *)ctx)->index_of[i]);
}

struct thread_key {
    const uint32_t *index_of;
    uint32_t index;
};

static int thread_same(const void *ctx, uint32_t i)
{
    const struct thread_key *k = ctx;
    return k->index_of[i] == k->index;
}

/* The dense id of a thread index, made at its first allocation: ids are
 * bounded by the threads in the file, whatever numbers it uses. */
static uint32_t dense_of(struct tpass *p, uint32_t index, int make)
{
    if (make) {
        idmap_reserve(&p->thread_map, p->ndense + 1, thread_rehash, p);
    }
    struct thread_key k = {p->index_of, index};
    size_t slot;
    uint32_t i = idmap_find(&p->thread_map, idmap_mix(index), thread_same, &k, &slot);
    if (i != IDMAP_NONE || !make) {
        return i;
    }
    xgrow((void **)&p->index_of, &p->dense_cap, p->ndense + 1, sizeof *p->index_of);
    p->tid_of = xrealloc(p->tid_of, p->dense_cap * sizeof *p->tid_of); /* grows along index_of */
    p->times_of = xrealloc(p->times_of, p->dense_cap * sizeof *p->times_of);
    idmap_put(&p->thread_map, slot, (uint32_t)p->ndense);
    p->index_of[p->ndense] = index;
    p->tid_of[p->ndense] = index < p->ntids_cap ? p->tids[index] : 0;
    p->times_of[p->ndense] = (struct thread_times){0};
    return (uint32_t)p->ndense++;
}

/* The event as the batches would carry it, charged to `owner`; its
 * allocator time (saturated as the batches' 32 bits) goes with it, so the
 * accounting weighs it as it weighs the call. */
static void feed(struct tpass *p, uint64_t size, uint32_t owner, uint32_t flags, uint64_t ns)
{
    struct memfmt_event e = {.size = size,
                             .trace = owner,
                             .flags = flags,
                             .ns = ns < ACCT_MAX_EVENT_NS ? (uint32_t)ns : (uint32_t)ACCT_MAX_EVENT_NS};
    accounting_feed_events(p->acct, &e, 1, UINT32_MAX);
}

/* The holders of a pair are kept sorted by thread index: the lowest is
 * the first, and a thread's own entry is a binary search away, so a free
 * costs O(log threads holding blocks of its pair), never a scan. Returns
 * the position of `index`, or where it would go with *found = 0. */
static uint32_t holder_pos(const struct tpass *p, const struct pair *pr, uint32_t index, int *found)
{
    uint32_t lo = 0, hi = pr->nh;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint32_t at = p->index_of[pr->h[mid].thread];
        if (at == index) {
            *found = 1;
            return mid;
        }
        if (at < index) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    *found = 0;
    return lo;
}

static void on_alloc(struct tpass *p, uint32_t thread, uint64_t size, uint32_t info, uint64_t ns)
{
    uint32_t d = dense_of(p, thread, 1);
    struct pair *pr = pair_of(p, info, 1);
    if (!pr) {
        return; /* no pair id: not a block any free can name (corrupt input) */
    }
    int found;
    uint32_t j = holder_pos(p, pr, thread, &found);
    if (!found) {
        if (pr->nh == pr->cap) {
            /* From one: most pairs are held by one thread at a time. */
            pr->cap = pr->cap ? pr->cap * 2 : 1;
            pr->h = xrealloc(pr->h, (size_t)pr->cap * sizeof *pr->h);
        }
        memmove(pr->h + j + 1, pr->h + j, (size_t)(pr->nh - j) * sizeof *pr->h);
        pr->h[j].thread = d;
        pr->h[j].live = 0;
        pr->nh++;
    }
    pr->h[j].live++;
    feed(p, size, d, 0, ns);
}

/* Returns 0 when the free was charged, -1 when no block fits (corrupt input). */
static int on_free(struct tpass *p, uint32_t thread, uint64_t size, uint32_t info, int temporary, uint64_t ns)
{
    struct pair *pr = pair_of(p, info, 0);
    if (!pr || pr->nh == 0) {
        return -1;
    }
    int found;
    uint32_t pick = holder_pos(p, pr, thread, &found);
    if (!found) {
        pick = 0; /* the lowest-numbered thread holding one */
    }
    uint32_t owner = pr->h[pick].thread;
    if (--pr->h[pick].live == 0) {
        /* Only holders with live blocks stay. */
        memmove(pr->h + pick, pr->h + pick + 1, (size_t)(pr->nh - pick - 1) * sizeof *pr->h);
        if (--pr->nh == 0) {
            free(pr->h);
            pr->h = NULL;
            pr->cap = 0;
        }
    }
    feed(p, size, owner, MEMFMT_EV_FREE | (temporary ? MEMFMT_EV_TEMPORARY : 0), ns);
    return 0;
}

static void on_record(struct tpass *p, const struct memfmt_record *r)
{
    switch (r->tag) {
    case MEMFMT_REC_THREAD_TIMES: {
        /* Written as a thread ends, after its events: a thread with no
         * row by then never allocated and is not listed. */
        uint32_t d = dense_of(p, r->u.thread_times.thread, 0);
        if (d != IDMAP_NONE) {
            thread_times_add(&p->times_of[d], r);
        }
        break;
    }
    case MEMFMT_REC_THREAD:
        /* Kept for the listing; thread indexes beyond what the file's
         * threads could use are not stored. */
        if (r->u.thread.index < 1u << 20) {
            if (r->u.thread.index >= p->ntids_cap) {
                size_t old = p->ntids_cap;
                xgrow((void **)&p->tids, &p->ntids_cap, (size_t)r->u.thread.index + 1, sizeof *p->tids);
                memset(p->tids + old, 0, (p->ntids_cap - old) * sizeof *p->tids);
            }
            p->tids[r->u.thread.index] = r->u.thread.tid;
        }
        break;
    case MEMFMT_REC_ALLOC: on_alloc(p, r->u.alloc.thread, r->u.alloc.size, r->u.alloc.info, r->u.alloc.ns); break;
    case MEMFMT_REC_FREE:
        on_free(p, r->u.free.thread, r->u.free.size, r->u.free.info, r->u.free.temporary, r->u.free.ns);
        break;
    case MEMFMT_REC_REALLOC:
        /* One call: its whole time with the new block, as for stacks. */
        on_free(p, r->u.alloc.thread, r->u.alloc.old_size, r->u.alloc.old_info, r->u.alloc.old_temporary, 0);
        on_alloc(p, r->u.alloc.thread, r->u.alloc.size, r->u.alloc.info, r->u.alloc.ns);
        break;
    case MEMFMT_REC_TIME:
    case MEMFMT_REC_RSS:
    case MEMFMT_REC_END: accounting_feed(p->acct, r); break;
    default: break;
    }
}

static int by_index(const void *a, const void *b)
{
    uint32_t x = ((const struct thread_costs *)a)->index, y = ((const struct thread_costs *)b)->index;
    return x < y ? -1 : x > y;
}

int threads_run(const char *path, const struct model *m, struct threads **out, int *err_errno)
{
    *out = NULL;
    *err_errno = 0;
    int rc;
    memfmt_reader *rd = memfmt_reader_open(path, &rc);
    if (!rd) {
        *err_errno = errno;
        return rc;
    }
    struct tpass p = {0};
    p.acct = accounting_new(1);
    if (m->sample_rate) {
        accounting_set_sample_rate(p.acct, m->sample_rate);
    }
    struct memfmt_record rec;
    while ((rc = memfmt_read(rd, &rec)) > 0) {
        on_record(&p, &rec);
    }
    memfmt_reader_free(rd);
    accounting_finish(p.acct);
    struct threads *t = xcalloc(1, sizeof *t);
    t->stop_rc = rc < 0 ? rc : 0;
    t->v = xcalloc(p.ndense + 1, sizeof *t->v);
    t->n = (uint32_t)p.ndense;
    for (uint32_t d = 0; d < t->n; d++) {
        struct thread_costs *tc = &t->v[d];
        tc->index = p.index_of[d];
        tc->tid = p.tid_of[d];
        cost_of_trace(p.acct, d, &tc->c);
        const struct acct_cost *c = accounting_cost(p.acct, d);
        tc->leaked_blocks = c ? c->live_blocks : 0;
        tc->times = p.times_of[d];
    }
    /* By thread index: the order threads are numbered in. */
    qsort(t->v, t->n, sizeof *t->v, by_index);
    for (size_t i = 0; i < p.pairs_cap; i++) {
        free(p.pairs[i].h);
    }
    free(p.pairs);
    idmap_release(&p.thread_map);
    free(p.index_of);
    free(p.tid_of);
    free(p.tids);
    free(p.times_of);
    accounting_free(p.acct);
    *out = t;
    return 0;
}

void threads_free(struct threads *t)
{
    if (!t) {
        return;
    }
    free(t->v);
    free(t);
}

/* ---- printing (memprint --threads) ---- */

void threads_print_text(const struct threads *th, int timed, FILE *f)
{
    fprintf(f, "\nTHREADS (a free is charged to its own thread's block of that size and stack when it has one)\n");
    fprintf(f, "  %8s %8s %12s %12s %16s %16s %16s", "thread", "tid", "calls", "temporary", "allocated", "peak share",
            "leaked");
    if (timed) {
        fprintf(f, " %16s", "alloc time ns");
    }
    fprintf(f, " %12s %12s\n", "lifetime", "cpu");
    for (uint32_t i = 0; i < th->n; i++) {
        const struct thread_costs *t = &th->v[i];
        fprintf(f, "  %8u %8u %12llu %12llu %16llu %16llu %16llu", t->index, t->tid,
                (unsigned long long)t->c.v[COST_CALLS], (unsigned long long)t->c.v[COST_TEMPORARY],
                (unsigned long long)t->c.v[COST_ALLOCATED], (unsigned long long)t->c.v[COST_PEAK],
                (unsigned long long)t->c.v[COST_LEAKED]);
        if (timed) {
            fprintf(f, " %16llu", (unsigned long long)t->c.v[COST_TIME]);
        }
        thread_times_text(&t->times, f);
        fputc('\n', f);
    }
    if (th->n == 0) {
        fprintf(f, "  (none)\n");
    }
}

void threads_print_json(const struct threads *th, int timed, FILE *f)
{
    fputc('[', f);
    for (uint32_t i = 0; i < th->n; i++) {
        const struct thread_costs *t = &th->v[i];
        fprintf(f,
                "%s{\"thread\": %u, \"tid\": %u, \"calls\": %llu, \"temporary\": %llu, \"allocated_bytes\": %llu, "
                "\"peak_bytes\": %llu, \"leaked_bytes\": %llu, \"leaked_allocations\": %llu",
                i ? ", " : "", t->index, t->tid, (unsigned long long)t->c.v[COST_CALLS],
                (unsigned long long)t->c.v[COST_TEMPORARY], (unsigned long long)t->c.v[COST_ALLOCATED],
                (unsigned long long)t->c.v[COST_PEAK], (unsigned long long)t->c.v[COST_LEAKED],
                (unsigned long long)t->leaked_blocks);
        if (timed) {
            fprintf(f, ", \"allocator_time_ns\": %llu", (unsigned long long)t->c.v[COST_TIME]);
        } else {
            fputs(", \"allocator_time_ns\": null", f);
        }
        thread_times_json(&t->times, f);
        fputc('}', f);
    }
    fputc(']', f);
}
