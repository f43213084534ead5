// SPDX-License-Identifier: MIT
/* Unit tests of allocator time (memrec --time) in the analyzer: the cost
 * type COST_TIME in the accounting, the reports, the call tree and the
 * re-accounting of windows and threads, and the tables of alloctime.c,
 * on a timed recording written here whose every figure is derived below. */
#define _GNU_SOURCE
#include "alloctime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analysis.h"
#include "calltree.h"
#include "check.h"
#include "report.h"
#include "sizes.h"

static void put(memfmt_writer *w, const struct memfmt_record *x)
{
    CHECK(memfmt_write(w, x) == 0);
}

static void w_alloc(memfmt_writer *w, uint32_t thread, uint32_t kind, uint64_t size, uint32_t trace, uint32_t info,
                    uint64_t ns)
{
    struct memfmt_record x = {.tag = MEMFMT_REC_ALLOC};
    x.u.alloc.thread = thread;
    x.u.alloc.kind = kind;
    x.u.alloc.size = size;
    x.u.alloc.trace = trace;
    x.u.alloc.info = info;
    x.u.alloc.ns = ns;
    put(w, &x);
}

static void w_free(memfmt_writer *w, uint32_t thread, uint64_t size, uint32_t trace, uint32_t info, int temporary,
                   uint64_t ns)
{
    struct memfmt_record x = {.tag = MEMFMT_REC_FREE};
    x.u.free.thread = thread;
    x.u.free.kind = MEMFMT_K_FREE;
    x.u.free.size = size;
    x.u.free.trace = trace;
    x.u.free.info = info;
    x.u.free.temporary = temporary;
    x.u.free.ns = ns;
    put(w, &x);
}

#define BIG ((uint64_t)40 << 20) /* 40 MiB: size class 26 (32 MiB to 64 MiB - 1) */

/* Nodes: 1 A, 2 A;B, 3 A;C (ips 0xa00, 0xb00, 0xc00, no module).
 *
 *   t=0   T1 malloc 16 @2 100 ns, free 50 ns; malloc 16 @2 300 ns, free 60 ns;
 *         malloc 40 MiB @3 40000 ns, free 20000 ns
 *   t=10  T2 operator new 100 @3 1000 ns; realloc to 200 @2 700 ns; free 90 ns
 *   THREAD_TIMES T1 5 ms wall 1 ms CPU, T2 2 ms wall 0.5 ms CPU
 *   end at 20 ms; process CPU 3 ms user + 1 ms system
 *
 * Per stack (a free's time goes to its block's allocation stack, a
 * realloc's whole time to its new block's): A;B 100+50+300+60+700+90 =
 * 1300 ns in 3 calls, A;C 40000+20000+1000 = 61000 ns in 2 calls; total
 * 62300 ns, 1.5575% of 4 ms of CPU. */
