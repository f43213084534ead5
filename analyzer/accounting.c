// SPDX-License-Identifier: MIT
/* Computes memrec's figures from the stream of records (see accounting.h
 * and docs/definitions.md). Peak per trace uses lazy snapshots: a trace
 * saves its live bytes the first time it changes after a new global peak,
 * so finding the peak consumers costs O(1) per event, not O(traces) per
 * new peak. */
#include "accounting.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Sampled figures are kept in 1/SCALE units until accounting_finish(). */
#define SCALE 1024.0

/* The per-trace costs, grown on demand. Trace ids are node ids, and most
 * nodes of a deep tree are callers, never an allocation's own trace: so a
 * trace id maps to a cost only once it has one (4 bytes per id, the
 * costs' 112 bytes per trace that has any). */
struct cost_table {
    uint32_t *slot; /* by trace id: 1 + index into v; 0: no cost yet */
    size_t slot_cap;
    struct acct_cost *v;
    size_t cap;
    size_t n;
};

/* What accounting_cost() gives for a trace without any cost. */
static const struct acct_cost no_cost;

struct accounting {
    int per_trace;
    int sampled; /* sample_rate > 0, tested on every event */
    double sample_rate; /* 0: every event is one allocation */
    int finished;
    struct acct_totals t;
    struct cost_table costs;
    uint32_t ntraces;
    uint64_t serial; /* counts alloc/free events */
    uint64_t peak_serial;
    uint64_t map_serial; /* counts MAP records; the mapped peak's own snapshots */
    uint64_t map_peak_serial;
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
    free(a->costs.slot);
    free(a->costs.v);
    free(a);
}

/* `tab` with a cost for `trace` (its slot made room for). By value, not
 * through a pointer, so that accounting_feed_events() can keep its copy of
 * the accounting in registers (no address of it escapes). */
static __attribute__((noinline)) struct cost_table cost_table_add(struct cost_table tab, uint32_t trace)
{
    xgrow((void **)&tab.slot, &tab.slot_cap, (size_t)trace + 1, sizeof *tab.slot);
    if (tab.slot[trace] == 0) {
        xgrow((void **)&tab.v, &tab.cap, tab.n + 1, sizeof *tab.v);
        tab.slot[trace] = (uint32_t)++tab.n;
    }
    return tab;
}

/* The costs of `trace`, made room for; NULL when only totals are kept. */
static inline struct acct_cost *cost_slot(struct accounting *a, uint32_t trace)
{
    if (!a->per_trace) {
        return NULL;
    }
    if (trace >= a->costs.slot_cap || a->costs.slot[trace] == 0) {
        a->costs = cost_table_add(a->costs, trace);
    }
    if (trace + 1 > a->ntraces) {
        a->ntraces = trace + 1;
    }
    return &a->costs.v[a->costs.slot[trace] - 1];
}

static inline struct acct_cost *cost_of(struct accounting *a, uint32_t trace)
{
    struct acct_cost *c = cost_slot(a, trace);
    if (!c) {
        return NULL;
    }
    /* First change since the latest peak: keep the value it had then. */
    if (c->stamp <= a->peak_serial) {
        c->peak_saved = c->live;
        c->peak_blocks_saved = c->live_blocks;
    }
    c->stamp = a->serial;
    return c;
}

void accounting_set_sample_rate(struct accounting *a, uint64_t rate)
{
    a->sample_rate = (double)rate;
    a->sampled = rate > 0;
}

/* What one event of `size` bytes stands for: one block, `size` bytes; or,
 * sampled, the expected number of blocks and bytes it represents.
 * `sampled` is a->sampled, a parameter so that a caller can make it a
 * constant and lose the test. */
static void weigh_sampled(const struct accounting *a, uint64_t *size, uint64_t *one);

static inline void weigh(const struct accounting *a, int sampled, uint64_t *size, uint64_t *one)
{
    if (!sampled) {
        *one = 1;
        return;
    }
    weigh_sampled(a, size, one);
}

