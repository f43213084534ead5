// SPDX-License-Identifier: MIT
/* Unit tests of the shared analysis core: call trees (calltree.c), the
 * folded export (folded.c), re-accounting for a window, a moment, a thread
 * and a function filter (analysis.c), the time series (timeseries.c) and
 * the size histogram (sizes.c), and growth as a cost type, on recordings
 * written here whose every figure is derived below. */
#define _GNU_SOURCE
#include "analysis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "calltree.h"
#include "check.h"
#include "folded.h"
#include "report.h"
#include "topseries.h"

/* ---- writing a recording ---- */

struct rec {
    memfmt_writer *w;
    uint64_t sizes[64];
    uint32_t traces[64];
    uint32_t npairs;
};

static uint32_t info_of(struct rec *r, uint64_t size, uint32_t trace, int *is_new)
{
    for (uint32_t i = 0; i < r->npairs; i++) {
        if (r->sizes[i] == size && r->traces[i] == trace) {
            *is_new = 0;
            return i + 1;
        }
    }
    r->sizes[r->npairs] = size;
    r->traces[r->npairs] = trace;
    *is_new = 1;
    return ++r->npairs;
}

static void put(struct rec *r, const struct memfmt_record *x)
{
    CHECK(memfmt_write(r->w, x) == 0);
}

static void w_time(struct rec *r, uint64_t ms)
{
    struct memfmt_record x = {.tag = MEMFMT_REC_TIME};
    x.u.time.ms = ms;
    put(r, &x);
}

static void w_node(struct rec *r, uint32_t parent, uint64_t ip)
{
    struct memfmt_record x = {.tag = MEMFMT_REC_NODE};
    x.u.node.parent = parent;
    x.u.node.ip = ip;
    put(r, &x);
}

static void w_alloc(struct rec *r, uint32_t thread, uint64_t size, uint32_t trace)
{
    int is_new;
    struct memfmt_record x = {.tag = MEMFMT_REC_ALLOC};
    x.u.alloc.thread = thread;
    x.u.alloc.kind = MEMFMT_K_MALLOC;
    x.u.alloc.size = size;
    x.u.alloc.trace = trace;
    x.u.alloc.info = info_of(r, size, trace, &is_new);
    put(r, &x);
}

static void w_free(struct rec *r, uint32_t thread, uint64_t size, uint32_t trace, int temporary)
{
    int is_new;
    struct memfmt_record x = {.tag = MEMFMT_REC_FREE};
    x.u.free.thread = thread;
    x.u.free.kind = MEMFMT_K_FREE;
    x.u.free.size = size;
    x.u.free.trace = trace;
    x.u.free.info = info_of(r, size, trace, &is_new);
    x.u.free.temporary = temporary;
    put(r, &x);
}

/* Nodes (ip = the function's name below; no module, so each is named
 * "?? in ?+0x<ip>"): 1 A, 2 A;B, 3 A;B;C, 4 A;C, 5 A;B;C;B (recursion).
 *
 *   t=0   T1 alloc 100 @3; alloc 10 @4, freed at once (temporary)
 *   t=10  T1 alloc 1000 @5; alloc 50 @2; free 100 @3
 *   t=20  T1 free 1000 @5; alloc 7 @0 (no stack); mmap 4096 @2
 *   t=30  T2 alloc 222 @2 (leaked); T1 alloc 3000 @4, freed at once; RSS 5000000
 *   end at 40 ms
 *
 * Totals: 7 calls, 2 temporary, 4389 bytes allocated; live 100, 110, 100,
 * 1100, 1150, 1050, 50, 57, 279, 3279 (the peak, at 30 ms: 3000 @4, 272
 * @2, 7 no stack), 279; leaked 279 (272 @2, 7 no stack); mapped 4096 @2. */
static char *write_recording(int *fd_out)
{
    int fd = memfd_create("analysis-test", 0);
    CHECK(fd >= 0);
    struct memfmt_header h = {MEMFMT_VERSION, 8, 1, 0};
    int rc;
    struct rec r = {0};
    r.w = memfmt_writer_new(fd, &h, 1, &rc);
    CHECK(r.w != NULL);
    struct memfmt_record x = {.tag = MEMFMT_REC_THREAD};
    x.u.thread.index = 1;
    x.u.thread.tid = 100;
    put(&r, &x);
    x.u.thread.index = 2;
    x.u.thread.tid = 101;
    put(&r, &x);
    w_node(&r, 0, 0xa00);
    w_node(&r, 1, 0xb00);
    w_node(&r, 2, 0xc00);
    w_node(&r, 1, 0xc00);
    w_node(&r, 3, 0xb00);
    w_time(&r, 0);
    w_alloc(&r, 1, 100, 3);
    w_alloc(&r, 1, 10, 4);
    w_free(&r, 1, 10, 4, 1);
    w_time(&r, 10);
    w_alloc(&r, 1, 1000, 5);
    w_alloc(&r, 1, 50, 2);
    w_free(&r, 1, 100, 3, 0);
    w_time(&r, 20);
    w_free(&r, 1, 1000, 5, 0);
    w_alloc(&r, 1, 7, 0);
    x = (struct memfmt_record){.tag = MEMFMT_REC_MAP};
    x.u.map.thread = 1;
    x.u.map.kind = MEMFMT_MK_MMAP;
    x.u.map.trace = 2;
    x.u.map.delta = 4096;
    x.u.map.call = 1;
    put(&r, &x);
    w_time(&r, 30);
    w_alloc(&r, 2, 222, 2);
    w_alloc(&r, 1, 3000, 4);
    w_free(&r, 1, 3000, 4, 1);
    x = (struct memfmt_record){.tag = MEMFMT_REC_RSS};
    x.u.rss.bytes = 5000000;
    put(&r, &x);
    x = (struct memfmt_record){.tag = MEMFMT_REC_END};
    x.u.end.how = MEMFMT_END_EXITED;
    x.u.end.runtime_ms = 40;
    put(&r, &x);
    CHECK(memfmt_writer_finish(r.w) == 0);
    memfmt_writer_free(r.w);
    *fd_out = fd;
    char *path = malloc(64);
    snprintf(path, 64, "/proc/self/fd/%d", fd);
    return path;
}

/* ---- helpers ---- */

/* The top-down node reached from the root through function names. */
static uint32_t td_path(const struct calltree *t, const char *const *names, int n)
{
    uint32_t cur = 0;
    for (int i = 0; i < n; i++) {
        uint32_t nk;
        const uint32_t *kids = calltree_children(t, CALLTREE_TOP_DOWN, cur, &nk);
        uint32_t next = CALLTREE_NONE;
        for (uint32_t k = 0; k < nk; k++) {
            if (strcmp(calltree_name(t, CALLTREE_TOP_DOWN, kids[k]), names[i]) == 0) {
                next = kids[k];
            }
        }
        if (next == CALLTREE_NONE) {
            return CALLTREE_NONE;
        }
        cur = next;
    }
    return cur;
}

