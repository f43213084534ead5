// SPDX-License-Identifier: MIT
/* One pass over a recording for a query (analysis.h): each event is
 * decided kept or not, the kept ones go to an accounting in batches, as
 * model.c feeds its own, and the series and histogram follow the kept
 * blocks. Nothing here sizes an array by an id read from the file: trace
 * ids are checked against the nodes defined so far. */
#define _GNU_SOURCE
#include "analysis.h"

#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "readahead.h"
#include "util.h"

#define EVENT_BATCH 512

/* Which kind a live block of a (size, trace) pair is. */
enum { OLD, KEPT, OTHER, NKINDS };

/* A (size, trace) pair's live blocks of each kind, in an array indexed by
 * the pair's info id: the file numbers its pairs (docs/format.md) and
 * every event names its pair's id, so telling blocks apart costs one array
 * access per event, no hashing. Counts are 32 bits: they saturate rather
 * than wrap, which no real process reaches (4 billion live blocks of one
 * size and stack). The array grows with the ids met, which the reader
 * bounds by the pairs the file defines. */
struct pair {
    uint32_t live[NKINDS];
};

/* What the pass keeps per trace-tree node. */
struct node_state {
    uint64_t map_other; /* mapped bytes not kept */
    uint64_t tracked; /* live blocks of kinds OLD and KEPT of this trace */
};

struct pass {
    const struct analysis_query *q;
    const struct model *m;
    struct analysis *a;
    uint32_t ntraces; /* nodes defined so far, at most the model's */
    uint64_t now; /* latest TIME */
    int in_window;
    int pair_mode; /* a window or a thread: frees must be told apart */
    struct pair *pairs; /* by info id */
    size_t pairs_cap;
    uint32_t max_info; /* largest id made so far */
    struct node_state *per_node; /* indexed by trace (node) */
    size_t per_node_cap;
    int stopped; /* the --at moment was reached: the rest is not read */
    int skip_events; /* nothing restricted (streaming): the model's accounting is the figures */
    /* The series' values now, and the largest since the latest tick (the
     * log) or since the latest point (a series made at the start). */
    struct ts_values cur, hi;
    int direct; /* the run's length was known at the start: the series' points are filled as the clock passes them */
    struct ts_log log; /* else the series' ticks (timeseries.h), made into its points at the end */
    struct ts_group_values *gcur; /* series groups: each one's values now (NULL: none) */
    struct ts_group_values *ghi; /* and when the heap last reached gpeak */
    uint64_t gpeak; /* the heap's largest since the groups' latest point */
    struct memfmt_event out[EVENT_BATCH];
    size_t nout;
};

/* ---- (size, trace) pairs ---- */

/* The pair with info id `info`, made (zero) when `make`; NULL for id 0 or
 * an id not met yet without `make`. */
static struct pair *pair_of(struct pass *p, uint32_t info, int make)
{
    return idmap_dense((void **)&p->pairs, &p->pairs_cap, &p->max_info, info, make, sizeof *p->pairs);
}

/* ---- events ---- */

static int keeps_trace(const struct pass *p, uint32_t trace)
{
    return !p->q->keep || p->q->keep[trace];
}

/* 1 once the window is over (with no thread chosen: a thread's blocks
 * must be told from others' to the end). */
static int past_window(const struct pass *p)
{
    return p->q->has_window && !p->q->thread && p->now >= p->q->to_ms;
}

/* Where a block not kept goes: before the window, or something else. */
static int not_kept_kind(const struct pass *p)
{
    return p->q->has_window && p->now < p->q->from_ms ? OLD : OTHER;
}

/* The series group a kept block of `trace` counts in too; NULL for none. */
static struct ts_group_values *group_of(struct pass *p, uint32_t trace)
{
    if (!p->gcur || trace >= p->m->nnodes || p->q->series_group[trace] == 0) {
        return NULL;
    }
    return &p->gcur[p->q->series_group[trace] - 1];
}

/* The node a kept block of `trace` is charged to (analysis_query.remap). */
static uint32_t charged(const struct pass *p, uint32_t trace)
{
    if (!p->q->remap || trace >= p->m->nnodes) {
        return trace;
    }
    uint32_t to = p->q->remap[trace];
    return to <= trace ? to : trace;
}