static char *write_recording(int *fd_out, int timed)
{
    int fd = memfd_create("alloctime-test", 0);
    CHECK(fd >= 0);
    struct memfmt_header h = {MEMFMT_VERSION, 8, 1, timed ? MEMFMT_HF_TIMED : 0};
    int rc;
    memfmt_writer *w = memfmt_writer_new(fd, &h, 1, &rc);
    CHECK(w != NULL);
    struct memfmt_record x = {.tag = MEMFMT_REC_THREAD};
    x.u.thread.index = 1;
    x.u.thread.tid = 100;
    put(w, &x);
    x.u.thread.index = 2;
    x.u.thread.tid = 101;
    put(w, &x);
    uint64_t ips[3] = {0xa00, 0xb00, 0xc00};
    uint32_t parents[3] = {0, 1, 1};
    for (int i = 0; i < 3; i++) {
        x = (struct memfmt_record){.tag = MEMFMT_REC_NODE};
        x.u.node.parent = parents[i];
        x.u.node.ip = ips[i];
        put(w, &x);
    }
    uint64_t k = timed ? 1 : 0; /* untimed: every ns 0 */
    x = (struct memfmt_record){.tag = MEMFMT_REC_TIME};
    x.u.time.ms = 0;
    put(w, &x);
    w_alloc(w, 1, MEMFMT_K_MALLOC, 16, 2, 1, 100 * k);
    w_free(w, 1, 16, 2, 1, 1, 50 * k);
    w_alloc(w, 1, MEMFMT_K_MALLOC, 16, 2, 1, 300 * k);
    w_free(w, 1, 16, 2, 1, 1, 60 * k);
    w_alloc(w, 1, MEMFMT_K_MALLOC, BIG, 3, 2, 40000 * k);
    w_free(w, 1, BIG, 3, 2, 1, 20000 * k);
    x.u.time.ms = 10;
    put(w, &x);
    w_alloc(w, 2, MEMFMT_K_NEW, 100, 3, 3, 1000 * k);
    x = (struct memfmt_record){.tag = MEMFMT_REC_REALLOC};
    x.u.alloc.thread = 2;
    x.u.alloc.kind = MEMFMT_K_REALLOC;
    x.u.alloc.size = 200;
    x.u.alloc.trace = 2;
    x.u.alloc.info = 4;
    x.u.alloc.old_size = 100;
    x.u.alloc.old_trace = 3;
    x.u.alloc.old_info = 3;
    x.u.alloc.old_temporary = 1;
    x.u.alloc.ns = 700 * k;
    put(w, &x);
    w_free(w, 2, 200, 2, 4, 1, 90 * k);
    if (timed) {
        x = (struct memfmt_record){.tag = MEMFMT_REC_THREAD_TIMES};
        x.u.thread_times.thread = 1;
        x.u.thread_times.wall_ns = 5000000;
        x.u.thread_times.cpu_ns = 1000000;
        put(w, &x);
        x.u.thread_times.thread = 2;
        x.u.thread_times.wall_ns = 2000000;
        x.u.thread_times.cpu_ns = 500000;
        put(w, &x);
    }
    x = (struct memfmt_record){.tag = MEMFMT_REC_END};
    x.u.end.how = MEMFMT_END_EXITED;
    x.u.end.runtime_ms = 20;
    x.u.end.cpu_user_ns = 3000000 * k;
    x.u.end.cpu_sys_ns = 1000000 * k;
    put(w, &x);
    CHECK(memfmt_writer_finish(w) == 0);
    memfmt_writer_free(w);
    *fd_out = fd;
    char *path = malloc(64);
    snprintf(path, 64, "/proc/self/fd/%d", fd);
    return path;
}

/* ---- the histogram ---- */