static uint32_t bu_child(const struct calltree *t, uint32_t id, const char *name)
{
    uint32_t nk;
    const uint32_t *kids = calltree_children(t, CALLTREE_BOTTOM_UP, id, &nk);
    for (uint32_t k = 0; k < nk; k++) {
        if (strcmp(calltree_name(t, CALLTREE_BOTTOM_UP, kids[k]), name) == 0) {
            return kids[k];
        }
    }
    return CALLTREE_NONE;
}

static const struct calltree_func *func_named(const struct calltree *t, const char *name)
{
    for (uint32_t i = 0; i < calltree_nfuncs(t); i++) {
        if (strcmp(calltree_func(t, i)->name, name) == 0) {
            return calltree_func(t, i);
        }
    }
    return NULL;
}

#define A "?? in ?+0xa00"
#define B "?? in ?+0xb00"
#define C "?? in ?+0xc00"

static const struct cost_vec *td_incl(const struct calltree *t, const char *const *names, int n)
{
    static const struct cost_vec zero;
    uint32_t id = td_path(t, names, n);
    return id == CALLTREE_NONE ? &zero : &calltree_node(t, CALLTREE_TOP_DOWN, id)->incl;
}

/* ---- tests ---- */

static void test_calltree(struct model *m)
{
    struct frames *fr = frames_new(m);
    CHECK(fr != NULL);
    struct calltree *t = calltree_build(fr, m->acct);
    const struct calltree_node *root = calltree_node(t, CALLTREE_TOP_DOWN, 0);
    static const uint64_t total[COST_NTYPES] = {7, 2, 3279, 279, 4389, 4096};
    for (int c = 0; c < COST_NTYPES; c++) {
        CHECK_EQ(root->incl.v[c], total[c]);
        CHECK_EQ(cost_total(m->acct, (enum cost_type)c), total[c]);
        CHECK_EQ(calltree_node(t, CALLTREE_BOTTOM_UP, 0)->incl.v[c], total[c]);
    }
    /* The root's own cost: the block with no stack. */
    CHECK_EQ(root->self.v[COST_CALLS], 1);
    CHECK_EQ(root->self.v[COST_LEAKED], 7);
    CHECK_EQ(root->self.v[COST_PEAK], 7);

    const char *const ab[] = {A, B}, *const abc[] = {A, B, C}, *const abcb[] = {A, B, C, B}, *const ac[] = {A, C};
    CHECK_EQ(td_incl(t, ab, 1)->v[COST_CALLS], 6);
    CHECK_EQ(td_incl(t, ab, 2)->v[COST_CALLS], 4); /* A;B 50 and 222, A;B;C 100, A;B;C;B 1000 */
    CHECK_EQ(td_incl(t, ab, 2)->v[COST_ALLOCATED], 1372);
    CHECK_EQ(td_incl(t, ab, 2)->v[COST_MAPPED], 4096);
    CHECK_EQ(td_incl(t, ab, 2)->v[COST_LEAKED], 272);
    CHECK_EQ(td_incl(t, ab, 2)->v[COST_PEAK], 272);
    CHECK_EQ(td_incl(t, abc, 3)->v[COST_ALLOCATED], 1100);
    CHECK_EQ(td_incl(t, abcb, 4)->v[COST_ALLOCATED], 1000);
    CHECK_EQ(td_incl(t, ac, 2)->v[COST_CALLS], 2);
    CHECK_EQ(td_incl(t, ac, 2)->v[COST_TEMPORARY], 2);
    CHECK_EQ(td_incl(t, ac, 2)->v[COST_PEAK], 3000);
    CHECK_EQ(td_incl(t, ac, 2)->v[COST_ALLOCATED], 3010);
    CHECK_EQ(calltree_size(t, CALLTREE_TOP_DOWN), 6); /* root, A, A;B, A;B;C, A;B;C;B, A;C */

    /* Sorting: A's children by calls are B (4) then C (2); by peak C (3000) then B (272). */
    uint32_t a = td_path(t, ab, 1), nk;
    calltree_sort(t, COST_CALLS, 0);
    const uint32_t *kids = calltree_children(t, CALLTREE_TOP_DOWN, a, &nk);
    CHECK_EQ(nk, 2);
    CHECK(strcmp(calltree_name(t, CALLTREE_TOP_DOWN, kids[0]), B) == 0);
    calltree_sort(t, COST_PEAK, 0);
    kids = calltree_children(t, CALLTREE_TOP_DOWN, a, &nk);
    CHECK(strcmp(calltree_name(t, CALLTREE_TOP_DOWN, kids[0]), C) == 0);

    /* Functions: B's stacks are A;B, A;B;C, A;B;C;B: the recursion once. */
    const struct calltree_func *fb = func_named(t, B), *fc = func_named(t, C), *fa = func_named(t, A);
    CHECK(fb && fc && fa);
    if (fb && fc && fa) {
        CHECK_EQ(fb->incl.v[COST_CALLS], 4);
        CHECK_EQ(fb->incl.v[COST_ALLOCATED], 1372);
        CHECK_EQ(fb->self.v[COST_CALLS], 3); /* A;B twice, A;B;C;B */
        CHECK_EQ(fb->self.v[COST_ALLOCATED], 1272);
        CHECK_EQ(fc->incl.v[COST_CALLS], 4); /* A;B;C, A;B;C;B, A;C twice */
        CHECK_EQ(fc->incl.v[COST_ALLOCATED], 4110);
        CHECK_EQ(fc->self.v[COST_CALLS], 3);
        CHECK_EQ(fa->incl.v[COST_CALLS], 6);
        CHECK_EQ(fa->self.v[COST_CALLS], 0);
    }
    CHECK_EQ(calltree_nfuncs(t), 3);
    uint32_t nf;
    const uint32_t *order = calltree_func_order(t, &nf);
    calltree_sort(t, COST_ALLOCATED, 1); /* by self: C 3110, B 1272, A 0 */
    order = calltree_func_order(t, &nf);
    CHECK(strcmp(calltree_func(t, order[0])->name, C) == 0);
    CHECK(strcmp(calltree_func(t, order[2])->name, A) == 0);

    /* Callers and callees: B is called by A (A;B...) and C (A;B;C;B), and
     * calls C (A;B;C, A;B;C;B: one stack counted once); C is called by B and A. */
    struct calltree_link *links;
    uint32_t ib = (uint32_t)(fb - calltree_func(t, 0)), ic = (uint32_t)(fc - calltree_func(t, 0));
    uint32_t nl = calltree_func_links(t, ib, CALLTREE_CALLERS, &links);
    CHECK_EQ(nl, 2);
    for (uint32_t i = 0; i < nl; i++) {
        const char *who = calltree_func(t, links[i].func)->name;
        if (strcmp(who, A) == 0) {
            CHECK_EQ(links[i].incl.v[COST_CALLS], 4); /* every stack through B */
        } else {
            CHECK(strcmp(who, C) == 0);
            CHECK_EQ(links[i].incl.v[COST_ALLOCATED], 1000);
        }
    }
    free(links);
    nl = calltree_func_links(t, ib, CALLTREE_CALLEES, &links);
    CHECK_EQ(nl, 1);
    CHECK(nl == 1 && links[0].func == ic);
    CHECK(nl == 1 && links[0].incl.v[COST_CALLS] == 2 && links[0].incl.v[COST_ALLOCATED] == 1100);
    free(links);
    nl = calltree_func_links(t, ic, CALLTREE_CALLERS, &links);
    CHECK_EQ(nl, 2);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < nl; i++) {
        sum += links[i].incl.v[COST_ALLOCATED];
    }
    CHECK_EQ(sum, 1100 + 3010);
    free(links);
    nl = calltree_func_links(t, (uint32_t)(fa - calltree_func(t, 0)), CALLTREE_CALLERS, &links);
    CHECK_EQ(nl, 0);
    CHECK(links == NULL);
    CHECK_EQ(calltree_func_links(t, 99, CALLTREE_CALLEES, &links), 0);

    /* Bottom-up: sites B (A;B, A;B;C;B) and C (A;B;C, A;C); B -> C -> B -> A. */
    uint32_t sb = bu_child(t, 0, B), sc = bu_child(t, 0, C);
    CHECK(sb != CALLTREE_NONE && sc != CALLTREE_NONE);
    CHECK_EQ(calltree_node(t, CALLTREE_BOTTOM_UP, sb)->incl.v[COST_CALLS], 3);
    CHECK_EQ(calltree_node(t, CALLTREE_BOTTOM_UP, sc)->incl.v[COST_CALLS], 3);
    CHECK_EQ(calltree_node(t, CALLTREE_BOTTOM_UP, sc)->incl.v[COST_PEAK], 3000);
    uint32_t sbc = bu_child(t, sb, C);
    uint32_t sbcb = bu_child(t, sbc, B);
    uint32_t sbcba = bu_child(t, sbcb, A);
    CHECK(sbcba != CALLTREE_NONE);
    CHECK_EQ(calltree_node(t, CALLTREE_BOTTOM_UP, sbcba)->incl.v[COST_ALLOCATED], 1000);
    CHECK_EQ(calltree_node(t, CALLTREE_BOTTOM_UP, sbcba)->self.v[COST_ALLOCATED], 1000);
    CHECK_EQ(calltree_node(t, CALLTREE_BOTTOM_UP, sbcba)->depth, 4);
    CHECK_EQ(calltree_node(t, CALLTREE_BOTTOM_UP, 0)->self.v[COST_CALLS], 1);

    /* Folded: one line per stack, the sum is the total. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    calltree_sort(t, COST_CALLS, 0);
    CHECK(folded_write(t, COST_CALLS, f) == 0);
    fclose(f);
    const char *want = "[no stack] 1\n" A ";" B " 2\n" A ";" B ";" C " 1\n" A ";" B ";" C ";" B " 1\n" A ";" C " 2\n";
    CHECK(strcmp(buf, want) == 0);
    if (strcmp(buf, want) != 0) {
        fprintf(stderr, "folded:\n%s", buf);
    }
    free(buf);
    calltree_free(t);
    frames_free(fr);
}

/* The same query streamed during a load (analysis_stream_*) must give the
 * figures of analysis_run's own pass, trace by trace. */