static void flush(struct pass *p)
{
    if (p->nout == 0) {
        return;
    }
    if (p->skip_events) {
        p->nout = 0;
        return;
    }
    p->a->bad_events += accounting_feed_events(p->a->acct, p->out, p->nout, p->ntraces);
    p->nout = 0;
}

static void emit(struct pass *p, uint64_t size, uint32_t trace, uint32_t flags, uint32_t ns)
{
    if (p->nout == EVENT_BATCH) {
        flush(p);
    }
    p->out[p->nout].size = size;
    p->out[p->nout].trace = trace;
    p->out[p->nout].flags = flags;
    p->out[p->nout].info = 0; /* the accounting does not read it */
    p->out[p->nout].ns = ns; /* allocator time goes with the kept event */
    p->nout++;
}

static int on_alloc(struct pass *p, uint64_t size, uint32_t trace, uint32_t info, uint32_t ns, int thread_ok)
{
    if (size > ACCT_MAX_SIZE) {
        /* Impossible (corrupt input): refused as model.c's accounting
         * refuses it, so that no figure, series or histogram counts it. */
        p->a->bad_events++;
        return 0;
    }
    if (trace >= p->ntraces) {
        trace = 0; /* a node not defined yet: no stack, as model.c counts it */
    }
    int kept = p->in_window && thread_ok && keeps_trace(p, trace);
    if (p->pair_mode) {
        int kind = kept ? KEPT : not_kept_kind(p);
        /* After the window, no block of a kind that counts comes any more:
         * a pair that has none needs no count (on_free takes a missing
         * pair for such a block), and a stack with none live needs no
         * look-up at all. */
        uint64_t *tracked = &p->per_node[trace].tracked;
        struct pair *pr = kind != OTHER || !past_window(p) ? pair_of(p, info, 1)
                          : *tracked                       ? pair_of(p, info, 0)
                                                           : NULL;
        if (pr) {
            pr->live[kind] += pr->live[kind] < UINT32_MAX;
            *tracked += kind != OTHER;
        }
    }
    if (!kept) {
        return 0;
    }
    emit(p, size, charged(p, trace), 0, ns);
    struct ts_group_values *g = group_of(p, trace);
    if (g) {
        g->live += size;
        g->calls++;
    }
    p->cur.heap += size;
    if (p->cur.heap > p->hi.heap) {
        p->hi.heap = p->cur.heap;
    }
    if (p->gcur && p->cur.heap > p->gpeak) {
        p->gpeak = p->cur.heap;
        memcpy(p->ghi, p->gcur, p->q->series_groups * sizeof *p->gcur);
    }
    p->hi.calls = ++p->cur.calls;
    if (p->a->sizes) {
        sizes_add(p->a->sizes, size);
        if (p->q->sizes > 1) {
            sizes_add_site(p->a->sizes, trace, size);
        }
    }
    return 1;
}

/* Which kind of block a free takes (analysis.h: oldest kind first; a
 * temporary is the newest). Returns -1 when the pair has no live block. */
static int take(struct pass *p, struct pair *pr, int temporary, int thread_ok)
{
    int order[NKINDS];
    if (temporary) {
        int first = p->in_window && thread_ok ? KEPT : not_kept_kind(p);
        order[0] = first;
        order[1] = first == KEPT ? OTHER : KEPT;
        order[2] = first == OLD ? OTHER : OLD;
    } else {
        order[0] = OLD;
        order[1] = thread_ok ? KEPT : OTHER;
        order[2] = thread_ok ? OTHER : KEPT;
    }
    for (int i = 0; i < NKINDS; i++) {
        if (pr->live[order[i]] > 0) {
            pr->live[order[i]]--;
            return order[i];
        }
    }
    return -1;
}

