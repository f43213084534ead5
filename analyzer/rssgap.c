// SPDX-License-Identifier: MIT
/* RSS versus heap: keeps the moment where RSS exceeded the live heap the
 * most while the recording streams by, splits that RSS into its parts and
 * prints them (text and JSON). Every figure of the section is computed
 * here once; memprint and memtui only call the printers. */
#include "rssgap.h"

#include <inttypes.h>
#include <stdlib.h>

#include "util.h"

/* Sums of fields a file may set to anything: saturate rather than wrap. */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

static int64_t diff_sat(uint64_t a, uint64_t b)
{
    const uint64_t lim = (uint64_t)INT64_MAX;
    if (a >= b) {
        return a - b > lim ? INT64_MAX : (int64_t)(a - b);
    }
    return b - a > lim ? -INT64_MAX : -(int64_t)(b - a);
}

static int64_t gap_of(const struct rssgap_moment *m)
{
    return diff_sat(m->rss, m->live_heap);
}

static void take(struct rssgap *g, struct rssgap_moment *m, const struct acct_totals *t)
{
    m->ms = g->ms;
    m->rss = g->rss;
    m->live_heap = t->live_bytes;
    m->live_blocks = t->live_blocks;
    m->mapped = t->mapped_bytes;
    m->events = add_sat(t->allocations, t->frees);
    m->layout = g->layout;
    m->arenas = g->arenas;
}

static void offer(struct rssgap *g, int kind, const struct rssgap_moment *m)
{
    if (!g->have[kind] || gap_of(m) > gap_of(&g->best[kind])) {
        g->best[kind] = *m;
        g->have[kind] = 1;
    }
}

/* Offer the waiting moments that RSS has now held around for long enough. */
static void confirm(struct rssgap *g)
{
    unsigned kept = 0;
    for (unsigned i = 0; i < g->ring_n; i++) {
        if (g->ms - g->ring[i].ms >= RSSGAP_STEADY_MS) {
            offer(g, g->ring_kind[i], &g->ring[i]);
        } else {
            g->ring[kept] = g->ring[i];
            g->ring_kind[kept++] = g->ring_kind[i];
        }
    }
    g->ring_n = kept;
}

static void wait_for_after(struct rssgap *g, int kind, const struct rssgap_moment *m)
{
    if (g->ring_n == RSSGAP_RING) {
        /* Many moments within one period (a hostile file): the oldest goes. */
        for (unsigned i = 1; i < RSSGAP_RING; i++) {
            g->ring[i - 1] = g->ring[i];
            g->ring_kind[i - 1] = g->ring_kind[i];
        }
        g->ring_n--;
    }
    g->ring[g->ring_n] = *m;
    g->ring_kind[g->ring_n++] = kind;
}

/* A new stretch of RSS or of the heap: the moments waiting in the old one
 * never get their "after". */
static int moved(uint64_t now, uint64_t *steady_value)
{
    uint64_t d = now > *steady_value ? now - *steady_value : *steady_value - now;
    if (d <= *steady_value / RSSGAP_STEADY_SHARE) {
        return 0;
    }
    *steady_value = now;
    return 1;
}

static void follow_heap(struct rssgap *g, const struct acct_totals *t)
{
    if (!g->heap_seen || moved(t->live_bytes, &g->steady_heap)) {
        g->heap_seen = 1;
        g->steady_heap = t->live_bytes;
        g->steady_heap_ms = g->ms;
        g->ring_n = 0;
    }
}

/* RSS and the heap have both held since RSSGAP_STEADY_MS before now (ms
 * never goes back, so the differences cannot wrap). */
static int steady_now(const struct rssgap *g)
{
    return g->rss && g->ms - g->steady_ms >= RSSGAP_STEADY_MS && g->ms - g->steady_heap_ms >= RSSGAP_STEADY_MS;
}