static void check_streamed(const char *path, const struct analysis_query *q, const struct analysis *a)
{
    struct model_hook hook;
    struct analysis_stream *st = analysis_stream_new(q, &hook);
    if (!st) {
        CHECK(!analysis_streamable(q));
        return;
    }
    struct model *m2;
    int err;
    CHECK(model_load_hooked(path, &hook, &m2, &err) == 0);
    struct analysis *b = analysis_stream_finish(st, m2);
    int restricted = q->has_window || q->has_at;
    /* A restricted query replaces the model's figures: the load did not
     * account the events a second time. */
    CHECK_EQ(hook.replaces_events, restricted);
    if (restricted) {
        CHECK_EQ(accounting_totals(m2->acct)->allocations, 0);
    }
    for (int c = 0; c < COST_NTYPES && restricted; c++) {
        CHECK_EQ(cost_total(b->acct, (enum cost_type)c), cost_total(a->acct, (enum cost_type)c));
        for (uint32_t t = 0; t < m2->nnodes; t++) {
            struct cost_vec x, y;
            cost_of_trace(a->acct, t, &x);
            cost_of_trace(b->acct, t, &y);
            CHECK_EQ(x.v[c], y.v[c]);
        }
    }
    CHECK_EQ(b->earlier_freed_blocks, a->earlier_freed_blocks);
    CHECK_EQ(b->earlier_freed_bytes, a->earlier_freed_bytes);
    CHECK_EQ(b->end_ms, a->end_ms);
    CHECK_EQ(b->bad_events, 0);
    /* The series made from the log of the model's own read: every point
     * and peak that of the second pass (whose figures the tests below
     * derive from the events). */
    CHECK_EQ(b->series != NULL, a->series != NULL);
    if (a->series && b->series) {
        const struct timeseries *x = a->series, *y = b->series;
        CHECK_EQ(y->npoints, x->npoints);
        CHECK_EQ(y->end_ms, x->end_ms);
        for (uint32_t i = 0; i < x->npoints && i < y->npoints; i++) {
            CHECK(memcmp(&x->points[i], &y->points[i], sizeof x->points[i]) == 0);
        }
        CHECK_EQ(y->peak_bytes, x->peak_bytes);
        CHECK_EQ(y->peak_ms, x->peak_ms);
        CHECK_EQ(y->mapped_peak, x->mapped_peak);
        CHECK_EQ(y->mapped_peak_ms, x->mapped_peak_ms);
        CHECK_EQ(y->rss_peak, x->rss_peak);
    }
    if (a->sizes) {
        CHECK(b->sizes != NULL);
        for (int k = 0; b->sizes && k < SIZES_NBUCKETS; k++) {
            CHECK_EQ(b->sizes->buckets[k].calls, a->sizes->buckets[k].calls);
            CHECK_EQ(b->sizes->buckets[k].bytes, a->sizes->buckets[k].bytes);
            CHECK_EQ(b->sizes->buckets[k].temporary, a->sizes->buckets[k].temporary);
        }
    }
    analysis_free(b);
    model_free(m2);
}

