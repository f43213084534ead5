// SPDX-License-Identifier: MIT
/* Unit tests of RSS versus heap (analyzer/rssgap.c): which moment is kept
 * (steady RSS before and after it, the closing peak-RSS record left out),
 * the split of its RSS, the advice threshold, and what is unknown without
 * the allocator's samples. The totals are made up, so every figure is
 * exact. */
#include "rssgap.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

#define MiB ((uint64_t)1 << 20)

static void feed_time(struct rssgap *g, uint64_t ms, const struct acct_totals *t)
{
    struct memfmt_record r = {.tag = MEMFMT_REC_TIME};
    r.u.time.ms = ms;
    rssgap_feed(g, &r, t);
}

static void feed_rss(struct rssgap *g, uint64_t bytes, const struct acct_totals *t)
{
    struct memfmt_record r = {.tag = MEMFMT_REC_RSS};
    r.u.rss.bytes = bytes;
    rssgap_feed(g, &r, t);
}

static void feed_info(struct rssgap *g, uint64_t in_use, uint64_t free_bytes, const struct acct_totals *t)
{
    struct memfmt_record r = {.tag = MEMFMT_REC_HEAPINFO};
    r.u.heapinfo.uordblks = in_use;
    r.u.heapinfo.fordblks = free_bytes;
    r.u.heapinfo.arena = in_use + free_bytes;
    r.u.heapinfo.keepcost = 1000;
    r.u.heapinfo.ordblks = 77;
    r.u.heapinfo.cost_ns = 5000;
    r.u.heapinfo.wall_ns = 9000;
    rssgap_feed(g, &r, t);
}

static void feed_tag(struct rssgap *g, unsigned tag, const struct acct_totals *t)
{
    struct memfmt_record r = {.tag = tag};
    rssgap_feed(g, &r, t);
}

/* The arena situation: 64 MiB live, then all but 4 MiB freed while RSS
 * stays; the allocator's samples say where the rest is. */
static void test_arenas(void)
{
    struct rssgap g = {.events_accounted = 1};
    struct acct_totals t = {0};
    feed_time(&g, 0, &t);
    feed_info(&g, 0, 0, &t); /* before any RSS sample: counted, no moment */
    t.live_bytes = 64 * MiB;
    feed_rss(&g, 70 * MiB, &t);
    feed_info(&g, 64 * MiB + 4096, 100000, &t); /* RSS and the heap just changed: no moment */
    feed_time(&g, 10, &t);
    t.live_bytes = 4 * MiB;
    t.mapped_bytes = 1 * MiB;
    feed_time(&g, 20, &t);
    feed_info(&g, 4 * MiB + 4096, 60 * MiB, &t); /* RSS held 20 ms, the heap 0 ms: no moment */
    feed_time(&g, 30, &t);
    feed_time(&g, 40, &t);
    feed_info(&g, 4 * MiB + 4096, 60 * MiB, &t); /* both steady for 20 ms before */
    feed_rss(&g, 70 * MiB + 4096, &t); /* within 1/64: still the same stretch */
    feed_time(&g, 50, &t);
    struct rssgap_parts p;
    CHECK(rssgap_compute(&g, &p) == -1); /* the sample waits for 20 ms after it */
    CHECK_EQ(rssgap_missing(&g), RSSGAP_UNSTEADY);
    feed_time(&g, 60, &t);
    CHECK(rssgap_compute(&g, &p) == 0);
    CHECK_EQ(rssgap_missing(&g), RSSGAP_PRESENT);
    CHECK_EQ(p.known, 1);
    CHECK_EQ(p.at.ms, 40);
    CHECK_EQ(p.at.rss, 70 * MiB);
    CHECK_EQ(p.at.live_heap, 4 * MiB);
    CHECK_EQ(p.in_use, 4 * MiB + 4096);
    CHECK_EQ(p.overhead, 4096);
    CHECK_EQ(p.free_held, 60 * MiB);
    CHECK_EQ(p.releasable, 1000);
    CHECK_EQ(p.at.mapped, 1 * MiB);
    CHECK_EQ(p.rest, (int64_t)(70 * MiB) - (int64_t)(64 * MiB + 4096 + 1 * MiB));
    CHECK_EQ(p.advice, 1);
    CHECK_EQ(g.samples, 4);
    CHECK_EQ(g.cost_ns_total, 20000);
    CHECK_EQ(g.wall_ns_max, 9000);

    /* The end: everything freed, the RSS sample stale (the process ended
     * before memrec read it again), then memrec's closing peak RSS. No
     * "after" comes, so neither is a moment. */
    t.live_bytes = 0;
    feed_time(&g, 70, &t);
    feed_info(&g, 4096, 64 * MiB, &t);
    feed_rss(&g, 300 * MiB, &t);
    feed_tag(&g, MEMFMT_REC_STATS, &t);
    feed_tag(&g, MEMFMT_REC_END, &t);
    CHECK(rssgap_compute(&g, &p) == 0);
    CHECK_EQ(p.at.ms, 40);
    CHECK_EQ(p.at.rss, 70 * MiB);

    /* A window's pass: the live heap is not the whole run's. */
    g.events_accounted = 0;
    CHECK(rssgap_compute(&g, &p) == -1);
    CHECK_EQ(rssgap_missing(&g), RSSGAP_WINDOW);
}