static void weigh_sampled(const struct accounting *a, uint64_t *size, uint64_t *one)
{
    double p = -expm1(-(double)*size / a->sample_rate); /* probability it was sampled */
    double w = p > 0 ? 1.0 / p : 0;
    *one = (uint64_t)llround(w * SCALE);
    *size = (uint64_t)llround((double)*size * w * SCALE);
}

/* Allocator time: summed, never subtracted, so it saturates at
 * ACCT_MAX_TOTAL rather than being refused. Without a branch on the
 * common path. */
static inline uint64_t time_add(uint64_t sum, uint64_t t)
{
    uint64_t r = sum + t;
    return r > ACCT_MAX_TOTAL || r < sum ? ACCT_MAX_TOTAL : r;
}

static inline __attribute__((always_inline)) int release(struct accounting *a, int sampled, uint64_t size,
                                                         uint32_t trace, int temporary, uint64_t ns)
{
    if (size > ACCT_MAX_SIZE || (a->per_trace && trace >= a->ntraces)) {
        /* Never allocated so: refused before the trace can size the table. */
        a->t.bad_frees++;
        return MEMFMT_E_CORRUPT;
    }
    uint64_t one;
    weigh(a, sampled, &size, &one);
    struct acct_cost *c = cost_of(a, trace);
    if (a->t.live_blocks < one || a->t.live_bytes < size || (c && (c->live_blocks < one || c->live < size))) {
        a->t.bad_frees++;
        return MEMFMT_E_CORRUPT;
    }
    /* Without a branch: whether a free is temporary follows the program's
     * calls, too irregular to guess. */
    uint64_t temp_one = one & ((uint64_t)0 - (uint64_t)(temporary != 0));
    a->t.temporary += temp_one;
    /* Sampled, `one` is the weight in 1/SCALE units: the time scales with it. */
    uint64_t t_ns;
    if (__builtin_mul_overflow(ns, one, &t_ns)) {
        t_ns = ACCT_MAX_TOTAL;
    }
    a->t.time_ns = time_add(a->t.time_ns, t_ns);
    if (c) {
        c->time_ns = time_add(c->time_ns, t_ns);
        c->temporary += temp_one;
        c->live -= size;
        c->live_blocks -= one;
    }
    a->t.live_bytes -= size;
    a->t.live_blocks -= one;
    a->t.frees += one;
    return 0;
}

static inline __attribute__((always_inline)) int allocate(struct accounting *a, int sampled, uint64_t size,
                                                          uint32_t trace, uint64_t ns)
{
    if (size > ACCT_MAX_SIZE) {
        a->t.impossible++;
        return MEMFMT_E_CORRUPT;
    }
    uint64_t one;
    weigh(a, sampled, &size, &one);
    if (size > ACCT_MAX_TOTAL - a->t.allocated_bytes || one > ACCT_MAX_TOTAL - a->t.allocations) {
        a->t.beyond_total++;
        return MEMFMT_E_CORRUPT;
    }
    uint64_t t_ns;
    if (__builtin_mul_overflow(ns, one, &t_ns)) {
        t_ns = ACCT_MAX_TOTAL;
    }
    a->t.allocations += one;
    a->t.allocated_bytes += size;
    a->t.live_bytes += size;
    a->t.live_blocks += one;
    a->t.time_ns = time_add(a->t.time_ns, t_ns);
    struct acct_cost *c = cost_of(a, trace);
    if (c) {
        c->time_ns = time_add(c->time_ns, t_ns);
        c->calls += one;
        c->allocated += size;
        c->live += size;
        c->live_blocks += one;
    }
    if (a->t.live_bytes > a->t.peak_bytes) {
        a->t.peak_bytes = a->t.live_bytes;
        a->t.peak_ms = a->t.last_ms;
        a->peak_serial = a->serial;
    }
    return 0;
}

/* ---- direct mappings ---- */