static struct analysis *run(const char *path, struct model *m, const struct analysis_query *q)
{
    struct analysis *a = NULL;
    int err;
    CHECK(analysis_run(path, m, q, &a, &err) == 0);
    CHECK(a && a->stop_rc == 0 && a->bad_events == 0);
    if (a) {
        check_streamed(path, q, a);
    }
    return a;
}

static void check_totals(const struct analysis *a, uint64_t calls, uint64_t temp, uint64_t peak, uint64_t leaked,
                         uint64_t allocated, uint64_t mapped)
{
    CHECK_EQ(cost_total(a->acct, COST_CALLS), calls);
    CHECK_EQ(cost_total(a->acct, COST_TEMPORARY), temp);
    CHECK_EQ(cost_total(a->acct, COST_PEAK), peak);
    CHECK_EQ(cost_total(a->acct, COST_LEAKED), leaked);
    CHECK_EQ(cost_total(a->acct, COST_ALLOCATED), allocated);
    CHECK_EQ(cost_total(a->acct, COST_MAPPED), mapped);
}

static void test_windows(const char *path, struct model *m)
{
    /* No restriction: the summary's figures. */
    struct analysis_query q = ANALYSIS_QUERY_INIT;
    struct analysis *a = run(path, m, &q);
    check_totals(a, 7, 2, 3279, 279, 4389, 4096);
    CHECK_EQ(accounting_totals(a->acct)->peak_ms, 30);
    analysis_free(a);

    /* [10, 20): 1000 @5 and 50 @2; the 100 from t=0 freed inside is not the window's. */
    q.has_window = 1;
    q.from_ms = 10;
    q.to_ms = 20;
    a = run(path, m, &q);
    check_totals(a, 2, 0, 1050, 50, 1050, 0);
    CHECK_EQ(accounting_totals(a->acct)->peak_ms, 10);
    CHECK_EQ(a->earlier_freed_blocks, 1);
    CHECK_EQ(a->earlier_freed_bytes, 100);
    /* The summary's lines of the window (memtui's summary view), and of the whole run. */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    report_print_summary(m, a->acct, f);
    fclose(f);
    CHECK(strstr(text, "\ncalls to allocation functions: 2 (") != NULL);
    CHECK(strstr(text, "\ntemporary allocations: 0 (0.0%") != NULL);
    CHECK(strstr(text, "\npeak heap memory consumption: 1.03 KiB (1050 bytes) after 0.010 s\n") != NULL);
    CHECK(strstr(text, "\ntotal memory leaked: 50 B (50 bytes) in 1 block\n") != NULL);
    CHECK(strstr(text, "\ntotal bytes allocated: 1.03 KiB (1050 bytes)\n") != NULL);
    free(text);
    f = open_memstream(&text, &len);
    report_print_summary(m, m->acct, f);
    fclose(f);
    CHECK(strstr(text, "\ncalls to allocation functions: 7 (") != NULL);
    CHECK(strstr(text, "\ntotal bytes allocated: 4.29 KiB (4389 bytes)\n") != NULL);
    free(text);
    analysis_free(a);

    /* [0, 10): 100 (freed at 10, after the window: still the window's block) and the temporary 10. */
    q.from_ms = 0;
    q.to_ms = 10;
    a = run(path, m, &q);
    check_totals(a, 2, 1, 110, 0, 110, 0);
    CHECK_EQ(a->earlier_freed_blocks, 0);
    analysis_free(a);

    /* [20, 40): 7, the mapping, 222 and the temporary 3000. */
    q.from_ms = 20;
    q.to_ms = 40;
    a = run(path, m, &q);
    check_totals(a, 3, 1, 3229, 229, 3229, 4096);
    CHECK_EQ(a->earlier_freed_blocks, 1); /* the 1000 from t=10 */
    CHECK_EQ(a->earlier_freed_bytes, 1000);
    analysis_free(a);

    q.from_ms = 10;
    q.to_ms = 10;
    struct analysis *bad = NULL;
    int err;
    CHECK(analysis_run(path, m, &q, &bad, &err) == MEMFMT_E_INVALID);
    CHECK(bad == NULL);

    /* --at 20: what was live at 20 ms: 1000 @5 and 50 @2. */
    q = (struct analysis_query)ANALYSIS_QUERY_INIT;
    q.has_at = 1;
    q.at_ms = 20;
    a = run(path, m, &q);
    check_totals(a, 4, 1, 1150, 1050, 1160, 0);
    CHECK_EQ(a->end_ms, 20);
    analysis_free(a);
}

static void test_filters(const char *path, struct model *m)
{
    /* Thread 2: its one block; thread 1: everything else, whose peak never had the 222. */
    struct analysis_query q = ANALYSIS_QUERY_INIT;
    q.thread = 2;
    struct analysis *a = run(path, m, &q);
    check_totals(a, 1, 0, 222, 222, 222, 0);
    analysis_free(a);
    q.thread = 1;
    a = run(path, m, &q);
    check_totals(a, 6, 2, 3057, 57, 4167, 4096);
    analysis_free(a);

    /* Stacks through C: A;B;C, A;B;C;B, A;C. */
    struct frames *fr = frames_new(m);
    uint8_t *mask;
    char err[128];
    CHECK(analysis_keep_functions(fr, "c00$", NULL, &mask, err, sizeof err) == 0);
    q = (struct analysis_query)ANALYSIS_QUERY_INIT;
    q.keep = mask;
    a = run(path, m, &q);
    check_totals(a, 4, 2, 3000, 0, 4110, 0);
    /* The call tree of a filtered analysis has only those stacks. */
    struct calltree *t = calltree_build(fr, a->acct);
    CHECK_EQ(calltree_node(t, CALLTREE_TOP_DOWN, 0)->incl.v[COST_CALLS], 4);
    CHECK_EQ(calltree_node(t, CALLTREE_TOP_DOWN, 0)->self.v[COST_CALLS], 0);
    calltree_free(t);
    analysis_free(a);
    free(mask);

    /* Everything but C: A;B's blocks and the one with no stack. */
    CHECK(analysis_keep_functions(fr, NULL, "c00$", &mask, err, sizeof err) == 0);
    q.keep = mask;
    a = run(path, m, &q);
    check_totals(a, 3, 0, 279, 279, 279, 4096);
    analysis_free(a);
    free(mask);

    CHECK(analysis_keep_functions(fr, "(", NULL, &mask, err, sizeof err) == MEMFMT_E_INVALID);
    CHECK(mask == NULL);
    frames_free(fr);
}