/* The events lag RSS by up to a flush period: while the heap grows, RSS
 * already holds the grown value, and the widest gap would be where the
 * events lag the most. A heap that moves is never a moment; once it holds
 * for 20 ms before and after, its moment is. */
static void test_lag(void)
{
    struct rssgap g = {.events_accounted = 1};
    struct acct_totals t = {0};
    feed_time(&g, 0, &t);
    feed_rss(&g, 24 * MiB, &t); /* read after the whole heap was touched */
    for (uint64_t ms = 10; ms <= 60; ms += 10) {
        t.live_bytes = ms * MiB / 3; /* still arriving: 3.3 MiB ... 20 MiB */
        feed_time(&g, ms, &t);
    }
    struct rssgap_parts p;
    CHECK(rssgap_compute(&g, &p) == -1);
    CHECK_EQ(rssgap_missing(&g), RSSGAP_UNSTEADY);
    for (uint64_t ms = 70; ms <= 110; ms += 10) {
        feed_time(&g, ms, &t);
    }
    CHECK(rssgap_compute(&g, &p) == 0);
    CHECK_EQ(p.at.live_heap, 20 * MiB); /* the whole heap, never a partial one */
    CHECK_EQ(p.at.ms, 80);
    CHECK_EQ(p.rest, (int64_t)(4 * MiB));
}

/* A run shorter than a steady stretch before and after a moment: one line
 * says so, with no table and no negative share. */
static void test_short(void)
{
    struct rssgap g = {.events_accounted = 1, .format_version = 4};
    struct acct_totals t = {0};
    feed_time(&g, 0, &t);
    t.live_bytes = 1 * MiB;
    feed_rss(&g, 16 * 1024, &t); /* a stale reading: far below the heap */
    feed_time(&g, 10, &t);
    struct rssgap_parts p;
    CHECK(rssgap_compute(&g, &p) == -1);
    CHECK_EQ(rssgap_missing(&g), RSSGAP_SHORT);
    CHECK(strcmp(rssgap_missing_name(RSSGAP_SHORT), "short") == 0);
    CHECK(rssgap_missing_name(RSSGAP_PRESENT) == NULL);
    char buf[4096];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    rssgap_print_text(&g, 0, 1, f);
    fclose(f);
    CHECK(strcmp(buf, "\nRSS VERSUS HEAP\n  (the run took 0.010 s: too short for RSS and the live heap to hold still "
                      "for 20 ms)\n") == 0);
    f = fmemopen(buf, sizeof buf, "w");
    rssgap_print_json(&g, 0, NULL, NULL, f);
    fclose(f);
    CHECK(strcmp(buf, ", \"rss_gap\": null, \"rss_gap_missing\": \"short\"") == 0);
}

/* Advice needs free >= 2 x live and >= 8 MiB. */
static void test_threshold(void)
{
    struct acct_totals t = {0};
    for (int k = 0; k < 3; k++) {
        struct rssgap g = {.events_accounted = 1};
        uint64_t live = k == 0 ? 10 * MiB : k == 1 ? 10 * MiB + 1 : 1 * MiB;
        uint64_t free_bytes = k == 2 ? 8 * MiB - 1 : 20 * MiB;
        t.live_bytes = live;
        feed_time(&g, 0, &t);
        feed_rss(&g, 40 * MiB, &t);
        feed_time(&g, 20, &t);
        feed_info(&g, live, free_bytes, &t);
        feed_time(&g, 40, &t);
        struct rssgap_parts p;
        CHECK(rssgap_compute(&g, &p) == 0);
        CHECK_EQ(p.advice, k == 0);
    }
}

/* No allocator samples (an old file): the moments are TIME records, the
 * allocator's part is unknown, and the text says so. */