/* The same lazy snapshots as the heap's, on their own serial, so that a
 * mapping never moves the heap peak's snapshots and the reverse. */
static struct acct_cost *map_cost_of(struct accounting *a, uint32_t trace)
{
    struct acct_cost *c = cost_slot(a, trace);
    if (!c) {
        return NULL;
    }
    if (c->mapped_stamp <= a->map_peak_serial) {
        c->mapped_peak_saved = c->mapped;
    }
    c->mapped_stamp = a->map_serial;
    return c;
}

/* Never weighted: mappings are recorded in full, sampling or not. */
static int map_change(struct accounting *a, const struct memfmt_record *r)
{
    a->map_serial++;
    struct acct_cost *c = map_cost_of(a, r->u.map.trace);
    int64_t d = r->u.map.delta;
    if (d >= 0 && (uint64_t)d > ACCT_MAX_TOTAL - a->t.mapped_bytes) {
        a->t.beyond_total++;
        return MEMFMT_E_CORRUPT;
    }
    if (d >= 0) {
        if (r->u.map.call) {
            a->t.mapping_calls++;
            if (c) {
                c->mapping_calls++;
            }
        }
        a->t.mapped_bytes += (uint64_t)d;
        if (c) {
            c->mapped += (uint64_t)d;
        }
        if (a->t.mapped_bytes > a->t.mapped_peak) {
            a->t.mapped_peak = a->t.mapped_bytes;
            a->t.mapped_peak_ms = a->t.last_ms;
            a->map_peak_serial = a->map_serial;
        }
        return 0;
    }
    uint64_t gone = (uint64_t)0 - (uint64_t)d;
    if (a->t.mapped_bytes < gone || (c && c->mapped < gone)) {
        return MEMFMT_E_CORRUPT; /* more unmapped than that trace mapped */
    }
    a->t.mapped_bytes -= gone;
    if (c) {
        c->mapped -= gone;
    }
    return 0;
}

uint64_t accounting_mapped_at_peak(const struct accounting *a, uint32_t trace)
{
    const struct acct_cost *c = accounting_cost(a, trace);
    if (!c) {
        return 0;
    }
    return c->mapped_stamp <= a->map_peak_serial ? c->mapped : c->mapped_peak_saved;
}

static uint64_t event_ns(uint64_t ns)
{
    return ns < ACCT_MAX_EVENT_NS ? ns : ACCT_MAX_EVENT_NS;
}

/* Records other than events: rare, kept out of the hot function. */
static __attribute__((noinline)) void feed_other(struct accounting *a, const struct memfmt_record *r);

int accounting_feed(struct accounting *a, const struct memfmt_record *r)
{
    a->serial++;
    if (r->tag == MEMFMT_REC_ALLOC) {
        return allocate(a, a->sampled, r->u.alloc.size, r->u.alloc.trace, event_ns(r->u.alloc.ns));
    }
    if (r->tag == MEMFMT_REC_FREE) {
        return release(a, a->sampled, r->u.free.size, r->u.free.trace, r->u.free.temporary, event_ns(r->u.free.ns));
    }
    if (r->tag == MEMFMT_REC_REALLOC) {
        /* The whole call's time goes with its allocation, as in the
         * batched events (the free half carries none). */
        int rc = release(a, a->sampled, r->u.alloc.old_size, r->u.alloc.old_trace, r->u.alloc.old_temporary, 0);
        int arc = allocate(a, a->sampled, r->u.alloc.size, r->u.alloc.trace, event_ns(r->u.alloc.ns));
        return rc < 0 ? rc : arc;
    }
    a->serial--; /* not an event */
    if (r->tag == MEMFMT_REC_MAP) {
        return map_change(a, r);
    }
    feed_other(a, r);
    return 0;
}

/* The body of accounting_feed_events(), inlined twice so that the common
 * case, a recording of every allocation, has no weighing at all. Each
 * event is what accounting_feed() does with its record, the trace check
 * being model.c's for records. */