void rssgap_feed(struct rssgap *g, const struct memfmt_record *r, const struct acct_totals *t)
{
    struct rssgap_moment now = {0};
    switch (r->tag) {
    case MEMFMT_REC_TIME:
        if (r->u.time.ms > g->ms) {
            g->ms = r->u.time.ms;
        }
        follow_heap(g, t);
        confirm(g);
        if (steady_now(g)) {
            take(g, &now, t);
            wait_for_after(g, RSSGAP_RSS_STEADY, &now);
        }
        break;
    case MEMFMT_REC_RSS:
        g->rss = r->u.rss.bytes;
        if (moved(g->rss, &g->steady_rss)) {
            g->steady_ms = g->ms;
            g->ring_n = 0;
        }
        break;
    case MEMFMT_REC_STATS:
    case MEMFMT_REC_END: g->ring_n = 0; break;
    case MEMFMT_REC_HEAPINFO:
        g->samples++;
        g->cost_ns_total = add_sat(g->cost_ns_total, r->u.heapinfo.cost_ns);
        if (r->u.heapinfo.cost_ns > g->cost_ns_max) {
            g->cost_ns_max = r->u.heapinfo.cost_ns;
        }
        if (r->u.heapinfo.wall_ns > g->wall_ns_max) {
            g->wall_ns_max = r->u.heapinfo.wall_ns;
        }
        follow_heap(g, t);
        /* Before the first RSS sample there is nothing to split. */
        if (!steady_now(g)) {
            break;
        }
        take(g, &now, t);
        now.has_info = 1;
        now.info.arena = r->u.heapinfo.arena;
        now.info.ordblks = r->u.heapinfo.ordblks;
        now.info.smblks = r->u.heapinfo.smblks;
        now.info.fordblks = r->u.heapinfo.fordblks;
        now.info.uordblks = r->u.heapinfo.uordblks;
        now.info.keepcost = r->u.heapinfo.keepcost;
        now.info.hblks = r->u.heapinfo.hblks;
        now.info.hblkhd = r->u.heapinfo.hblkhd;
        wait_for_after(g, RSSGAP_INFO_STEADY, &now);
        break;
    default: break;
    }
}

uint32_t rssgap_feed_layout(struct rssgap *g, const struct memfmt_record *r, const struct acct_totals *t,
                            uint32_t nnodes)
{
    g->layout_cost_ns_total = add_sat(g->layout_cost_ns_total, r->u.layout.cost_ns);
    if (r->u.layout.cost_ns > g->layout_cost_ns_max) {
        g->layout_cost_ns_max = r->u.layout.cost_ns;
    }
    int arenas = r->u.layout.heap == MEMFMT_HEAP_ARENAS;
    if (!arenas && r->u.layout.heap != MEMFMT_HEAP_MAIN) {
        return 0; /* heaps of a later kind: not this reader's */
    }
    if (!arenas) {
        g->layouts++;
        g->arenas.known = 0; /* the arenas' of this state, if any, come right after it */
    }
    struct heaplayout *l = arenas ? &g->arenas : &g->layout;
    uint32_t bad = heaplayout_take(l, r, g->ms, nnodes);
    uint64_t events = add_sat(t->allocations, t->frees);
    l->events = events;
    /* The first layout of the moment's state is the nearest in time. */
    for (unsigned i = 0; i < g->ring_n; i++) {
        struct heaplayout *ml = arenas ? &g->ring[i].arenas : &g->ring[i].layout;
        if (g->ring[i].events == events && !(ml->known && ml->events == events)) {
            *ml = *l;
            if (!arenas) {
                g->ring[i].arenas.known = 0;
            }
        }
    }
    for (int k = 0; k < RSSGAP_NKINDS; k++) {
        struct heaplayout *ml = arenas ? &g->best[k].arenas : &g->best[k].layout;
        if (g->have[k] && g->best[k].events == events && !(ml->known && ml->events == events)) {
            *ml = *l;
            if (!arenas) {
                g->best[k].arenas.known = 0;
            }
        }
    }
    return bad;
}

int rssgap_layout(const struct rssgap *g, int sampled, const struct heaplayout **l, enum heaplayout_why *why)
{
    struct rssgap_parts p;
    *l = NULL;
    if (g->has_at) {
        *l = g->at_layout.known ? &g->at_layout : NULL;
    } else if (rssgap_compute(g, &p) == 0) {
        for (int kind = 0; kind < RSSGAP_NKINDS; kind++) {
            if (g->have[kind]) {
                *l = g->best[kind].layout.known ? &g->best[kind].layout : NULL;
                break;
            }
        }
    } else {
        return 0;
    }
    *why = sampled                        ? HEAPLAYOUT_SAMPLED
           : !g->samples                  ? HEAPLAYOUT_ALLOCATOR
           : *l                           ? HEAPLAYOUT_KNOWN
           : g->has_at && g->layout.known ? HEAPLAYOUT_NOT_YET
                                          : HEAPLAYOUT_NOT_RECORDED;
    return 1;
}

const struct heaplayout *rssgap_arenas(const struct rssgap *g)
{
    struct rssgap_parts p;
    const struct heaplayout *a = NULL;
    if (g->has_at) {
        a = &g->at_arenas;
    } else if (rssgap_compute(g, &p) == 0) {
        for (int kind = 0; kind < RSSGAP_NKINDS && !a; kind++) {
            a = g->have[kind] ? &g->best[kind].arenas : NULL;
        }
    }
    /* Only with the main heap's layout of the same state: memrec writes
     * the arenas' right after it. */
    return a && a->known ? a : NULL;
}