static void test_unknown(void)
{
    struct rssgap g = {.events_accounted = 1};
    struct acct_totals t = {0};
    struct rssgap_parts p;
    CHECK(rssgap_compute(&g, &p) == -1); /* no RSS at all */
    feed_time(&g, 0, &t);
    feed_rss(&g, 17 * MiB, &t); /* read before the events it follows were written */
    t.live_bytes = 20 * MiB;
    feed_time(&g, 10, &t);
    feed_rss(&g, 22 * MiB, &t);
    feed_time(&g, 20, &t);
    feed_time(&g, 30, &t);
    feed_time(&g, 40, &t);
    feed_time(&g, 50, &t);
    CHECK(rssgap_compute(&g, &p) == 0);
    CHECK_EQ(p.known, 0);
    CHECK_EQ(p.at.ms, 30);
    CHECK_EQ(p.at.rss, 22 * MiB);
    CHECK_EQ(p.rest, 2 * MiB);
    CHECK_EQ(p.advice, 0);
    char buf[4096];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    rssgap_print_text(&g, 0, 1, f);
    fclose(f);
    CHECK(strstr(buf, "unknown") != NULL);
    CHECK(strstr(buf, "malloc_trim") == NULL);
}

static void feed_layout(struct rssgap *g, uint32_t heap, uint64_t free_pages, uint32_t trace,
                        const struct acct_totals *t)
{
    struct memfmt_record r = {.tag = MEMFMT_REC_LAYOUT};
    r.u.layout.page = 4096;
    r.u.layout.heap = heap;
    r.u.layout.heaps = 1;
    r.u.layout.live_blocks = 1;
    r.u.layout.free_pages = free_pages;
    r.u.layout.top_trace = trace;
    r.u.layout.n = 1;
    r.u.layout.e[0] = (struct memfmt_layout_entry){trace, free_pages, 1, 1};
    r.u.layout.cost_ns = 700;
    CHECK_EQ(rssgap_feed_layout(g, &r, t, 10), trace >= 10);
}

/* Which layout the section shows: the one written at the moment's state
 * of the heap (no event between them), even after the moment; else the
 * latest before it; the thread arenas' one only with the main heap's of
 * the same state; a heap kind this reader does not know is skipped. */
static void test_layouts(void)
{
    struct rssgap g = {.events_accounted = 1};
    struct acct_totals t = {0};
    const struct heaplayout *l, *a;
    enum heaplayout_why why;
    feed_time(&g, 0, &t);
    t.allocations = 100;
    t.live_bytes = 64 * MiB;
    feed_rss(&g, 70 * MiB, &t);
    feed_layout(&g, MEMFMT_HEAP_MAIN, 5, 1, &t); /* before the moment, another state */
    feed_layout(&g, MEMFMT_HEAP_ARENAS, 6, 2, &t);
    t.frees = 90;
    t.live_bytes = 4 * MiB;
    feed_time(&g, 10, &t);
    feed_time(&g, 30, &t);
    feed_info(&g, 4 * MiB, 60 * MiB, &t); /* the moment: 190 events before it */
    feed_layout(&g, MEMFMT_HEAP_MAIN, 15000, 3, &t); /* the same state, right after it */
    feed_layout(&g, 7, 99, 4, &t); /* a later kind of heaps: skipped */
    feed_time(&g, 60, &t);
    CHECK_EQ(rssgap_layout(&g, 0, &l, &why), 1);
    CHECK_EQ(why, HEAPLAYOUT_KNOWN);
    CHECK(l != NULL && l->free_pages == 15000 && l->top_trace == 3);
    CHECK(rssgap_arenas(&g) == NULL); /* the arenas' one was of the earlier state */
    CHECK_EQ(g.layouts, 2);
    CHECK_EQ(g.layout_cost_ns_total, 4 * 700);
    /* A later main layout of the same state (memrec's end) does not
     * replace the nearer one; its arenas' layout, of the same state too,
     * joins the moment. */
    feed_layout(&g, MEMFMT_HEAP_MAIN, 15001, 5, &t);
    feed_layout(&g, MEMFMT_HEAP_ARENAS, 16, 6, &t);
    CHECK_EQ(rssgap_layout(&g, 0, &l, &why), 1);
    CHECK(l != NULL && l->free_pages == 15000);
    a = rssgap_arenas(&g);
    CHECK(a != NULL && a->free_pages == 16 && a->top_trace == 6);
    /* An undefined trace is refused and read as no stack. */
    feed_layout(&g, MEMFMT_HEAP_MAIN, 1, 12, &t);
    CHECK_EQ(g.layout.top_trace, 0);
    /* Sampled, or without allocator samples: unknown, and why. */
    CHECK_EQ(rssgap_layout(&g, 1, &l, &why), 1);
    CHECK_EQ(why, HEAPLAYOUT_SAMPLED);
    struct rssgap none = {.events_accounted = 1};
    CHECK_EQ(rssgap_layout(&none, 0, &l, &why), 0); /* no moment: no place for a layout */
}

int main(void)
{
    test_layouts();
    test_arenas();
    test_lag();
    test_short();
    test_threshold();
    test_unknown();
    return check_summary("test_rssgap");
}