static int on_free(struct pass *p, uint64_t size, uint32_t trace, uint32_t info, int temporary, uint32_t ns,
                   int thread_ok)
{
    if (trace >= p->ntraces || !keeps_trace(p, trace)) {
        p->a->bad_events += trace >= p->ntraces;
        return 0;
    }
    if (p->pair_mode) {
        int past = past_window(p);
        uint64_t *tracked = &p->per_node[trace].tracked;
        struct pair *pr = past && !*tracked ? NULL : pair_of(p, info, 0);
        int kind = pr ? take(p, pr, temporary, thread_ok) : -1;
        if (kind < 0) {
            /* After the window, an uncounted block (on_alloc). */
            p->a->bad_events += !past;
            return 0;
        }
        *tracked -= kind != OTHER && *tracked > 0;
        if (kind == OLD && p->in_window) {
            p->a->earlier_freed_blocks++;
            p->a->earlier_freed_bytes += size;
        }
        if (kind != KEPT) {
            return 0;
        }
    }
    emit(p, size, charged(p, trace), MEMFMT_EV_FREE | (temporary ? MEMFMT_EV_TEMPORARY : 0), ns);
    p->cur.heap = p->cur.heap >= size ? p->cur.heap - size : 0;
    p->cur.temporary += temporary != 0;
    p->hi.temporary = p->cur.temporary;
    struct ts_group_values *g = group_of(p, trace);
    if (g) {
        g->live = g->live >= size ? g->live - size : 0;
        g->temporary += temporary != 0;
    }
    if (temporary && p->a->sizes) {
        sizes_add_temporary(p->a->sizes, size);
    }
    return 1;
}

/* A realloc: its free, then its allocation; marked as one when both are kept. */
static void on_realloc(struct pass *p, const struct memfmt_event *old, const struct memfmt_event *now, int thread_ok)
{
    int freed =
        on_free(p, old->size, old->trace, old->info, (old->flags & MEMFMT_EV_TEMPORARY) != 0, old->ns, thread_ok);
    size_t at = p->nout;
    if (on_alloc(p, now->size, now->trace, now->info, now->ns, thread_ok) && freed && at > 0 && p->nout == at + 1) {
        p->out[at - 1].flags |= MEMFMT_EV_REALLOC;
    }
}

/* Growth follows every block the filters keep, whenever it was allocated:
 * a cache filled before the window is flat in it, not absent. */
static void growth_record(struct pass *p, uint64_t size, uint32_t trace, int freed, int thread_ok)
{
    trace = trace < p->ntraces ? trace : 0;
    if (p->a->growth && thread_ok && keeps_trace(p, trace) && size <= ACCT_MAX_SIZE) {
        growth_event(p->a->growth, trace, size, freed);
    }
}

/* The series alone, of every block (nothing restricted: the model
 * accounts the events): what on_alloc() and on_free() do to the values,
 * without a batch to emit, in one tight loop whose values stay in
 * registers. A realloc is its free, then its allocation, as there. */
static void series_events(struct pass *p, const struct memfmt_event *ev, size_t n)
{
    struct ts_values cur = p->cur, hi = p->hi;
    uint64_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t size = ev[i].size;
        if (!(ev[i].flags & MEMFMT_EV_FREE)) {
            if (size > ACCT_MAX_SIZE) {
                bad++;
                continue;
            }
            cur.heap += size;
            cur.calls++;
            hi.heap = cur.heap > hi.heap ? cur.heap : hi.heap;
        } else if (ev[i].trace < p->ntraces) {
            cur.heap = cur.heap >= size ? cur.heap - size : 0;
            cur.temporary += (ev[i].flags & MEMFMT_EV_TEMPORARY) != 0;
        } else {
            bad++;
        }
    }
    hi.calls = cur.calls;
    hi.temporary = cur.temporary;
    p->cur = cur;
    p->hi = hi;
    p->a->bad_events += bad;
}