int rssgap_compute(const struct rssgap *g, struct rssgap_parts *out)
{
    *out = (struct rssgap_parts){0};
    int kind = 0;
    while (kind < RSSGAP_NKINDS && !g->have[kind]) {
        kind++;
    }
    if (!g->events_accounted || kind == RSSGAP_NKINDS) {
        return -1;
    }
    out->at = g->best[kind];
    const struct rssgap_moment *m = &out->at;
    if (!m->has_info) {
        out->rest = diff_sat(m->rss, add_sat(m->live_heap, m->mapped));
        return 0;
    }
    out->known = 1;
    out->in_use = add_sat(m->info.uordblks, m->info.hblkhd);
    out->overhead = diff_sat(out->in_use, m->live_heap);
    out->free_held = m->info.fordblks;
    out->releasable = m->info.keepcost;
    uint64_t allocator_total = add_sat(out->in_use, out->free_held);
    out->rest = diff_sat(m->rss, add_sat(allocator_total, m->mapped));
    out->advice = out->free_held >= RSSGAP_ADVICE_MIN && out->free_held / RSSGAP_ADVICE_RATIO >= m->live_heap;
    return 0;
}

enum rssgap_missing rssgap_missing(const struct rssgap *g)
{
    struct rssgap_parts p;
    if (rssgap_compute(g, &p) == 0) {
        return RSSGAP_PRESENT;
    }
    if (!g->events_accounted) {
        return RSSGAP_WINDOW;
    }
    if (!g->rss) {
        return RSSGAP_NO_RSS;
    }
    /* A moment needs a steady stretch before it and after it. */
    return g->ms < 2 * RSSGAP_STEADY_MS ? RSSGAP_SHORT : RSSGAP_UNSTEADY;
}

const char *rssgap_missing_name(enum rssgap_missing why)
{
    switch (why) {
    case RSSGAP_WINDOW: return "window";
    case RSSGAP_NO_RSS: return "no_rss";
    case RSSGAP_SHORT: return "short";
    case RSSGAP_UNSTEADY: return "unsteady";
    default: return NULL;
    }
}

/* ---- text ---- */

static double pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void line_u(FILE *f, const char *what, const char *est, uint64_t v, uint64_t rss)
{
    char b[32];
    fprintf(f, "    %-40s %s%10s (%" PRIu64 " bytes) %5.1f%%\n", what, est, util_bytes(b, sizeof b, v), v, pct(v, rss));
}

static void line_s(FILE *f, const char *what, const char *est, int64_t v, uint64_t rss)
{
    char b[32], s[40];
    uint64_t mag = v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
    snprintf(s, sizeof s, "%s%s", v < 0 ? "-" : "", util_bytes(b, sizeof b, mag));
    if (v < 0) {
        /* A share of RSS cannot be negative: the note below says why the part is. */
        fprintf(f, "    %-40s %s%10s (%" PRId64 " bytes)\n", what, est, s, v);
        return;
    }
    fprintf(f, "    %-40s %s%10s (%" PRId64 " bytes) %5.1f%%\n", what, est, s, v, pct(mag, rss));
}