static void test_series_and_sizes(const char *path, struct model *m)
{
    struct analysis_query q = ANALYSIS_QUERY_INIT;
    q.series_points = 5;
    q.sizes = 1;
    struct analysis *a = run(path, m, &q);
    const struct timeseries *s = a->series;
    CHECK(s != NULL && s->npoints == 5);
    static const uint64_t ms[5] = {0, 10, 20, 30, 40};
    static const uint64_t heap[5] = {100, 1050, 57, 279, 279};
    static const uint64_t heap_max[5] = {110, 1150, 1050, 3279, 279};
    static const uint64_t mapped[5] = {0, 0, 4096, 4096, 4096};
    static const uint64_t rss[5] = {0, 0, 0, 5000000, 5000000};
    for (int i = 0; s && i < 5; i++) {
        CHECK_EQ(s->points[i].ms, ms[i]);
        CHECK_EQ(s->points[i].at.heap, heap[i]);
        CHECK_EQ(s->points[i].max.heap, heap_max[i]);
        CHECK_EQ(s->points[i].at.mapped, mapped[i]);
        CHECK_EQ(s->points[i].at.rss, rss[i]);
    }
    if (s) {
        CHECK_EQ(s->peak_bytes, 3279);
        CHECK_EQ(s->peak_ms, 30);
        CHECK_EQ(s->mapped_peak, 4096);
        CHECK_EQ(s->mapped_peak_ms, 20);
        CHECK_EQ(s->rss_peak, 5000000);
    }

    const struct sizes *z = a->sizes;
    CHECK(z != NULL);
    if (z) {
        CHECK_EQ(z->calls, 7);
        CHECK_EQ(z->bytes, 4389);
        CHECK_EQ(z->temporary, 2);
        CHECK_EQ(sizes_bucket_of(0), 0);
        CHECK_EQ(sizes_bucket_of(1), 1);
        CHECK_EQ(sizes_bucket_of(4095), 12);
        CHECK_EQ(sizes_bucket_of(4096), 13);
        CHECK_EQ(sizes_bucket_of(UINT64_MAX), 64);
        CHECK_EQ(z->buckets[12].lo, 2048);
        CHECK_EQ(z->buckets[12].hi, 4095);
        CHECK_EQ(z->buckets[12].calls, 1); /* 3000 */
        CHECK_EQ(z->buckets[12].temporary, 1);
        CHECK_EQ(z->buckets[4].calls, 1); /* 10 */
        CHECK_EQ(z->buckets[4].temporary, 1);
        CHECK_EQ(z->buckets[7].bytes, 100);
        CHECK_EQ(z->buckets[8].bytes, 222);
        CHECK_EQ(z->buckets[64].hi, UINT64_MAX);
        struct sizes_exact top[3];
        CHECK_EQ(sizes_top(z, top, 3), 3);
        CHECK_EQ(top[0].size, 7); /* all once: smallest first */
        CHECK_EQ(top[1].size, 10);
        CHECK_EQ(top[1].temporary, 1);
        CHECK_EQ(top[2].size, 50);
    }
    analysis_free(a);

    /* The most frequent first, and a window's histogram has only its blocks. */
    struct sizes *h = sizes_new();
    for (int i = 0; i < 5; i++) {
        sizes_add(h, 24);
    }
    sizes_add(h, 8);
    sizes_add(h, 8);
    sizes_add(h, 4000);
    struct sizes_exact top[2];
    CHECK_EQ(sizes_top(h, top, 2), 2);
    CHECK_EQ(top[0].size, 24);
    CHECK_EQ(top[0].calls, 5);
    CHECK_EQ(top[1].size, 8);
    sizes_free(h);
    q.has_window = 1;
    q.from_ms = 10;
    q.to_ms = 20;
    a = run(path, m, &q);
    CHECK_EQ(a->sizes->calls, 2);
    CHECK_EQ(a->sizes->buckets[10].calls, 1); /* 1000 */
    CHECK_EQ(a->series->peak_bytes, 1050);
    CHECK_EQ(a->series->points[1].at.heap, 1050);
    CHECK_EQ(a->series->points[2].at.heap, 50);
    analysis_free(a);
}

/* The series' counts from the start, its groups of traces (memtui's
 * Stacked view: at each point and at the heap's largest moment since the
 * point before), the node map that charges a trace's blocks to an
 * ancestor (folded wrappers), and the ranking of memprint's stacks, on
 * the recording of write_recording() (figures derived from its events). */
static void test_groups_and_remap(const char *path, struct model *m)
{
    struct analysis_query q = ANALYSIS_QUERY_INIT;
    q.series_points = 5;
    uint32_t group[8] = {0};
    group[2] = 1; /* 50 at 10 ms, 222 at 30 ms (thread 2): kept */
    group[4] = 2; /* 10 at 0 ms and 3000 at 30 ms, each freed at once */
    q.series_group = group;
    q.series_groups = 2;
    struct analysis *a = run(path, m, &q);
    const struct timeseries *s = a->series;
    CHECK(s != NULL && s->groups != NULL && s->ngroups == 2);
    static const uint64_t calls[5] = {2, 4, 5, 7, 7}, temps[5] = {1, 1, 1, 2, 2};
    static const uint64_t g0_live[5] = {0, 50, 50, 272, 272}, g0_calls[5] = {0, 1, 1, 2, 2};
    static const uint64_t g1_calls[5] = {1, 1, 1, 2, 2};
    for (int i = 0; s && s->groups && i < 5; i++) {
        CHECK_EQ(s->points[i].at.calls, calls[i]);
        CHECK_EQ(s->points[i].at.temporary, temps[i]);
        CHECK_EQ(s->groups[i * 2].live, g0_live[i]);
        CHECK_EQ(s->groups[i * 2].calls, g0_calls[i]);
        CHECK_EQ(s->groups[i * 2].temporary, 0);
        CHECK_EQ(s->groups[i * 2 + 1].live, 0);
        CHECK_EQ(s->groups[i * 2 + 1].calls, g1_calls[i]);
        CHECK_EQ(s->groups[i * 2 + 1].temporary, temps[i]);
    }
    if (s && s->groups_max) {
        /* The heap's largest at 30 ms, 3279: the 3000 still live. */
        CHECK_EQ(s->points[3].max.heap, 3279);
        CHECK_EQ(s->groups_max[3 * 2].live, 272);
        CHECK_EQ(s->groups_max[3 * 2 + 1].live, 3000);
        /* At 10 ms, 1150 before the free of 100: the 50 of trace 2. */
        CHECK_EQ(s->groups_max[1 * 2].live, 50);
        CHECK_EQ(s->groups_max[1 * 2 + 1].live, 0);
    }
    analysis_free(a);
    q.series_points = 0; /* groups without a series: refused */
    int err;
    CHECK_EQ(analysis_run(path, m, &q, &a, &err), MEMFMT_E_INVALID);

    /* Node 5 (c00 under b00 under a00) charged to node 3 (b00 under a00). */
    uint32_t remap[8];
    for (uint32_t i = 0; i < 8; i++) {
        remap[i] = i;
    }
    remap[5] = 3;
    q = (struct analysis_query)ANALYSIS_QUERY_INIT;
    q.remap = remap;
    a = run(path, m, &q);
    const struct acct_cost *c3 = accounting_cost(a->acct, 3), *c5 = accounting_cost(a->acct, 5);
    CHECK(c3 != NULL && c3->calls == 2 && c3->allocated == 1100 && c3->live == 0);
    CHECK(c5 == NULL || c5->calls == 0);
    CHECK_EQ(accounting_totals(a->acct)->allocations, 7);
    CHECK_EQ(accounting_totals(a->acct)->peak_bytes, 3279);
    analysis_free(a);

    /* memprint's stacks with the most calls: traces 2 and 4, two each
     * (ties in the report's order); five stacks have calls. */
    struct report *r = report_new(m);
    CHECK(r != NULL);
    if (r) {
        struct topseries_stack top[2];
        uint32_t nonzero = 0;
        CHECK_EQ(topseries_rank(r, m->acct, NULL, COST_CALLS, 2, top, &nonzero), 2);
        CHECK_EQ(nonzero, 5);
        CHECK_EQ(top[0].trace, 2);
        CHECK_EQ(top[0].cost, 2);
        CHECK_EQ(top[1].trace, 4);
        CHECK_EQ(top[1].cost, 2);
        CHECK_EQ(report_stack_of(r, 1), UINT32_MAX); /* no allocation of its own */
        report_free(r);
    }
}