static inline __attribute__((always_inline)) uint64_t
feed_events(struct accounting *a, int sampled, const struct memfmt_event *ev, size_t n, uint32_t ntraces)
{
    uint64_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        const struct memfmt_event *e = &ev[i];
        a->serial++;
        if (!(e->flags & MEMFMT_EV_FREE)) {
            int fixed = e->trace >= ntraces;
            int rc = allocate(a, sampled, e->size, fixed ? 0 : e->trace, e->ns);
            bad += (uint64_t)(fixed | (rc < 0));
            continue;
        }
        /* A trace never defined: its allocation was charged to trace 0. */
        int fixed = e->trace >= ntraces;
        int rc = release(a, sampled, e->size, fixed ? 0 : e->trace, (e->flags & MEMFMT_EV_TEMPORARY) != 0, e->ns);
        int not_applied = (rc < 0) | fixed;
        if ((e->flags & MEMFMT_EV_REALLOC) && i + 1 < n) {
            /* The allocation half: the same event, so the same serial, and
             * counted once. */
            e = &ev[++i];
            fixed = e->trace >= ntraces;
            rc = allocate(a, sampled, e->size, fixed ? 0 : e->trace, e->ns);
            not_applied |= fixed | (rc < 0);
        }
        bad += (uint64_t)not_applied;
    }
    return bad;
}

uint64_t accounting_feed_events(struct accounting *a, const struct memfmt_event *ev, size_t n, uint32_t ntraces)
{
    /* Work on a copy: through `a`, every store to a trace's costs could
     * change the totals and serials as far as the compiler knows, so it
     * would load and store them again for each event; a local whose
     * address never escapes stays in registers. */
    struct accounting l = *a;
    uint64_t bad = l.sampled ? feed_events(&l, 1, ev, n, ntraces) : feed_events(&l, 0, ev, n, ntraces);
    *a = l;
    return bad;
}

/* The scan's totals: the latest REACH wins (one per recording; a second
 * one, from a later scan, replaces the first and its stacks' figures). */
static void take_reach(struct accounting *a, const struct memfmt_record *r)
{
    struct acct_totals *t = &a->t;
    t->has_reach = 1;
    t->reach_status = r->u.reach.status;
    int done = r->u.reach.status == MEMFMT_REACH_DONE;
    /* Sampled, the blocks known are a sample: no figure (the status says so). */
    done = done && !a->sampled;
    t->unreachable_bytes = done ? r->u.reach.unreachable_bytes : 0;
    t->unreachable_blocks = done ? r->u.reach.unreachable_blocks : 0;
    t->indirect_bytes = done ? r->u.reach.indirect_bytes : 0;
    t->indirect_blocks = done ? r->u.reach.indirect_blocks : 0;
    t->possible_bytes = done ? r->u.reach.possible_bytes : 0;
    t->possible_blocks = done ? r->u.reach.possible_blocks : 0;
    /* No more unreachable than leaked: a corrupt file cannot make the
     * reachable part negative. */
    if (t->unreachable_bytes > t->live_bytes || t->unreachable_blocks > t->live_blocks) {
        t->unreachable_bytes = t->live_bytes;
        t->unreachable_blocks = t->live_blocks;
        t->indirect_bytes = t->indirect_bytes < t->unreachable_bytes ? t->indirect_bytes : t->unreachable_bytes;
        t->indirect_blocks = t->indirect_blocks < t->unreachable_blocks ? t->indirect_blocks : t->unreachable_blocks;
    }
    t->reach_cost_ns = r->u.reach.cost_ns;
    t->reach_stopped_ns = r->u.reach.stopped_ns;
    t->reach_threads = r->u.reach.threads;
    t->reach_root_bytes = r->u.reach.root_bytes;
    for (size_t i = 0; i < a->costs.n; i++) {
        struct acct_cost *c = &a->costs.v[i];
        c->unreachable = c->unreachable_blocks = c->indirect = c->indirect_blocks = 0;
        c->possible = c->possible_blocks = 0;
    }
}