void rssgap_print_text(const struct rssgap *g, int sampled, uint32_t nthreads, FILE *f)
{
    struct rssgap_parts p;
    char b1[32], b2[32], b3[32], b4[32];
    fputs("\nRSS VERSUS HEAP\n", f);
    if (rssgap_compute(g, &p) != 0) {
        switch (rssgap_missing(g)) {
        case RSSGAP_WINDOW:
            if (g->has_at) {
                fprintf(f,
                        "  (the split of RSS is the whole run's: not shown with --at; the heap's layout at %.3f s "
                        "follows)\n",
                        (double)g->at_ms / 1000.0);
            } else {
                fputs("  (whole run only: not shown for a time window or --at)\n", f);
            }
            break;
        case RSSGAP_NO_RSS: fputs("  (no RSS sample in the recording)\n", f); break;
        case RSSGAP_SHORT:
            fprintf(f, "  (the run took %.3f s: too short for RSS and the live heap to hold still for %d ms)\n",
                    (double)g->ms / 1000.0, RSSGAP_STEADY_MS);
            break;
        default:
            fprintf(f, "  (RSS or the live heap moved all the time: no moment where both held still for %d ms)\n",
                    RSSGAP_STEADY_MS);
            break;
        }
        return;
    }
    const struct rssgap_moment *m = &p.at;
    const char *est = sampled ? "~" : " ";
    fprintf(f, "  at %.3f s, the %s where RSS exceeded the live heap the most:\n", (double)m->ms / 1000.0,
            p.known ? "allocator sample" : "moment");
    line_u(f, "RSS (including memrec overhead)", " ", m->rss, m->rss);
    line_u(f, "live heap (requested bytes in use)", est, m->live_heap, m->rss);
    if (p.known) {
        line_s(f, "allocator overhead (its in-use - live)", est, p.overhead, m->rss);
        line_u(f, "held free by the allocator", " ", p.free_held, m->rss);
        line_u(f, "direct mappings (mmap, brk)", " ", m->mapped, m->rss);
        line_s(f, "the rest (code, stacks, other)", " ", p.rest, m->rss);
        fprintf(f, "  the allocator (glibc mallinfo2): %s in use, %s of it in %" PRIu64 " chunks mapped apart;\n",
                util_bytes(b1, sizeof b1, p.in_use), util_bytes(b2, sizeof b2, m->info.hblkhd), m->info.hblks);
        fprintf(f, "  %s free in %" PRIu64 " free chunks, %s of it releasable at once (top of the main arena)\n",
                util_bytes(b3, sizeof b3, p.free_held), add_sat(m->info.ordblks, m->info.smblks),
                util_bytes(b4, sizeof b4, p.releasable));
        if (p.rest < 0) {
            fputs("  the parts add up to more than RSS: some of the allocator's free memory or of the mappings\n"
                  "  is not resident (never touched, or given back with madvise)\n",
                  f);
        }
        fprintf(f, "  %" PRIu64 " allocator samples: %.3f ms of CPU time in mallinfo2 (at most %.3f ms at once,\n",
                g->samples, (double)g->cost_ns_total / 1e6, (double)g->cost_ns_max / 1e6);
        fprintf(f, "  %.3f ms of wall time)", (double)g->wall_ns_max / 1e6);
        if (g->layouts) {
            fprintf(f, "; %" PRIu64 " heap layouts made by memrec in %.3f ms (at most %.3f ms at once)", g->layouts,
                    (double)g->layout_cost_ns_total / 1e6, (double)g->layout_cost_ns_max / 1e6);
        }
        fputs("\n", f);
    } else {
        line_u(f, "direct mappings (mmap, brk)", " ", m->mapped, m->rss);
        line_s(f, "the rest (allocator and other, unknown)", " ", p.rest, m->rss);
        fputs("  the allocator's overhead and free memory are unknown: the recording has no allocator samples\n", f);
        fputs(g->format_version && g->format_version < 3
                  ? "  (it was made before format version 3)\n"
                  : "  (recorded with MEMREC_HEAPINFO=0, or the allocator is not glibc's: no mallinfo2)\n",
              f);
    }
    if (!p.advice) {
        return;
    }
    double times = m->live_heap ? (double)p.free_held / (double)m->live_heap : 0.0;
    fprintf(f, "\n  The allocator holds %s free, ", util_bytes(b1, sizeof b1, p.free_held));
    if (m->live_heap) {
        fprintf(f, "%.1f times the live heap (%s)", times, util_bytes(b2, sizeof b2, m->live_heap));
    } else {
        fputs("while the live heap is empty", f);
    }
    fprintf(f,
            ", %.0f%% of RSS:\n  memory the program freed, kept in the allocator's arenas instead of going back "
            "to the system.\n",
            pct(p.free_held, m->rss));
    if (nthreads > 1) {
        fprintf(f,
                "  The program ran %u threads: glibc gives threads arenas of their own (up to 8 per core),\n"
                "  a free chunk serves only its own arena, and an arena gives memory back only from the top of its "
                "heap.\n",
                nthreads);
    } else {
        fputs("  Free chunks between live blocks cannot go back to the system: the heap is fragmented.\n", f);
    }
    fputs("  To try: call malloc_trim(0) after phases that free much (it gives back the free pages of every\n"
          "  arena); run with MALLOC_ARENA_MAX=2 (fewer arenas: less memory held, more contention);\n"
          "  or use another allocator, e.g. LD_PRELOAD=libjemalloc.so.2 (jemalloc) or libtcmalloc_minimal.so.4\n"
          "  (tcmalloc).\n",
          f);
}