/* Frames handed out stay where they are while more nodes are symbolized
 * (the call tree keeps pointers to them): a model of 20000 nodes in no
 * module, each one frame, resolved one after the other. */
static void test_frames_stay(void)
{
    struct model m;
    memset(&m, 0, sizeof m);
    m.nnodes = 20000;
    m.nodes = calloc(m.nnodes, sizeof *m.nodes);
    for (uint32_t i = 1; i < m.nnodes; i++) {
        m.nodes[i].parent = i - 1;
        m.nodes[i].ip = 0x1000 + i;
        m.nodes[i].module = -1;
    }
    struct frames *fr = frames_new(&m);
    CHECK(fr != NULL);
    uint32_t n1;
    const struct sym_frame *first = frames_of_node(fr, 1, &n1);
    CHECK(n1 == 1 && first != NULL);
    for (uint32_t i = 2; i < m.nnodes; i++) {
        uint32_t n;
        frames_of_node(fr, i, &n);
    }
    uint32_t again;
    CHECK(frames_of_node(fr, 1, &again) == first && again == 1);
    CHECK_EQ(first[0].module_offset, 0x1001);
    uint32_t n;
    CHECK_EQ(frames_of_node(fr, 19999, &n)[0].module_offset, 0x1000 + 19999);
    frames_free(fr);
    free(m.nodes);
}

/* ---- the bottom-up tree, built on demand ---- */

/* A chain of CHAIN nodes whose functions repeat every 7 (recursion: many
 * top-down nodes merge into one bottom-up node), a branch of 40 nodes off
 * node 100 with functions of their own, and an allocation at every node
 * (size: the node's id). Paths of sites deeper than CALLTREE_MAX_DEPTH are
 * cut. */
#define CHAIN 1500
static char *write_chain(int *fd_out)
{
    int fd = memfd_create("bottom-up-test", 0);
    CHECK(fd >= 0);
    struct memfmt_header h = {MEMFMT_VERSION, 8, 1, 0};
    int rc;
    struct rec r = {0};
    r.w = memfmt_writer_new(fd, &h, 1, &rc);
    CHECK(r.w != NULL);
    struct memfmt_record x = {.tag = MEMFMT_REC_THREAD};
    x.u.thread.index = 1;
    x.u.thread.tid = 100;
    put(&r, &x);
    for (uint32_t i = 1; i <= CHAIN; i++) {
        w_node(&r, i - 1, 0x1000 + 0x10 * (i % 7));
    }
    w_node(&r, 100, 0x2000);
    for (uint32_t i = 1; i < 40; i++) {
        w_node(&r, CHAIN + i, 0x2000 + 0x10 * i);
    }
    w_time(&r, 0);
    for (uint32_t i = 1; i <= CHAIN + 40; i++) {
        x = (struct memfmt_record){.tag = MEMFMT_REC_ALLOC};
        x.u.alloc.thread = 1;
        x.u.alloc.kind = MEMFMT_K_MALLOC;
        x.u.alloc.size = i;
        x.u.alloc.trace = i;
        x.u.alloc.info = i; /* every (size, trace) pair is new */
        put(&r, &x);
    }
    x = (struct memfmt_record){.tag = MEMFMT_REC_END};
    x.u.end.how = MEMFMT_END_EXITED;
    x.u.end.runtime_ms = 1;
    put(&r, &x);
    CHECK(memfmt_writer_finish(r.w) == 0);
    memfmt_writer_free(r.w);
    *fd_out = fd;
    char *path = malloc(64);
    snprintf(path, 64, "/proc/self/fd/%d", fd);
    return path;
}

/* The bottom-up tree as it was built before it was made lazy: every site's
 * path walked up at once, nodes made in that order. */
struct ref_node {
    uint32_t parent, func, first, next, last;
    const struct sym_frame *frame;
    struct cost_vec incl, self;
};

static uint32_t ref_child(struct ref_node **r, uint32_t *n, uint32_t parent, uint32_t func,
                          const struct sym_frame *frame)
{
    for (uint32_t c = (*r)[parent].first; c != CALLTREE_NONE; c = (*r)[c].next) {
        if ((*r)[c].func == func) {
            return c;
        }
    }
    *r = realloc(*r, (*n + 1) * sizeof **r);
    struct ref_node *nd = &(*r)[*n];
    memset(nd, 0, sizeof *nd);
    nd->parent = parent;
    nd->func = func;
    nd->frame = frame;
    nd->first = nd->next = nd->last = CALLTREE_NONE;
    if ((*r)[parent].first == CALLTREE_NONE) {
        (*r)[parent].first = *n;
    } else {
        (*r)[(*r)[parent].last].next = *n;
    }
    (*r)[parent].last = *n;
    return (*n)++;
}

