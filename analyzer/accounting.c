// SPDX-License-Identifier: MIT
/* Computes memrec's figures from the stream of records (see accounting.h
 * and docs/definitions.md). Peak per trace uses lazy snapshots: a trace
 * saves its live bytes the first time it changes after a new global peak,
 * so finding the peak consumers costs O(1) per event, not O(traces) per
 * new peak. */
#include "accounting.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

struct slot {
    uint64_t size;
    uint64_t serial;  /* allocation event serial, tells reuse apart */
    uint32_t trace;
    uint32_t thread;
    int live;
};

struct accounting {
    int per_trace;
    struct acct_totals t;
    struct slot *slots;
    size_t nslots, slots_cap;
    uint64_t *last_alloc;      /* per thread index: serial of its last event if it allocated, else 0 */
    size_t threads_cap;
    struct acct_cost *costs;
    size_t costs_cap;
    uint32_t ntraces;
    uint64_t serial;           /* counts alloc/free events */
    uint64_t peak_serial;
};

struct accounting *accounting_new(int per_trace)
{
    struct accounting *a = xcalloc(1, sizeof *a);
    a->per_trace = per_trace;
    return a;
}

void accounting_free(struct accounting *a)
{
    if (!a) {
        return;
    }
    free(a->slots);
    free(a->last_alloc);
    free(a->costs);
    free(a);
}

static uint64_t *thread_last(struct accounting *a, uint32_t thread)
{
    if (thread >= a->threads_cap) {
        xgrow((void **)&a->last_alloc, &a->threads_cap, (size_t)thread + 1, sizeof *a->last_alloc);
    }
    return &a->last_alloc[thread];
}

static struct acct_cost *cost_of(struct accounting *a, uint32_t trace)
{
    if (!a->per_trace) {
        return NULL;
    }
    if (trace >= a->costs_cap) {
        xgrow((void **)&a->costs, &a->costs_cap, (size_t)trace + 1, sizeof *a->costs);
    }
    if (trace + 1 > a->ntraces) {
        a->ntraces = trace + 1;
    }
    struct acct_cost *c = &a->costs[trace];
    /* First change since the latest peak: keep the value it had then. */
    if (c->stamp <= a->peak_serial) {
        c->peak_saved = c->live;
    }
    c->stamp = a->serial;
    return c;
}

static int release_slot(struct accounting *a, uint64_t s, uint32_t thread)
{
    if (s >= a->nslots || !a->slots[s].live) {
        a->t.bad_slots++;
        return MEMFMT_E_CORRUPT;
    }
    struct slot *sl = &a->slots[s];
    uint64_t *last = thread_last(a, thread);
    if (*last && *last == sl->serial && sl->thread == thread) {
        a->t.temporary++;
        struct acct_cost *c = cost_of(a, sl->trace);
        if (c) {
            c->temporary++;
        }
    }
    struct acct_cost *c = cost_of(a, sl->trace);
    if (c) {
        c->live -= sl->size;
        c->live_blocks--;
    }
    a->t.live_bytes -= sl->size;
    a->t.live_blocks--;
    a->t.frees++;
    sl->live = 0;
    return 0;
}

static void allocate(struct accounting *a, const struct memfmt_record *r)
{
    uint64_t s = r->u.alloc.slot;
    if (s >= a->nslots) {
        if (s >= a->slots_cap) {
            xgrow((void **)&a->slots, &a->slots_cap, s + 1, sizeof *a->slots);
        }
        a->nslots = s + 1;
    }
    struct slot *sl = &a->slots[s];
    if (sl->live) {
        /* Corrupt input: a slot taken twice. Close the old block first. */
        a->t.bad_slots++;
        release_slot(a, s, sl->thread);
    }
    sl->size = r->u.alloc.size;
    sl->trace = r->u.alloc.trace;
    sl->thread = r->u.alloc.thread;
    sl->serial = a->serial;
    sl->live = 1;
    *thread_last(a, r->u.alloc.thread) = a->serial;
    a->t.allocations++;
    if (r->u.alloc.kind < MEMFMT_K_COUNT) {
        a->t.calls_by_kind[r->u.alloc.kind]++;
    }
    a->t.allocated_bytes += sl->size;
    a->t.live_bytes += sl->size;
    a->t.live_blocks++;
    struct acct_cost *c = cost_of(a, sl->trace);
    if (c) {
        c->calls++;
        c->allocated += sl->size;
        c->live += sl->size;
        c->live_blocks++;
    }
    if (a->t.live_bytes > a->t.peak_bytes) {
        a->t.peak_bytes = a->t.live_bytes;
        a->t.peak_ms = a->t.last_ms;
        a->peak_serial = a->serial;
    }
}

int accounting_feed(struct accounting *a, const struct memfmt_record *r)
{
    int rc = 0;
    switch (r->tag) {
    case MEMFMT_REC_ALLOC:
        a->serial++;
        allocate(a, r);
        break;
    case MEMFMT_REC_REALLOC:
        a->serial++;
        rc = release_slot(a, r->u.alloc.old_slot, r->u.alloc.thread);
        allocate(a, r);
        break;
    case MEMFMT_REC_FREE:
        a->serial++;
        rc = release_slot(a, r->u.free.slot, r->u.free.thread);
        *thread_last(a, r->u.free.thread) = 0;
        break;
    case MEMFMT_REC_THREAD:
        /* A thread index handed to a new thread starts with no history. */
        if (r->u.thread.index < a->threads_cap) {
            a->last_alloc[r->u.thread.index] = 0;
        }
        break;
    case MEMFMT_REC_TIME:
        if (r->u.time.ms > a->t.last_ms) {
            a->t.last_ms = r->u.time.ms;
        }
        break;
    case MEMFMT_REC_RSS:
        if (r->u.rss.bytes > a->t.peak_rss) {
            a->t.peak_rss = r->u.rss.bytes;
        }
        break;
    case MEMFMT_REC_END:
        if (r->u.end.runtime_ms > a->t.last_ms) {
            a->t.last_ms = r->u.end.runtime_ms;
        }
        break;
    default:
        break;
    }
    return rc;
}

const struct acct_totals *accounting_totals(const struct accounting *a)
{
    return &a->t;
}

uint32_t accounting_ntraces(const struct accounting *a)
{
    return a->ntraces;
}

const struct acct_cost *accounting_cost(const struct accounting *a, uint32_t trace)
{
    if (!a->per_trace || trace >= a->ntraces) {
        return NULL;
    }
    return &a->costs[trace];
}

uint64_t accounting_at_peak(const struct accounting *a, uint32_t trace)
{
    const struct acct_cost *c = accounting_cost(a, trace);
    if (!c) {
        return 0;
    }
    return c->stamp <= a->peak_serial ? c->live : c->peak_saved;
}