static void test_buckets(void)
{
    int bad = 0, unordered = 0;
    unsigned prev = 0;
    for (uint64_t v = 0; v < ((uint64_t)1 << 32); v = v < 4096 ? v + 1 : v + v / 7 + 1) {
        unsigned b = alloctime_bucket(v);
        uint64_t r = alloctime_bucket_value(b);
        /* The reported value is within 1/32 of every value of its bucket. */
        if ((double)(r > v ? r - v : v - r) > (double)v / 32.0) {
            bad++;
        }
        if (b < prev || b >= ALLOCTIME_NBUCKETS) {
            unordered++;
        }
        prev = b;
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(unordered, 0);
    CHECK_EQ(alloctime_bucket(UINT32_MAX), ALLOCTIME_NBUCKETS - 1);
    CHECK_EQ(alloctime_bucket(UINT64_MAX), ALLOCTIME_NBUCKETS - 1); /* saturated */
    CHECK_EQ(alloctime_bucket_value(alloctime_bucket(15)), 15);
    CHECK_EQ(alloctime_bucket_value(alloctime_bucket(60)), 61);
    CHECK_EQ(alloctime_bucket_value(alloctime_bucket(300)), 296);
}

/* ---- the cost type ---- */

static void test_costs(const struct model *m)
{
    CHECK(cost_recorded(&m->header, COST_TIME));
    CHECK_EQ(cost_total(m->acct, COST_TIME), 62300);
    struct cost_vec v;
    cost_of_trace(m->acct, 2, &v);
    CHECK_EQ(v.v[COST_TIME], 1300);
    CHECK_EQ(v.v[COST_CALLS], 3);
    cost_of_trace(m->acct, 3, &v);
    CHECK_EQ(v.v[COST_TIME], 61000);
    CHECK_EQ(v.v[COST_CALLS], 2);
    CHECK_EQ(m->end.cpu_user_ns, 3000000);
    CHECK_EQ(m->end.cpu_sys_ns, 1000000);

    /* The call tree's root is the summary's figure; A;C holds 61000. */
    struct frames *fr = frames_new(m);
    struct calltree *t = calltree_build(fr, m->acct);
    CHECK_EQ(calltree_node(t, CALLTREE_TOP_DOWN, 0)->incl.v[COST_TIME], 62300);
    calltree_sort(t, COST_TIME, 0);
    uint32_t n;
    const uint32_t *kids = calltree_children(t, CALLTREE_TOP_DOWN, 0, &n);
    CHECK_EQ(n, 1); /* A */
    const uint32_t *gk = calltree_children(t, CALLTREE_TOP_DOWN, kids[0], &n);
    CHECK_EQ(n, 2);
    CHECK_EQ(calltree_node(t, CALLTREE_TOP_DOWN, gk[0])->incl.v[COST_TIME], 61000);
    CHECK_EQ(calltree_node(t, CALLTREE_TOP_DOWN, gk[1])->incl.v[COST_TIME], 1300);
    calltree_free(t);
    frames_free(fr);

    /* Ranked: the 40 MiB stack first by time, the small one first by calls. */
    struct report *r = report_new(m);
    CHECK(r != NULL);
    CHECK_EQ(r->nranked[REPORT_TIME], 2);
    CHECK_EQ(r->stacks[r->ranked[REPORT_TIME][0]].time_ns, 61000);
    CHECK_EQ(r->stacks[r->ranked[REPORT_TIME][1]].time_ns, 1300);
    CHECK_EQ(r->stacks[r->ranked[REPORT_CALLS][0]].calls, 3);
    CHECK_EQ(r->stacks[r->ranked[REPORT_CALLS][0]].time_ns, 1300);
    struct report_options o = {.top = 10, .max_frames = 10};
    CHECK(report_section_shown(r, &o, REPORT_TIME));
    report_free(r);
}

/* A window and a thread keep the time of the events they keep. */
static void test_queries(const char *path, const struct model *m)
{
    struct analysis_query q = ANALYSIS_QUERY_INIT;
    q.has_window = 1;
    q.from_ms = 10;
    q.to_ms = 20;
    struct analysis *a;
    int err;
    CHECK(analysis_run(path, m, &q, &a, &err) == 0);
    CHECK_EQ(cost_total(a->acct, COST_TIME), 1790);
    analysis_free(a);
    q = (struct analysis_query)ANALYSIS_QUERY_INIT;
    q.has_window = 1;
    q.from_ms = 0;
    q.to_ms = 10;
    CHECK(analysis_run(path, m, &q, &a, &err) == 0);
    CHECK_EQ(cost_total(a->acct, COST_TIME), 60510);
    analysis_free(a);
    q = (struct analysis_query)ANALYSIS_QUERY_INIT;
    q.thread = 2;
    CHECK(analysis_run(path, m, &q, &a, &err) == 0);
    CHECK_EQ(cost_total(a->acct, COST_TIME), 1790);
    struct cost_vec v;
    cost_of_trace(a->acct, 2, &v);
    CHECK_EQ(v.v[COST_TIME], 790);
    analysis_free(a);
}

/* ---- the tables ---- */

static const struct alloctime_row *row(const struct alloctime_row *rows, uint32_t n, uint32_t key)
{
    for (uint32_t i = 0; i < n; i++) {
        if (rows[i].key == key) {
            return &rows[i];
        }
    }
    return NULL;
}

static void check_row(const struct alloctime_row *r, uint64_t calls, uint64_t total, uint64_t mean, uint64_t p50,
                      uint64_t p99, uint64_t max)
{
    CHECK(r != NULL);
    if (!r) {
        return;
    }
    CHECK_EQ(r->calls, calls);
    CHECK_EQ(r->total_ns, total);
    CHECK_EQ(r->mean_ns, mean);
    CHECK_EQ(r->p50_ns, p50);
    CHECK_EQ(r->p99_ns, p99);
    CHECK_EQ(r->max_ns, max);
}

static void test_tables(const char *path, const struct model *m)
{
    struct alloctime *t;
    int err;
    CHECK(alloctime_run(path, m, &t, &err) == 0);
    CHECK(t->timed);
    CHECK_EQ(t->calls, 9);
    CHECK_EQ(t->total_ns, 62300);
    /* Size classes: 16 bytes (class 5): 100, 50, 300, 60; p50 is the 2nd
     * (60, reported 61: its bucket's middle), p99 the 4th (300 -> 296). */
    CHECK_EQ(t->nsizes, 4);
    check_row(row(t->sizes, t->nsizes, sizes_bucket_of(16)), 4, 510, 128, 61, 296, 300);
    check_row(row(t->sizes, t->nsizes, sizes_bucket_of(BIG)), 2, 60000, 30000, 19968, 39936, 40000);
    check_row(row(t->sizes, t->nsizes, sizes_bucket_of(100)), 1, 1000, 1000, 1000, 1000, 1000);
    check_row(row(t->sizes, t->nsizes, sizes_bucket_of(200)), 2, 790, 395, 90, 688, 700);
    CHECK_EQ(sizes_bucket_of(BIG), 26);
    /* Functions: malloc 100+300+40000, free 50+60+20000+90, new, realloc. */
    CHECK_EQ(t->nfuncs, 4);
    check_row(row(t->funcs, t->nfuncs, MEMFMT_K_MALLOC), 3, 40400, 13467, 296, 39936, 40000);
    check_row(row(t->funcs, t->nfuncs, MEMFMT_K_FREE), 4, 20200, 5050, 61, 19968, 20000);
    check_row(row(t->funcs, t->nfuncs, MEMFMT_K_NEW), 1, 1000, 1000, 1000, 1000, 1000);
    check_row(row(t->funcs, t->nfuncs, MEMFMT_K_REALLOC), 1, 700, 700, 688, 688, 700);
    /* Threads, with their lifetimes and CPU times. */
    CHECK_EQ(t->nthreads, 2);
    const struct alloctime_row *t1 = row(t->threads, t->nthreads, 1), *t2 = row(t->threads, t->nthreads, 2);
    CHECK(t1 && t2);
    if (t1 && t2) {
        CHECK_EQ(t1->calls, 6);
        CHECK_EQ(t1->total_ns, 60510);
        CHECK_EQ(t1->tid, 100);
        CHECK(t1->times.known);
        CHECK_EQ(t1->times.wall_ns, 5000000);
        CHECK_EQ(t1->times.cpu_ns, 1000000);
        CHECK_EQ(t2->calls, 3);
        CHECK_EQ(t2->total_ns, 1790);
        CHECK_EQ(t2->tid, 101);
        CHECK_EQ(t2->times.wall_ns, 2000000);
    }
    /* The text and JSON outputs hold the figures. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    alloctime_print_json(t, f);
    fclose(f);
    CHECK(strstr(buf, "\"total_ns\": 62300") != NULL);
    CHECK(strstr(buf, "\"function\": \"operator new\"") != NULL);
    free(buf);
    buf = NULL;
    f = open_memstream(&buf, &len);
    alloctime_print_diff_text(t, t, f);
    fclose(f);
    CHECK(strstr(buf, "new/base 1.00x") != NULL);
    free(buf);
    alloctime_free(t);
}

/* An untimed file: no time cost, empty tables, the section not shown. */
static void test_untimed(void)
{
    int fd;
    char *path = write_recording(&fd, 0);
    struct model *m;
    int err;
    CHECK(model_load(path, &m, &err) == 0);
    CHECK(!cost_recorded(&m->header, COST_TIME));
    CHECK_EQ(cost_total(m->acct, COST_TIME), 0);
    struct alloctime *t;
    CHECK(alloctime_run(path, m, &t, &err) == 0);
    CHECK(!t->timed);
    CHECK_EQ(t->nsizes + t->nfuncs + t->nthreads, 0);
    alloctime_free(t);
    struct report *r = report_new(m);
    struct report_options o = {.top = 10, .max_frames = 10};
    CHECK(!report_section_shown(r, &o, REPORT_TIME));
    o.sections = 1u << REPORT_TIME;
    CHECK(report_section_shown(r, &o, REPORT_TIME));
    report_free(r);
    model_free(m);
    free(path);
    close(fd);
}

/* test_alloctime --write FILE: the timed recording into FILE, for
 * test_alloc_time.py's checks of memprint and memtui on exact figures. */
static int write_file(const char *out)
{
    int fd;
    char *path = write_recording(&fd, 1);
    FILE *in = fopen(path, "rb"), *o = fopen(out, "wb");
    CHECK(in && o);
    if (!in || !o) {
        return 1;
    }
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
        CHECK(fwrite(buf, 1, n, o) == n);
    }
    fclose(in);
    CHECK(fclose(o) == 0);
    free(path);
    close(fd);
    return check_summary("test_alloctime --write");
}

/* test_alloctime --write-threads FILE N: a hostile timed recording for
 * test_alloc_time.py's bounds: N thread indexes (spread up to the format's
 * limit), each with one malloc and free of 16 bytes whose times are the
 * largest a record holds, and a THREAD_TIMES record of the largest
 * values. memprint --alloc-time must stay small and quick on it. */
static int write_threads(const char *out, uint32_t n)
{
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    struct memfmt_header h = {MEMFMT_VERSION, 8, 1, MEMFMT_HF_TIMED};
    int rc;
    memfmt_writer *w = memfmt_writer_new(fd, &h, 1, &rc);
    CHECK(w != NULL);
    if (!w) {
        return 1;
    }
    struct memfmt_record x = {.tag = MEMFMT_REC_NODE};
    x.u.node.ip = 0xa00;
    put(w, &x);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t thread = 1 + (uint32_t)(((uint64_t)i * (MEMFMT_MAX_THREADS - 2)) / n);
        x = (struct memfmt_record){.tag = MEMFMT_REC_THREAD};
        x.u.thread.index = thread;
        x.u.thread.tid = 1000 + i;
        put(w, &x);
        w_alloc(w, thread, MEMFMT_K_MALLOC, 16, 1, 1, UINT64_MAX);
        w_free(w, thread, 16, 1, 1, 1, UINT64_MAX);
        x = (struct memfmt_record){.tag = MEMFMT_REC_THREAD_TIMES};
        x.u.thread_times.thread = thread;
        x.u.thread_times.wall_ns = UINT64_MAX;
        x.u.thread_times.cpu_ns = UINT64_MAX;
        put(w, &x);
    }
    x = (struct memfmt_record){.tag = MEMFMT_REC_END};
    x.u.end.how = MEMFMT_END_EXITED;
    put(w, &x);
    CHECK(memfmt_writer_finish(w) == 0);
    memfmt_writer_free(w);
    CHECK(close(fd) == 0);
    return check_summary("test_alloctime --write-threads");
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write") == 0) {
        return write_file(argv[2]);
    }
    if (argc == 4 && strcmp(argv[1], "--write-threads") == 0) {
        return write_threads(argv[2], (uint32_t)strtoul(argv[3], NULL, 10));
    }
    test_buckets();
    int fd;
    char *path = write_recording(&fd, 1);
    struct model *m;
    int err;
    CHECK(model_load(path, &m, &err) == 0);
    CHECK_EQ(m->bad_records, 0);
    test_costs(m);
    test_queries(path, m);
    test_tables(path, m);
    model_free(m);
    free(path);
    close(fd);
    test_untimed();
    return check_summary("test_alloctime");
}