static struct ref_node *ref_build(const struct calltree *t, uint32_t *count)
{
    uint32_t n = 1;
    struct ref_node *r = calloc(1, sizeof *r);
    r[0].parent = r[0].func = CALLTREE_NONE;
    r[0].first = r[0].next = r[0].last = CALLTREE_NONE;
    for (uint32_t id = 0; id < calltree_size(t, CALLTREE_TOP_DOWN); id++) {
        const struct calltree_node *td = calltree_node(t, CALLTREE_TOP_DOWN, id);
        if (!cost_any(&td->self)) {
            continue;
        }
        cost_add(&r[0].incl, &td->self);
        uint32_t cur = 0, depth = 0;
        for (uint32_t x = id; x != 0 && depth < CALLTREE_MAX_DEPTH;
             x = calltree_node(t, CALLTREE_TOP_DOWN, x)->parent, depth++) {
            const struct calltree_node *xn = calltree_node(t, CALLTREE_TOP_DOWN, x);
            cur = ref_child(&r, &n, cur, xn->func, xn->frame);
            cost_add(&r[cur].incl, &td->self);
        }
        cost_add(&r[cur].self, &td->self);
    }
    *count = n;
    return r;
}

static int same_costs(const struct cost_vec *a, const struct cost_vec *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

/* Walks the lazy tree and the reference together, children in creation
 * order (before any sort): same functions, frames and costs everywhere. */
static uint32_t compare_with_ref(const struct calltree *t, const struct ref_node *r)
{
    uint32_t bad = 0, visited = 0;
    uint32_t *stack = malloc(2 * sizeof *stack), cap = 1, sp = 0;
    stack[sp * 2] = 0;
    stack[sp * 2 + 1] = 0;
    sp++;
    while (sp > 0) {
        sp--;
        uint32_t id = stack[sp * 2], ref = stack[sp * 2 + 1];
        const struct calltree_node *nd = calltree_node(t, CALLTREE_BOTTOM_UP, id);
        visited++;
        if (!nd || nd->func != r[ref].func || nd->frame != r[ref].frame || !same_costs(&nd->incl, &r[ref].incl) ||
            !same_costs(&nd->self, &r[ref].self)) {
            bad++;
            continue;
        }
        int has = calltree_has_children(t, CALLTREE_BOTTOM_UP, id);
        uint32_t nk;
        const uint32_t *kids = calltree_children(t, CALLTREE_BOTTOM_UP, id, &nk);
        if (has != (nk > 0)) {
            bad++;
        }
        uint32_t k = 0;
        for (uint32_t c = r[ref].first; c != CALLTREE_NONE; c = r[c].next, k++) {
            if (k >= nk) {
                bad++;
                break;
            }
            if (sp + 1 > cap) {
                cap *= 2;
                stack = realloc(stack, 2 * cap * sizeof *stack);
            }
            stack[sp * 2] = kids[k];
            stack[sp * 2 + 1] = c;
            sp++;
        }
        if (k != nk) {
            bad++;
        }
    }
    free(stack);
    CHECK_EQ(bad, 0);
    return visited;
}

static void test_bottom_up_lazy(void)
{
    int fd;
    char *path = write_chain(&fd);
    struct model *m;
    int err;
    CHECK(model_load(path, &m, &err) == 0);
    struct frames *fr = frames_new(m);
    CHECK(fr != NULL);
    struct calltree *t = calltree_build(fr, m->acct);
    /* Nothing built but the root, which already has the total. */
    CHECK_EQ(calltree_built(t, CALLTREE_BOTTOM_UP), 1);
    CHECK_EQ(calltree_node(t, CALLTREE_BOTTOM_UP, 0)->incl.v[COST_ALLOCATED],
             (uint64_t)(CHAIN + 40) * (CHAIN + 41) / 2);
    CHECK(calltree_has_children(t, CALLTREE_BOTTOM_UP, 0));
    CHECK(!calltree_expanded(t, CALLTREE_BOTTOM_UP, 0));
    /* The sites: 7 functions of the chain, 40 of the branch. */
    uint32_t nk;
    const uint32_t *sites = calltree_children(t, CALLTREE_BOTTOM_UP, 0, &nk);
    CHECK_EQ(nk, 47);
    CHECK_EQ(calltree_built(t, CALLTREE_BOTTOM_UP), 48);
    CHECK(calltree_expanded(t, CALLTREE_BOTTOM_UP, 0));
    CHECK(sites != NULL && !calltree_expanded(t, CALLTREE_BOTTOM_UP, sites[0]));

    uint32_t nref;
    struct ref_node *r = ref_build(t, &nref);
    CHECK(nref > 47);
    /* Walking every node builds exactly the eager tree's nodes. */
    CHECK_EQ(compare_with_ref(t, r), nref);
    CHECK_EQ(calltree_built(t, CALLTREE_BOTTOM_UP), nref);
    CHECK_EQ(calltree_size(t, CALLTREE_BOTTOM_UP), nref);
    /* A path cut at CALLTREE_MAX_DEPTH keeps its cost as the last node's self. */
    uint32_t deepest = 0;
    for (uint32_t i = 0; i < nref; i++) {
        const struct calltree_node *nd = calltree_node(t, CALLTREE_BOTTOM_UP, i);
        if (nd->depth > deepest) {
            deepest = nd->depth;
        }
        if (nd->depth == CALLTREE_MAX_DEPTH) {
            CHECK(same_costs(&nd->self, &nd->incl));
            CHECK(!calltree_has_children(t, CALLTREE_BOTTOM_UP, i));
        }
    }
    CHECK_EQ(deepest, CALLTREE_MAX_DEPTH);
    free(r);
    calltree_free(t);

    /* Sorted first, then expanded: the new children come sorted. */
    t = calltree_build(fr, m->acct);
    calltree_sort(t, COST_ALLOCATED, 0);
    sites = calltree_children(t, CALLTREE_BOTTOM_UP, 0, &nk);
    uint32_t unsorted = 0;
    for (uint32_t k = 1; k < nk; k++) {
        unsorted += calltree_node(t, CALLTREE_BOTTOM_UP, sites[k - 1])->incl.v[COST_ALLOCATED] <
                    calltree_node(t, CALLTREE_BOTTOM_UP, sites[k])->incl.v[COST_ALLOCATED];
    }
    CHECK_EQ(unsorted, 0);
    /* The heaviest site holds the stacks of its function (the branch's
     * deepest), and a node's pointer stays put while thousands more are built. */
    const struct calltree_node *top = calltree_node(t, CALLTREE_BOTTOM_UP, sites[0]);
    uint64_t top_alloc = top->incl.v[COST_ALLOCATED];
    uint32_t cur = sites[0], levels = 0;
    for (;;) {
        const uint32_t *kids = calltree_children(t, CALLTREE_BOTTOM_UP, cur, &nk);
        if (nk == 0) {
            break;
        }
        for (uint32_t k = 1; k < nk; k++) {
            CHECK(calltree_node(t, CALLTREE_BOTTOM_UP, kids[k - 1])->incl.v[COST_ALLOCATED] >=
                  calltree_node(t, CALLTREE_BOTTOM_UP, kids[k])->incl.v[COST_ALLOCATED]);
        }
        cur = kids[0];
        levels++;
    }
    CHECK(levels > 0);
    CHECK(calltree_size(t, CALLTREE_BOTTOM_UP) == nref);
    CHECK(calltree_node(t, CALLTREE_BOTTOM_UP, sites[0]) == top && top->incl.v[COST_ALLOCATED] == top_alloc);
    calltree_free(t);
    frames_free(fr);
    model_free(m);
    free(path);
    close(fd);
}

/* Growth as a cost type (costs.h COST_GROWTH): nodes 1 A, 2 A;B, 3 A;C.
 * Every 10 ms from 0 to 990 ms, A;B allocates 1,000 bytes and keeps them
 * (100,000 bytes per second, exactly: test_growthfit.c derives the fit),
 * and A;C allocates 5,000 bytes and frees them at the next tick (churn:
 * not growth). */
static char *write_growing(int *fd_out)
{
    int fd = memfd_create("growth-cost-test", 0);
    CHECK(fd >= 0);
    struct memfmt_header h = {MEMFMT_VERSION, 8, 1, 0};
    int rc;
    struct rec r = {0};
    r.w = memfmt_writer_new(fd, &h, 1, &rc);
    CHECK(r.w != NULL);
    struct memfmt_record x = {.tag = MEMFMT_REC_THREAD};
    x.u.thread.index = 1;
    x.u.thread.tid = 100;
    put(&r, &x);
    w_node(&r, 0, 0xa00);
    w_node(&r, 1, 0xb00);
    w_node(&r, 1, 0xc00);
    for (uint64_t t = 0; t <= 990; t += 10) {
        w_time(&r, t);
        w_alloc(&r, 1, 1000, 2);
        if (t > 0) {
            w_free(&r, 1, 5000, 3, 0);
        }
        w_alloc(&r, 1, 5000, 3);
    }
    x = (struct memfmt_record){.tag = MEMFMT_REC_END};
    x.u.end.how = MEMFMT_END_EXITED;
    x.u.end.runtime_ms = 990; /* the data stop at the last tick: no flat point after it */
    put(&r, &x);
    CHECK(memfmt_writer_finish(r.w) == 0);
    memfmt_writer_free(r.w);
    *fd_out = fd;
    char *path = malloc(64);
    snprintf(path, 64, "/proc/self/fd/%d", fd);
    return path;
}

static void test_growth_cost(void)
{
    int fd;
    char *path = write_growing(&fd);
    struct model *m;
    int err;
    CHECK(model_load(path, &m, &err) == 0);
    struct frames *fr = frames_new(m);
    for (int windowed = 0; windowed < 2; windowed++) {
        struct analysis_query q = ANALYSIS_QUERY_INIT;
        q.growth = 1;
        /* From 500 ms the ramp goes on at the same rate. */
        q.has_window = windowed;
        q.from_ms = 500;
        q.to_ms = UINT64_MAX;
        struct analysis *a = run(path, m, &q);
        CHECK_EQ(growth_trace_cost(a->growth, 2), 100000);
        CHECK_EQ(growth_trace_cost(a->growth, 3), 0);
        CHECK_EQ(growth_costs_total(a->growth), 100000);
        /* Per trace the values sum to the total; the tree's root has it. */
        uint64_t sum = 0;
        for (uint32_t t = 0; t < 4; t++) {
            struct cost_vec v;
            cost_of_trace_in(a->acct, a->growth, t, &v);
            sum += v.v[COST_GROWTH];
        }
        CHECK_EQ(sum, 100000);
        struct calltree *t = calltree_build_growth(fr, a->acct, a->growth);
        calltree_sort(t, COST_GROWTH, 0);
        const char *ab[] = {A, B}, *ac[] = {A, C};
        CHECK_EQ(calltree_node(t, CALLTREE_TOP_DOWN, 0)->incl.v[COST_GROWTH], 100000);
        CHECK_EQ(td_incl(t, ab, 1)->v[COST_GROWTH], 100000);
        CHECK_EQ(td_incl(t, ab, 2)->v[COST_GROWTH], 100000);
        CHECK_EQ(td_incl(t, ac, 2)->v[COST_GROWTH], 0);
        CHECK(td_incl(t, ac, 2)->v[COST_CALLS] > 0); /* there, with its calls */
        uint32_t nk;
        const uint32_t *sites = calltree_children(t, CALLTREE_BOTTOM_UP, 0, &nk);
        CHECK(nk == 2 && strcmp(calltree_name(t, CALLTREE_BOTTOM_UP, sites[0]), B) == 0);
        CHECK_EQ(calltree_node(t, CALLTREE_BOTTOM_UP, sites[0])->incl.v[COST_GROWTH], 100000);
        CHECK_EQ(func_named(t, B)->self.v[COST_GROWTH], 100000);
        CHECK_EQ(func_named(t, A)->incl.v[COST_GROWTH], 100000);
        /* Folded: the one growing stack. */
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        CHECK(folded_write(t, COST_GROWTH, f) == 0);
        fclose(f);
        CHECK(strcmp(buf, A ";" B " 100000\n") == 0);
        free(buf);
        calltree_free(t);
        /* Without the fit, growth is 0 everywhere. */
        t = calltree_build(fr, a->acct);
        CHECK_EQ(calltree_node(t, CALLTREE_TOP_DOWN, 0)->incl.v[COST_GROWTH], 0);
        calltree_free(t);
        analysis_free(a);
    }
    frames_free(fr);
    model_free(m);
    free(path);
    close(fd);
}

int main(void)
{
    int fd;
    char *path = write_recording(&fd);
    struct model *m;
    int err;
    CHECK(model_load(path, &m, &err) == 0);
    CHECK_EQ(m->bad_records, 0);
    test_calltree(m);
    test_frames_stay();
    test_bottom_up_lazy();
    test_windows(path, m);
    test_filters(path, m);
    test_series_and_sizes(path, m);
    test_growth_cost();
    test_groups_and_remap(path, m);
    model_free(m);
    free(path);
    close(fd);
    return check_summary("test_analysis");
}