static void on_events(struct pass *p, const struct memfmt_event *ev, size_t n)
{
    if (p->a->growth) {
        growth_feed(p->a->growth, ev, n, p->ntraces, p->q->keep);
        if (p->skip_events && !p->pair_mode && !p->q->series_points && !p->a->sizes) {
            return; /* nothing but growth asked */
        }
    }
    if (p->skip_events && !p->pair_mode && p->q->series_points && !p->gcur && !p->a->sizes) {
        series_events(p, ev, n);
        return;
    }
    if (p->skip_events && !p->pair_mode && !p->q->series_points && p->a->sizes) {
        /* Nothing restricted, no series: only the histogram needs the
         * events (the heap total is the series'), in one tight loop. */
        for (size_t i = 0; i < n; i++) {
            if (!(ev[i].flags & MEMFMT_EV_FREE)) {
                sizes_add(p->a->sizes, ev[i].size);
                if (p->q->sizes > 1) {
                    sizes_add_site(p->a->sizes, ev[i].trace < p->ntraces ? ev[i].trace : 0, ev[i].size);
                }
            } else if (ev[i].flags & MEMFMT_EV_TEMPORARY) {
                sizes_add_temporary(p->a->sizes, ev[i].size);
            }
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const struct memfmt_event *e = &ev[i];
        if (!(e->flags & MEMFMT_EV_FREE)) {
            on_alloc(p, e->size, e->trace, e->info, e->ns, 1);
        } else if ((e->flags & MEMFMT_EV_REALLOC) && i + 1 < n) {
            on_realloc(p, e, &ev[i + 1], 1);
            i++;
        } else {
            on_free(p, e->size, e->trace, e->info, (e->flags & MEMFMT_EV_TEMPORARY) != 0, e->ns, 1);
        }
    }
    flush(p);
}

/* ---- other records ---- */

static void on_map(struct pass *p, const struct memfmt_record *r)
{
    struct memfmt_record fixed = *r;
    uint32_t trace = r->u.map.trace < p->ntraces ? r->u.map.trace : 0;
    int kept_node = keeps_trace(p, trace);
    trace = charged(p, trace);
    fixed.u.map.trace = trace;
    int thread_ok = !p->q->thread || r->u.map.thread == p->q->thread;
    if (r->u.map.delta >= 0) {
        if (!(p->in_window && thread_ok && kept_node)) {
            p->per_node[trace].map_other += (uint64_t)r->u.map.delta;
            return;
        }
    } else {
        uint64_t gone = (uint64_t)0 - (uint64_t)r->u.map.delta;
        uint64_t from_other = gone < p->per_node[trace].map_other ? gone : p->per_node[trace].map_other;
        p->per_node[trace].map_other -= from_other;
        gone -= from_other;
        const struct acct_cost *c = accounting_cost(p->a->acct, trace);
        uint64_t have = c ? c->mapped : 0;
        if (gone > have) {
            gone = have; /* more than was mapped: only what was (corrupt input) */
        }
        if (gone == 0) {
            return;
        }
        fixed.u.map.delta = -(int64_t)gone;
    }
    accounting_feed(p->a->acct, &fixed);
    const struct acct_totals *t = accounting_totals(p->a->acct);
    p->cur.mapped = t->mapped_bytes;
    if (p->cur.mapped > p->hi.mapped) {
        p->hi.mapped = p->cur.mapped;
    }
}

static void set_time(struct pass *p, uint64_t ms)
{
    if (ms <= p->now) {
        return;
    }
    if (p->direct && p->a->series) {
        /* The points are known (analysis_run: the model is loaded). */
        if (timeseries_reach_groups(p->a->series, ms, p->gcur, p->ghi) > 0) {
            p->gpeak = p->cur.heap;
        }
        timeseries_reach(p->a->series, ms, &p->cur, &p->hi);
    } else if (p->q->series_points) {
        /* Streaming: the run's length comes at the end; log the tick. */
        timeseries_log_tick(&p->log, ms, &p->cur, &p->hi);
        p->hi = p->cur;
    }
    p->now = ms;
    if (p->a->growth) {
        growth_time(p->a->growth, ms);
    }
    p->in_window = !p->q->has_window || (ms >= p->q->from_ms && ms < p->q->to_ms);
}

/* A record's allocator time as the batched events carry it (saturated). */
static uint32_t record_ns(uint64_t ns)
{
    return ns < ACCT_MAX_EVENT_NS ? (uint32_t)ns : (uint32_t)ACCT_MAX_EVENT_NS;
}

/* Returns 1 when reading must stop (the --at moment is reached). */
static int on_record(struct pass *p, const struct memfmt_record *r)
{
    int thread_ok;
    switch (r->tag) {
    case MEMFMT_REC_NODE:
        if (p->ntraces < p->m->nnodes) {
            p->ntraces++;
            /* Mapped bytes per node, grown as nodes come (streaming: the
             * model grows along). */
            if (p->ntraces + 1 > p->per_node_cap) {
                size_t old = p->per_node_cap;
                xgrow((void **)&p->per_node, &p->per_node_cap, (size_t)p->ntraces + 1, sizeof *p->per_node);
                memset(p->per_node + old, 0, (p->per_node_cap - old) * sizeof *p->per_node);
            }
        }
        return 0;
    case MEMFMT_REC_TIME:
        if (p->q->has_at && r->u.time.ms >= p->q->at_ms) {
            return 1;
        }
        set_time(p, r->u.time.ms);
        break;
    case MEMFMT_REC_LAYOUT:
        /* Its refused traces are counted by the model's load already. */
        if (r->u.layout.heap == MEMFMT_HEAP_MAIN) {
            p->a->arenas.known = 0; /* the arenas' of this state, if any, come right after it */
        }
        if (r->u.layout.heap == MEMFMT_HEAP_MAIN || r->u.layout.heap == MEMFMT_HEAP_ARENAS) {
            heaplayout_take(r->u.layout.heap == MEMFMT_HEAP_MAIN ? &p->a->layout : &p->a->arenas, r, p->now,
                            p->ntraces);
        }
        break;
    case MEMFMT_REC_RSS:
        p->cur.rss = r->u.rss.bytes;
        if (p->cur.rss > p->hi.rss) {
            p->hi.rss = p->cur.rss;
        }
        break;
    case MEMFMT_REC_MAP: on_map(p, r); return 0;
    case MEMFMT_REC_ALLOC:
        growth_record(p, r->u.alloc.size, r->u.alloc.trace, 0, !p->q->thread || r->u.alloc.thread == p->q->thread);
        on_alloc(p, r->u.alloc.size, r->u.alloc.trace, r->u.alloc.info, record_ns(r->u.alloc.ns),
                 !p->q->thread || r->u.alloc.thread == p->q->thread);
        return 0;
    case MEMFMT_REC_FREE:
        thread_ok = !p->q->thread || r->u.free.thread == p->q->thread;
        growth_record(p, r->u.free.size, r->u.free.trace, 1, thread_ok);
        on_free(p, r->u.free.size, r->u.free.trace, r->u.free.info, r->u.free.temporary, record_ns(r->u.free.ns),
                thread_ok);
        return 0;
    case MEMFMT_REC_REALLOC: {
        thread_ok = !p->q->thread || r->u.alloc.thread == p->q->thread;
        growth_record(p, r->u.alloc.old_size, r->u.alloc.old_trace, 1, thread_ok);
        growth_record(p, r->u.alloc.size, r->u.alloc.trace, 0, thread_ok);
        struct memfmt_event old = {r->u.alloc.old_size, r->u.alloc.old_trace,
                                   MEMFMT_EV_FREE | (r->u.alloc.old_temporary ? MEMFMT_EV_TEMPORARY : 0),
                                   r->u.alloc.old_info, 0};
        struct memfmt_event now = {r->u.alloc.size, r->u.alloc.trace, 0, r->u.alloc.info, record_ns(r->u.alloc.ns)};
        on_realloc(p, &old, &now, thread_ok);
        return 0;
    }
    case MEMFMT_REC_REACH:
    case MEMFMT_REC_REACH_TRACE:
        /* What was reachable at the end is the whole run's: a window,
         * a thread or a stack filter keeps only some of those blocks, so
         * their figures are the model's alone (unfiltered, it equals it). */
        if (!p->q->has_window && !p->q->has_at && !p->q->thread && !p->q->keep) {
            accounting_feed(p->a->acct, r);
        }
        return 0;
    case MEMFMT_REC_PROCESS:
        /* The sample rate is the model's, set before the first event
         * (streaming: the model has just read it). */
        if (p->m->sample_rate && accounting_totals(p->a->acct)->allocations == 0) {
            accounting_set_sample_rate(p->a->acct, p->m->sample_rate);
        }
        if (p->a->growth) {
            growth_set_sample_rate(p->a->growth, p->m->sample_rate);
        }
        return 0;
    default: break;
    }
    accounting_feed(p->a->acct, r); /* TIME, RSS, END: the clock and the RSS peak */
    return 0;
}

/* ---- the pass ---- */

void analysis_free(struct analysis *a)
{
    if (!a) {
        return;
    }
    accounting_free(a->acct);
    timeseries_free(a->series);
    sizes_free(a->sizes);
    growth_free(a->growth);
    free(a);
}

static int query_ok(const struct analysis_query *q)
{
    int groups_ok =
        !q->series_group || (q->series_points && q->series_groups >= 1 && q->series_groups <= TIMESERIES_MAX_GROUPS);
    return q->series_points <= TIMESERIES_MAX_POINTS && !(q->has_window && q->from_ms >= q->to_ms) && groups_ok;
}

/* A pass over `m`'s recording (which may still be loading: streaming). */
static struct pass *pass_new(const struct model *m, const struct analysis_query *q, uint64_t end_ms, int direct)
{
    struct analysis *a = xcalloc(1, sizeof *a);
    a->acct = accounting_new(1);
    if (m->sample_rate) {
        accounting_set_sample_rate(a->acct, m->sample_rate);
    }
    a->end_ms = end_ms;
    if (q->series_points && direct) {
        a->series = timeseries_new(q->series_points, a->end_ms);
    }
    if (q->sizes) {
        a->sizes = sizes_new();
    }
    if (q->growth) {
        /* The window's end is inclusive for the points; --at ends it too. */
        uint64_t from = q->has_window ? q->from_ms : 0;
        uint64_t to = q->has_window && q->to_ms != UINT64_MAX ? q->to_ms - 1 : UINT64_MAX;
        if (q->has_at && q->at_ms < to) {
            to = q->at_ms;
        }
        a->growth = growth_new(from, to, m->sample_rate);
    }
    struct pass *p = xcalloc(1, sizeof *p);
    if (a->series && q->series_group) {
        timeseries_set_groups(a->series, q->series_groups);
        p->gcur = xcalloc(q->series_groups, sizeof *p->gcur);
        p->ghi = xcalloc(q->series_groups, sizeof *p->ghi);
    }
    p->q = q;
    p->m = m;
    p->a = a;
    p->direct = direct;
    p->ntraces = m->nnodes ? 1 : 0; /* the root */
    p->pair_mode = q->has_window || q->thread;
    p->skip_events = !q->has_window && !q->has_at && !q->thread && !q->keep && !q->remap;
    /* Exactly one per node, zeroed by calloc: pages of nodes no event names are never touched. */
    p->per_node_cap = (size_t)m->nnodes + 1;
    p->per_node = xcalloc(p->per_node_cap, sizeof *p->per_node);
    p->in_window = !q->has_window || q->from_ms == 0;
    return p;
}

/* Called by the reader for one batch of events or one record. */
static void pass_events(struct pass *p, const struct memfmt_event *ev, size_t n)
{
    if (!p->stopped) {
        on_events(p, ev, n);
    }
}

static void pass_record(struct pass *p, const struct memfmt_record *rec)
{
    if (p->stopped) {
        return;
    }
    flush(p); /* the order of events and records is the file's */
    if (on_record(p, rec)) {
        p->stopped = 1;
    }
}

/* What the pass keeps besides its figures. */
static void pass_release(struct pass *p)
{
    timeseries_log_release(&p->log);
    free(p->pairs);
    free(p->gcur);
    free(p->ghi);
    free(p->per_node);
    free(p);
}

/* The figures, ending at `end_ms`; `m` is the whole model (its
 * accounting holds the events when the pass skipped them). */
static struct analysis *pass_finish(struct pass *p, const struct model *m, uint64_t end_ms)
{
    struct analysis *a = p->a;
    flush(p);
    accounting_finish(a->acct);
    a->end_ms = end_ms;
    if (p->q->series_points && !p->direct && !p->log.overflow) {
        a->series = timeseries_new(p->q->series_points, end_ms);
        timeseries_fill(a->series, &p->log, &p->cur, &p->hi);
    } else if (a->series) {
        timeseries_reach_groups(a->series, UINT64_MAX, p->gcur, p->ghi);
        timeseries_reach(a->series, UINT64_MAX, &p->cur, &p->hi);
    }
    if (a->series) {
        /* The peaks are the accounting's: the model's when the pass left
         * the events to it. */
        const struct acct_totals *t = accounting_totals(p->skip_events ? m->acct : a->acct);
        a->series->peak_bytes = t->peak_bytes;
        a->series->peak_ms = t->peak_ms;
        a->series->mapped_peak = t->mapped_peak;
        a->series->mapped_peak_ms = t->mapped_peak_ms;
        a->series->rss_peak = t->peak_rss;
    }
    pass_release(p);
    return a;
}

int analysis_run(const char *path, const struct model *m, const struct analysis_query *q, struct analysis **out,
                 int *err_errno)
{
    *out = NULL;
    *err_errno = 0;
    if (!query_ok(q)) {
        return MEMFMT_E_INVALID;
    }
    int rc;
    memfmt_reader *rd = memfmt_reader_open(path, &rc);
    if (!rd) {
        *err_errno = errno;
        return rc;
    }
    struct pass *p = pass_new(m, q, q->has_at ? q->at_ms : model_runtime_ms(m), 1);
    /* Everything is re-accounted here: the model's figures are not the query's. */
    p->skip_events = 0;
    /* The batches carry no thread: with a thread chosen, read records.
     * Batches are read and decoded on the second core (readahead.h). */
    struct memfmt_record rec;
    struct readahead *ra = q->thread ? NULL : readahead_new(rd);
    const struct memfmt_record *r = &rec;
    const struct memfmt_event *evs = NULL;
    size_t n = 0;
    while (!p->stopped) {
        if (q->thread) {
            rc = memfmt_read(rd, &rec);
        } else {
            rc = readahead_next(ra, &r, &evs, &n);
        }
        if (rc <= 0) {
            break;
        }
        if (!q->thread && n > 0) {
            pass_events(p, evs, n);
        } else {
            pass_record(p, r);
        }
    }
    readahead_free(ra); /* the thread stops: the reader's offset is where it stopped */
    struct analysis *a = p->a;
    if (rc < 0) {
        a->stop_rc = rc;
        a->stop_offset = memfmt_reader_offset(rd);
        if (rc == MEMFMT_E_IO) {
            *err_errno = memfmt_reader_errno(rd);
        }
    }
    memfmt_reader_free(rd);
    *out = pass_finish(p, m, a->end_ms);
    if ((*out)->growth) {
        growth_finish((*out)->growth, (*out)->end_ms);
    }
    return 0;
}

/* ---- streaming: the pass fed by model_load ---- */

struct analysis_stream {
    struct analysis_query q; /* a copy: the caller's may go */
    struct pass *p; /* made at the first record, when the model exists */
};

int analysis_streamable(const struct analysis_query *q)
{
    return query_ok(q) && !q->keep && !q->series_group && !q->thread && !q->remap;
}

static void stream_events(void *ctx, const struct model *m, const struct memfmt_event *ev, size_t n)
{
    struct analysis_stream *s = ctx;
    if (!s->p) {
        s->p = pass_new(m, &s->q, 0, 0);
    }
    pass_events(s->p, ev, n);
}

static void stream_record(void *ctx, const struct model *m, const struct memfmt_record *rec)
{
    struct analysis_stream *s = ctx;
    if (!s->p) {
        s->p = pass_new(m, &s->q, 0, 0);
    }
    pass_record(s->p, rec);
}

struct analysis_stream *analysis_stream_new(const struct analysis_query *q, struct model_hook *hook)
{
    if (!analysis_streamable(q)) {
        return NULL;
    }
    struct analysis_stream *s = xcalloc(1, sizeof *s);
    s->q = *q;
    hook->ctx = s;
    /* A restricted query's figures replace the model's: its events need
     * not be accounted twice. With only sizes asked, the model's are the
     * figures (skip_events). */
    hook->replaces_events = q->has_window || q->has_at;
    hook->events = stream_events;
    hook->record = stream_record;
    return s;
}

struct analysis *analysis_stream_finish(struct analysis_stream *s, const struct model *m)
{
    if (!s->p) {
        s->p = pass_new(m, &s->q, 0, 0); /* nothing was read */
    }
    struct analysis *a = pass_finish(s->p, m, s->q.has_at ? s->q.at_ms : model_runtime_ms(m));
    if (a->growth) {
        growth_finish(a->growth, a->end_ms);
    }
    a->stop_rc = m->stop_rc;
    a->stop_offset = m->stop_offset;
    free(s);
    return a;
}

void analysis_stream_free(struct analysis_stream *s)
{
    if (!s) {
        return;
    }
    if (s->p) {
        analysis_free(s->p->a);
        pass_release(s->p);
    }
    free(s);
}

/* ---- function filter ---- */

static int frames_match(struct frames *fr, uint32_t node, const regex_t *re, enum analysis_field field)
{
    uint32_t n;
    const struct sym_frame *f = frames_of_node(fr, node, &n);
    for (uint32_t i = 0; i < n; i++) {
        int hit;
        if (field == ANALYSIS_FIELD_FUNCTION) {
            char *name = frames_name_dup(&f[i]);
            hit = regexec(re, name, 0, NULL, 0) == 0;
            free(name);
        } else {
            const char *s = field == ANALYSIS_FIELD_FILE ? f[i].file : f[i].module;
            hit = s && regexec(re, s, 0, NULL, 0) == 0;
        }
        if (hit) {
            return 1;
        }
    }
    return 0;
}

int analysis_keep_functions(struct frames *fr, const char *keep, const char *exclude, uint8_t **mask, char *errbuf,
                            size_t errcap)
{
    return analysis_keep_frames(fr, ANALYSIS_FIELD_FUNCTION, keep, exclude, mask, errbuf, errcap);
}

int analysis_keep_frames(struct frames *fr, enum analysis_field field, const char *keep, const char *exclude,
                         uint8_t **mask, char *errbuf, size_t errcap)
{
    const struct model *m = frames_model(fr);
    regex_t kre, xre;
    int rc;
    *mask = NULL;
    if (keep && (rc = regcomp(&kre, keep, REG_EXTENDED | REG_NOSUB)) != 0) {
        regerror(rc, &kre, errbuf, errcap);
        return MEMFMT_E_INVALID;
    }
    if (exclude && (rc = regcomp(&xre, exclude, REG_EXTENDED | REG_NOSUB)) != 0) {
        regerror(rc, &xre, errbuf, errcap);
        if (keep) {
            regfree(&kre);
        }
        return MEMFMT_E_INVALID;
    }
    /* Bit 0: a frame from main() to this node matches `keep`; bit 1:
     * `exclude`; bit 2: computed. Only traces (nodes with an allocation or
     * a mapping in the whole run) are asked for: the walk up from each
     * stops at a computed node or at main(), so nodes above main() are not
     * symbolized. */
    uint8_t *hit = xcalloc((size_t)m->nnodes + 1, 1);
    uint32_t *path = xmalloc(((size_t)m->nnodes + 1) * sizeof *path);
    uint8_t *res = xcalloc((size_t)m->nnodes + 1, 1);
    hit[0] = 4;
    for (uint32_t tid = 0; tid < m->nnodes; tid++) {
        const struct acct_cost *c = accounting_cost(m->acct, tid);
        if (!c || (c->calls == 0 && c->mapping_calls == 0)) {
            continue;
        }
        size_t np = 0;
        uint8_t h = 0;
        for (uint32_t x = tid;;) {
            if (hit[x] & 4) {
                h = hit[x];
                break;
            }
            path[np++] = x;
            if (frames_node_is_main(fr, x)) {
                break;
            }
            uint32_t p = m->nodes[x].parent;
            x = p < x ? p : 0;
        }
        h &= 3;
        while (np-- > 0) {
            uint32_t x = path[np];
            if (keep && !(h & 1) && frames_match(fr, x, &kre, field)) {
                h |= 1;
            }
            if (exclude && !(h & 2) && frames_match(fr, x, &xre, field)) {
                h |= 2;
            }
            hit[x] = h | 4;
        }
        res[tid] = (!keep || (h & 1)) && !(h & 2);
    }
    free(path);
    free(hit);
    if (keep) {
        regfree(&kre);
    }
    if (exclude) {
        regfree(&xre);
    }
    *mask = res;
    return 0;
}