/* One stack's figures; only after its REACH, for a trace that has blocks
 * live (the stack's live figures bound them). */
static void take_reach_trace(struct accounting *a, const struct memfmt_record *r)
{
    uint32_t trace = r->u.reach_trace.trace;
    if (!a->per_trace || !a->t.has_reach || a->t.reach_status != MEMFMT_REACH_DONE || a->sampled ||
        trace >= a->ntraces) {
        return;
    }
    if (trace >= a->costs.slot_cap || a->costs.slot[trace] == 0) {
        return;
    }
    struct acct_cost *c = &a->costs.v[a->costs.slot[trace] - 1];
    uint64_t ub = r->u.reach_trace.unreachable_bytes, un = r->u.reach_trace.unreachable_blocks;
    c->unreachable = ub < c->live ? ub : c->live;
    c->unreachable_blocks = un < c->live_blocks ? un : c->live_blocks;
    c->indirect = r->u.reach_trace.indirect_bytes < c->unreachable ? r->u.reach_trace.indirect_bytes : c->unreachable;
    c->indirect_blocks = r->u.reach_trace.indirect_blocks < c->unreachable_blocks ? r->u.reach_trace.indirect_blocks
                                                                                  : c->unreachable_blocks;
    uint64_t left = c->live - c->unreachable, left_n = c->live_blocks - c->unreachable_blocks;
    c->possible = r->u.reach_trace.possible_bytes < left ? r->u.reach_trace.possible_bytes : left;
    c->possible_blocks = r->u.reach_trace.possible_blocks < left_n ? r->u.reach_trace.possible_blocks : left_n;
}

static void feed_other(struct accounting *a, const struct memfmt_record *r)
{
    switch (r->tag) {
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
    case MEMFMT_REC_REACH: take_reach(a, r); break;
    case MEMFMT_REC_REACH_TRACE: take_reach_trace(a, r); break;
    default: break;
    }
}

static uint64_t unscale(uint64_t v)
{
    return (uint64_t)llround((double)v / SCALE);
}

void accounting_finish(struct accounting *a)
{
    if (a->sample_rate <= 0 || a->finished) {
        return;
    }
    a->finished = 1;
    struct acct_totals *t = &a->t;
    uint64_t *fields[] = {&t->allocations, &t->temporary,   &t->frees,      &t->allocated_bytes,
                          &t->live_bytes,  &t->live_blocks, &t->peak_bytes, &t->time_ns};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        *fields[i] = unscale(*fields[i]);
    }
    for (size_t i = 0; i < a->costs.n; i++) {
        struct acct_cost *c = &a->costs.v[i];
        c->calls = unscale(c->calls);
        c->temporary = unscale(c->temporary);
        c->allocated = unscale(c->allocated);
        c->live = unscale(c->live);
        c->live_blocks = unscale(c->live_blocks);
        c->peak_saved = unscale(c->peak_saved);
        c->time_ns = unscale(c->time_ns);
        c->peak_blocks_saved = unscale(c->peak_blocks_saved);
    }
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
    if (trace >= a->costs.slot_cap || a->costs.slot[trace] == 0) {
        return &no_cost;
    }
    return &a->costs.v[a->costs.slot[trace] - 1];
}

uint64_t accounting_at_peak(const struct accounting *a, uint32_t trace)
{
    const struct acct_cost *c = accounting_cost(a, trace);
    if (!c) {
        return 0;
    }
    return c->stamp <= a->peak_serial ? c->live : c->peak_saved;
}

uint64_t accounting_blocks_at_peak(const struct accounting *a, uint32_t trace)
{
    const struct acct_cost *c = accounting_cost(a, trace);
    if (!c) {
        return 0;
    }
    return c->stamp <= a->peak_serial ? c->live_blocks : c->peak_blocks_saved;
}