void rssgap_print_brief(const struct rssgap *g, FILE *f)
{
    struct rssgap_parts p;
    if (rssgap_compute(g, &p) != 0) {
        return;
    }
    const struct rssgap_moment *m = &p.at;
    char b[6][32];
    uint64_t mag = p.rest < 0 ? (uint64_t)(-(p.rest + 1)) + 1 : (uint64_t)p.rest;
    fprintf(f, "RSS vs heap at %.3f s: RSS %s = live %s", (double)m->ms / 1000.0, util_bytes(b[0], sizeof b[0], m->rss),
            util_bytes(b[1], sizeof b[1], m->live_heap));
    if (p.known) {
        uint64_t omag = p.overhead < 0 ? (uint64_t)(-(p.overhead + 1)) + 1 : (uint64_t)p.overhead;
        fprintf(f, " + overhead %s%s + allocator free %s", p.overhead < 0 ? "-" : "",
                util_bytes(b[2], sizeof b[2], omag), util_bytes(b[3], sizeof b[3], p.free_held));
    }
    fprintf(f, " + mapped %s + %s %s%s\n", util_bytes(b[4], sizeof b[4], m->mapped),
            p.known ? "rest" : "rest (allocator's part unknown)", p.rest < 0 ? "-" : "",
            util_bytes(b[5], sizeof b[5], mag));
    if (p.advice) {
        fputs("the allocator holds far more free memory than the live heap: try malloc_trim(0), MALLOC_ARENA_MAX=2, "
              "jemalloc or tcmalloc\n",
              f);
    }
}

/* ---- JSON ---- */

void rssgap_print_json(const struct rssgap *g, int sampled, void (*members)(void *ctx, FILE *f), void *ctx, FILE *f)
{
    struct rssgap_parts p;
    if (rssgap_compute(g, &p) != 0) {
        const char *why = rssgap_missing_name(rssgap_missing(g));
        if (g->has_at) {
            /* The split is the whole run's; the layout is the moment's. */
            fprintf(f, ", \"rss_gap\": {\"at_ms\": %" PRIu64, g->at_ms);
            if (members) {
                members(ctx, f);
            }
            fprintf(f, "}, \"rss_gap_missing\": \"%s\"", why);
            return;
        }
        fprintf(f, ", \"rss_gap\": null, \"rss_gap_missing\": \"%s\"", why);
        return;
    }
    const struct rssgap_moment *m = &p.at;
    fprintf(f,
            ", \"rss_gap\": {\"at_ms\": %" PRIu64 ", \"rss_bytes\": %" PRIu64 ", \"live_heap_bytes\": %" PRIu64
            ", \"live_heap_estimated\": %s, \"live_blocks\": %" PRIu64 ", \"mapped_bytes\": %" PRIu64
            ", \"allocator_known\": %s",
            m->ms, m->rss, m->live_heap, sampled ? "true" : "false", m->live_blocks, m->mapped,
            p.known ? "true" : "false");
    if (p.known) {
        fprintf(f,
                ", \"allocator_in_use_bytes\": %" PRIu64 ", \"allocator_overhead_bytes\": %" PRId64
                ", \"allocator_free_bytes\": %" PRIu64 ", \"allocator_releasable_bytes\": %" PRIu64
                ", \"allocator_free_chunks\": %" PRIu64 ", \"allocator_arena_bytes\": %" PRIu64
                ", \"allocator_mmapped_bytes\": %" PRIu64 ", \"allocator_mmapped_chunks\": %" PRIu64,
                p.in_use, p.overhead, p.free_held, p.releasable, add_sat(m->info.ordblks, m->info.smblks),
                m->info.arena, m->info.hblkhd, m->info.hblks);
    } else {
        fputs(", \"allocator_in_use_bytes\": null, \"allocator_overhead_bytes\": null, \"allocator_free_bytes\": null"
              ", \"allocator_releasable_bytes\": null, \"allocator_free_chunks\": null, \"allocator_arena_bytes\": "
              "null, \"allocator_mmapped_bytes\": null, \"allocator_mmapped_chunks\": null",
              f);
    }
    fprintf(f,
            ", \"rest_bytes\": %" PRId64 ", \"advice\": %s, \"heapinfo_samples\": %" PRIu64
            ", \"heapinfo_cost_ns_total\": %" PRIu64 ", \"heapinfo_cost_ns_max\": %" PRIu64
            ", \"heapinfo_wall_ns_max\": %" PRIu64 ", \"layouts\": %" PRIu64 ", \"layout_cost_ns_total\": %" PRIu64
            ", \"layout_cost_ns_max\": %" PRIu64,
            p.rest, p.advice ? "true" : "false", g->samples, g->cost_ns_total, g->cost_ns_max, g->wall_ns_max,
            g->layouts, g->layout_cost_ns_total, g->layout_cost_ns_max);
    if (members) {
        members(ctx, f);
    }
    fputs("}, \"rss_gap_missing\": null", f);
}
