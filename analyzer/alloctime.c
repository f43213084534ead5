// SPDX-License-Identifier: MIT
/* Allocator time tables (alloctime.h): one record-by-record pass that adds
 * each call's time to its size class, its function and its thread, each a
 * running sum, a maximum and a log-linear histogram for the percentiles.
 * Memory is bounded by the table sizes, never by the number of calls. */
#include "alloctime.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "accounting.h"
#include "escape.h"
#include "sizes.h"
#include "util.h"

/* Sampled weights are kept in 1/SCALE units, as the accounting keeps them. */
#define SCALE 1024.0

/* One row being filled. Sums are in weight units: 1 per call, or
 * SCALE times its weight when sampled. */
struct acc {
    uint64_t w_calls;
    uint64_t w_total;
    uint64_t max_ns;
    uint64_t *hist; /* ALLOCTIME_NBUCKETS; NULL until the first call */
};

struct thread_meta {
    uint32_t index;
    struct thread_times times;
};

struct pass {
    const struct model *m;
    int sampled;
    double rate;
    struct acc sizes[SIZES_NBUCKETS];
    struct acc funcs[MEMFMT_K_COUNT];
    struct acc *threads; /* rows; row 0 is the threads beyond ALLOCTIME_MAX_THREADS */
    struct thread_meta *meta;
    uint32_t nrows;
    size_t rows_cap;
    uint32_t *row_of; /* thread index -> row + 1; 0: none yet */
    size_t row_of_cap;
    uint32_t *tid_of; /* thread index -> tid, from THREAD records */
    size_t tid_of_cap;
    uint32_t merged;
    uint64_t w_calls, w_total;
};

unsigned alloctime_bucket(uint64_t ns)
{
    if (ns < ALLOCTIME_SUB) {
        return (unsigned)ns;
    }
    if (ns > UINT32_MAX) {
        ns = UINT32_MAX;
    }
    unsigned e = 63u - (unsigned)__builtin_clzll(ns); /* 4..31 */
    return (e - 3) * ALLOCTIME_SUB + (unsigned)((ns >> (e - 4)) & (ALLOCTIME_SUB - 1));
}

uint64_t alloctime_bucket_value(unsigned b)
{
    if (b < ALLOCTIME_SUB) {
        return b;
    }
    unsigned e = b / ALLOCTIME_SUB + 3;
    uint64_t lower = (uint64_t)(ALLOCTIME_SUB + b % ALLOCTIME_SUB) << (e - 4);
    uint64_t width = (uint64_t)1 << (e - 4);
    return lower + width / 2;
}

/* Name of an allocation function (enum memfmt_kind): "malloc",
 * "operator new", ...; "?" for a bad value. */
static const char *alloctime_kind_name(uint32_t kind)
{
    static const char *const names[MEMFMT_K_COUNT] = {
        "malloc",         "calloc",   "realloc",         "reallocarray",      "posix_memalign",
        "aligned_alloc",  "memalign", "valloc",          "pvalloc",           "operator new",
        "operator new[]", "free",     "operator delete", "operator delete[]", "pool_alloc",
        "pool_free",
    };
    return kind < MEMFMT_K_COUNT ? names[kind] : "?";
}

static void acc_add(struct acc *a, uint64_t w, uint64_t ns)
{
    if (!a->hist) {
        a->hist = xcalloc(ALLOCTIME_NBUCKETS, sizeof *a->hist);
    }
    a->w_calls += w;
    a->w_total += w * ns;
    a->hist[alloctime_bucket(ns)] += w;
    if (ns > a->max_ns) {
        a->max_ns = ns;
    }
}

/* The row of thread `index`, made at its first use. */
static uint32_t thread_row(struct pass *p, uint32_t index)
{
    if (index >= p->row_of_cap) {
        size_t old = p->row_of_cap;
        xgrow((void **)&p->row_of, &p->row_of_cap, (size_t)index + 1, sizeof *p->row_of);
        memset(p->row_of + old, 0, (p->row_of_cap - old) * sizeof *p->row_of);
    }
    if (p->row_of[index]) {
        return p->row_of[index] - 1;
    }
    if (p->nrows == 0) {
        /* Row 0: the threads beyond the limit, kept first so that a row
         * number never moves. */
        xgrow((void **)&p->threads, &p->rows_cap, 1, sizeof *p->threads);
        p->meta = xrealloc(p->meta, p->rows_cap * sizeof *p->meta);
        memset(&p->threads[0], 0, sizeof p->threads[0]);
        memset(&p->meta[0], 0, sizeof p->meta[0]);
        p->nrows = 1;
    }
    uint32_t row = 0;
    if (p->nrows <= ALLOCTIME_MAX_THREADS) {
        row = p->nrows++;
        xgrow((void **)&p->threads, &p->rows_cap, p->nrows, sizeof *p->threads);
        p->meta = xrealloc(p->meta, p->rows_cap * sizeof *p->meta);
        memset(&p->threads[row], 0, sizeof p->threads[row]);
        memset(&p->meta[row], 0, sizeof p->meta[row]);
        p->meta[row].index = index;
    } else {
        p->merged++;
    }
    p->row_of[index] = row + 1;
    return row;
}

/* What one sampled call stands for, in weight units. */
static uint64_t weight(const struct pass *p, uint64_t size)
{
    if (!p->sampled) {
        return 1;
    }
    double q = -expm1(-(double)size / p->rate);
    return q > 0 ? (uint64_t)llround(SCALE / q) : 0;
}

static void add_call(struct pass *p, uint32_t thread, uint32_t kind, uint64_t size, uint64_t ns)
{
    if (size > ACCT_MAX_SIZE || thread >= MEMFMT_MAX_THREADS) {
        return; /* refused by the accounting too (corrupt input) */
    }
    if (ns > ACCT_MAX_EVENT_NS) {
        ns = ACCT_MAX_EVENT_NS; /* as the batched events hold it */
    }
    uint64_t w = weight(p, size);
    acc_add(&p->sizes[sizes_bucket_of(size)], w, ns);
    acc_add(&p->funcs[kind < MEMFMT_K_COUNT ? kind : MEMFMT_K_MALLOC], w, ns);
    uint32_t row = thread_row(p, thread); /* may move p->threads */
    acc_add(&p->threads[row], w, ns);
    p->w_calls += w;
    p->w_total += w * ns;
}

static void on_record(struct pass *p, const struct memfmt_record *r)
{
    switch (r->tag) {
    case MEMFMT_REC_ALLOC:
    case MEMFMT_REC_REALLOC: add_call(p, r->u.alloc.thread, r->u.alloc.kind, r->u.alloc.size, r->u.alloc.ns); break;
    case MEMFMT_REC_FREE: add_call(p, r->u.free.thread, r->u.free.kind, r->u.free.size, r->u.free.ns); break;
    case MEMFMT_REC_THREAD:
        if (r->u.thread.index < MEMFMT_MAX_THREADS) {
            if (r->u.thread.index >= p->tid_of_cap) {
                size_t old = p->tid_of_cap;
                xgrow((void **)&p->tid_of, &p->tid_of_cap, (size_t)r->u.thread.index + 1, sizeof *p->tid_of);
                memset(p->tid_of + old, 0, (p->tid_of_cap - old) * sizeof *p->tid_of);
            }
            p->tid_of[r->u.thread.index] = r->u.thread.tid;
        }
        break;
    case MEMFMT_REC_THREAD_TIMES:
        if (r->u.thread_times.thread < MEMFMT_MAX_THREADS) {
            thread_times_add(&p->meta[thread_row(p, r->u.thread_times.thread)].times, r);
        }
        break;
    default: break;
    }
}

/* ---- the tables ---- */

static uint64_t unscale(const struct pass *p, uint64_t v)
{
    return p->sampled ? (uint64_t)llround((double)v / SCALE) : v;
}

/* The value below which a fraction `q` of the weight lies. */
static uint64_t percentile(const struct acc *a, double q)
{
    uint64_t target = (uint64_t)ceil(q * (double)a->w_calls);
    if (target == 0) {
        target = 1;
    }
    uint64_t seen = 0;
    for (unsigned b = 0; b < ALLOCTIME_NBUCKETS; b++) {
        seen += a->hist[b];
        if (seen >= target) {
            uint64_t v = alloctime_bucket_value(b);
            return v < a->max_ns ? v : a->max_ns;
        }
    }
    return a->max_ns;
}

static void fill_row(const struct pass *p, const struct acc *a, uint32_t key, struct alloctime_row *out)
{
    memset(out, 0, sizeof *out);
    out->key = key;
    out->calls = unscale(p, a->w_calls);
    out->total_ns = unscale(p, a->w_total);
    out->max_ns = a->max_ns;
    if (a->w_calls) {
        out->mean_ns = (uint64_t)llround((double)a->w_total / (double)a->w_calls);
        out->p50_ns = percentile(a, 0.50);
        out->p99_ns = percentile(a, 0.99);
    }
}

static void make_tables(struct pass *p, struct alloctime *t)
{
    t->sizes = xcalloc(SIZES_NBUCKETS, sizeof *t->sizes);
    for (unsigned k = 0; k < SIZES_NBUCKETS; k++) {
        if (p->sizes[k].w_calls) {
            fill_row(p, &p->sizes[k], k, &t->sizes[t->nsizes++]);
        }
    }
    t->funcs = xcalloc(MEMFMT_K_COUNT, sizeof *t->funcs);
    for (unsigned k = 0; k < MEMFMT_K_COUNT; k++) {
        if (p->funcs[k].w_calls) {
            fill_row(p, &p->funcs[k], k, &t->funcs[t->nfuncs++]);
        }
    }
    t->threads = xcalloc(p->nrows ? p->nrows : 1, sizeof *t->threads);
    /* Rows in the order threads first appeared (their index order in a
     * recording by memrec), then the merged row 0. */
    for (uint32_t i = 1; i <= p->nrows; i++) {
        uint32_t r = i < p->nrows ? i : 0;
        if (p->nrows == 0) {
            break;
        }
        const struct thread_meta *mt = &p->meta[r];
        if (!p->threads[r].w_calls && !mt->times.known) {
            continue;
        }
        struct alloctime_row *row = &t->threads[t->nthreads++];
        fill_row(p, &p->threads[r], r ? mt->index : 0, row);
        row->tid = r && mt->index < p->tid_of_cap ? p->tid_of[mt->index] : 0;
        row->times = mt->times;
    }
    t->merged_threads = p->merged;
    t->calls = unscale(p, p->w_calls);
    t->total_ns = unscale(p, p->w_total);
}

int alloctime_run(const char *path, const struct model *m, struct alloctime **out, int *err_errno)
{
    *err_errno = 0;
    *out = NULL;
    int rc;
    memfmt_reader *rd = memfmt_reader_open(path, &rc);
    if (!rd) {
        *err_errno = errno;
        return rc;
    }
    struct alloctime *t = xcalloc(1, sizeof *t);
    t->timed = (m->header.flags & MEMFMT_HF_TIMED) != 0;
    t->sampled = m->sample_rate != 0;
    struct pass *p = xcalloc(1, sizeof *p);
    p->m = m;
    p->sampled = t->sampled;
    p->rate = (double)m->sample_rate;
    struct memfmt_record rec;
    while (t->timed && (rc = memfmt_read(rd, &rec)) > 0) {
        on_record(p, &rec);
    }
    if (t->timed && rc < 0) {
        t->stop_rc = rc;
    }
    memfmt_reader_free(rd);
    make_tables(p, t);
    for (unsigned k = 0; k < SIZES_NBUCKETS; k++) {
        free(p->sizes[k].hist);
    }
    for (unsigned k = 0; k < MEMFMT_K_COUNT; k++) {
        free(p->funcs[k].hist);
    }
    for (uint32_t r = 0; r < p->nrows; r++) {
        free(p->threads[r].hist);
    }
    free(p->threads);
    free(p->meta);
    free(p->row_of);
    free(p->tid_of);
    free(p);
    *out = t;
    return 0;
}

void alloctime_free(struct alloctime *t)
{
    if (!t) {
        return;
    }
    free(t->sizes);
    free(t->funcs);
    free(t->threads);
    free(t);
}

/* ---- text ---- */

static void size_label(uint32_t k, char *buf, size_t cap)
{
    if (k == 0) {
        snprintf(buf, cap, "0");
    } else if (k == 64) {
        snprintf(buf, cap, "%llu -", (unsigned long long)((uint64_t)1 << 63));
    } else {
        snprintf(buf, cap, "%llu - %llu", (unsigned long long)((uint64_t)1 << (k - 1)),
                 (unsigned long long)(((uint64_t)1 << k) - 1));
    }
}

/* One figure with the estimate mark in front ("~1234"). */
static const char *cell(char *buf, size_t cap, const char *est, uint64_t v)
{
    snprintf(buf, cap, "%s%llu", est, (unsigned long long)v);
    return buf;
}

static void row_text(const char *label, const struct alloctime_row *r, const char *est, FILE *f)
{
    char c[5][40], b[32];
    snprintf(c[1], sizeof c[1], "%s%s", est, util_ns(b, sizeof b, r->total_ns));
    fprintf(f, "  %-28s %13s %13s %10s %10s %10s %10llu", label, cell(c[0], sizeof c[0], est, r->calls), c[1],
            cell(c[2], sizeof c[2], est, r->mean_ns), cell(c[3], sizeof c[3], est, r->p50_ns),
            cell(c[4], sizeof c[4], est, r->p99_ns), (unsigned long long)r->max_ns);
}

static void head_text(const char *what, FILE *f)
{
    fprintf(f, "  %-28s %13s %13s %10s %10s %10s %10s", what, "calls", "total", "mean ns", "p50 ns", "p99 ns",
            "max ns");
}

void alloctime_print_text(const struct alloctime *t, FILE *f)
{
    if (!t->timed) {
        fputs("allocator time: not recorded (memrec --time)\n", f);
        return;
    }
    const char *est = t->sampled ? "~" : "";
    char label[64];
    char b[32];
    fprintf(f,
            "time in the allocator: %s%s (%llu ns) in %s%llu calls (latency of each call; p50 and p99 within "
            "3.2%%)\n",
            est, util_ns(b, sizeof b, t->total_ns), (unsigned long long)t->total_ns, est, (unsigned long long)t->calls);
    if (t->sampled) {
        fputs("sampled: the sampled calls, each weighted as it stands for others; '~' marks estimates\n", f);
    }
    fputs("\nALLOCATOR TIME PER SIZE CLASS (requested bytes; a free in its block's class)\n", f);
    head_text("size", f);
    fputc('\n', f);
    for (uint32_t i = 0; i < t->nsizes; i++) {
        size_label(t->sizes[i].key, label, sizeof label);
        row_text(label, &t->sizes[i], est, f);
        fputc('\n', f);
    }
    fputs("\nALLOCATOR TIME PER FUNCTION\n", f);
    head_text("function", f);
    fputc('\n', f);
    for (uint32_t i = 0; i < t->nfuncs; i++) {
        row_text(alloctime_kind_name(t->funcs[i].key), &t->funcs[i], est, f);
        fputc('\n', f);
    }
    fputs(
        "\nALLOCATOR TIME PER THREAD (lifetime and CPU time of the thread; share: its allocator time / its lifetime)\n",
        f);
    head_text("thread (tid)", f);
    fprintf(f, " %12s %12s %7s\n", "lifetime", "cpu", "share");
    for (uint32_t i = 0; i < t->nthreads; i++) {
        const struct alloctime_row *r = &t->threads[i];
        if (r->key == 0) {
            snprintf(label, sizeof label, "%u more threads", t->merged_threads);
        } else {
            snprintf(label, sizeof label, "%u (%u)", r->key, r->tid);
        }
        row_text(label, r, est, f);
        thread_times_text(&r->times, f);
        if (r->times.known && r->times.wall_ns) {
            fprintf(f, " %6.1f%%\n", 100.0 * (double)r->total_ns / (double)r->times.wall_ns);
        } else {
            fprintf(f, " %7s\n", "-");
        }
    }
}

/* ---- JSON ---- */

static void row_json(const struct alloctime_row *r, FILE *f)
{
    fprintf(f,
            "\"calls\": %llu, \"total_ns\": %llu, \"mean_ns\": %llu, \"p50_ns\": %llu, \"p99_ns\": %llu, "
            "\"max_ns\": %llu",
            (unsigned long long)r->calls, (unsigned long long)r->total_ns, (unsigned long long)r->mean_ns,
            (unsigned long long)r->p50_ns, (unsigned long long)r->p99_ns, (unsigned long long)r->max_ns);
}

static void size_bounds_json(uint32_t k, FILE *f)
{
    uint64_t lo = k ? (uint64_t)1 << (k - 1) : 0;
    uint64_t hi = k == 0 ? 0 : (k == 64 ? UINT64_MAX : ((uint64_t)1 << k) - 1);
    fprintf(f, "\"size_class\": %u, \"min_size\": %llu, \"max_size\": %llu, ", k, (unsigned long long)lo,
            (unsigned long long)hi);
}

void alloctime_print_json(const struct alloctime *t, FILE *f)
{
    fputs("\"alloc_time\": ", f);
    if (!t->timed) {
        fputs("null", f);
        return;
    }
    fprintf(f, "{\"sampled\": %s, \"calls\": %llu, \"total_ns\": %llu, \"percentile_relative_error\": 0.03125",
            t->sampled ? "true" : "false", (unsigned long long)t->calls, (unsigned long long)t->total_ns);
    fputs(", \"size_classes\": [", f);
    for (uint32_t i = 0; i < t->nsizes; i++) {
        fputs(i ? ", {" : "{", f);
        size_bounds_json(t->sizes[i].key, f);
        row_json(&t->sizes[i], f);
        fputc('}', f);
    }
    fputs("], \"functions\": [", f);
    for (uint32_t i = 0; i < t->nfuncs; i++) {
        fprintf(f, "%s{\"function\": \"%s\", ", i ? ", " : "", alloctime_kind_name(t->funcs[i].key));
        row_json(&t->funcs[i], f);
        fputc('}', f);
    }
    fputs("], \"threads\": [", f);
    for (uint32_t i = 0; i < t->nthreads; i++) {
        const struct alloctime_row *r = &t->threads[i];
        fprintf(f, "%s{\"thread\": %u, \"tid\": %u, ", i ? ", " : "", r->key, r->tid);
        row_json(r, f);
        thread_times_json(&r->times, f);
        fputc('}', f);
    }
    fprintf(f, "], \"merged_threads\": %u}", t->merged_threads);
}

/* ---- comparison ---- */

/* The row of `key` in rows[n], NULL when absent. */
static const struct alloctime_row *find_row(const struct alloctime_row *rows, uint32_t n, uint32_t key)
{
    for (uint32_t i = 0; i < n; i++) {
        if (rows[i].key == key) {
            return &rows[i];
        }
    }
    return NULL;
}

/* Keys present in either table, ascending, into out (room for nb + nn). */
static uint32_t union_keys(const struct alloctime_row *b, uint32_t nb, const struct alloctime_row *n, uint32_t nn,
                           uint32_t *out)
{
    uint32_t k = 0, i = 0, j = 0;
    while (i < nb || j < nn) {
        if (j >= nn || (i < nb && b[i].key < n[j].key)) {
            out[k++] = b[i++].key;
        } else if (i >= nb || n[j].key < b[i].key) {
            out[k++] = n[j++].key;
        } else {
            out[k++] = b[i++].key;
            j++;
        }
    }
    return k;
}

static const struct alloctime_row zero_row;

/* new / base as "1.23x", or "-" when there is no base or no new call. */
static void ratio(uint64_t base, uint64_t newer, uint64_t new_calls, FILE *f)
{
    if (base && new_calls) {
        fprintf(f, " %8.3gx", (double)newer / (double)base);
    } else {
        fprintf(f, " %9s", "-");
    }
}

static void diff_table_text(const char *title, const char *what, const struct alloctime_row *b, uint32_t nb,
                            const struct alloctime_row *n, uint32_t nn, int sizes, FILE *f)
{
    fprintf(f, "\n%s\n", title);
    fprintf(f, "  %-28s %12s %10s %10s %10s %12s %10s %10s %10s %12s %12s %13s %9s %9s\n", what, "base calls",
            "base mean", "base p50", "base p99", "new calls", "new mean", "new p50", "new p99", "base total",
            "new total", "change", "new/base", "p50 n/b");
    uint32_t *keys = xmalloc(((size_t)nb + nn + 1) * sizeof *keys);
    uint32_t k = union_keys(b, nb, n, nn, keys);
    char label[64];
    for (uint32_t i = 0; i < k; i++) {
        const struct alloctime_row *rb = find_row(b, nb, keys[i]), *rn = find_row(n, nn, keys[i]);
        rb = rb ? rb : &zero_row;
        rn = rn ? rn : &zero_row;
        if (sizes) {
            size_label(keys[i], label, sizeof label);
        } else {
            snprintf(label, sizeof label, "%s", alloctime_kind_name(keys[i]));
        }
        char b1[32], b2[32], b3[40];
        uint64_t grow = rn->total_ns >= rb->total_ns ? rn->total_ns - rb->total_ns : rb->total_ns - rn->total_ns;
        snprintf(b3, sizeof b3, "%c%s", rn->total_ns >= rb->total_ns ? '+' : '-', util_ns(b1, sizeof b1, grow));
        /* The percentiles beside the mean: one preempted call can make a
         * class's mean many times its p50 on a loaded machine. */
        fprintf(f, "  %-28s %12llu %10llu %10llu %10llu %12llu %10llu %10llu %10llu %12s %12s %13s", label,
                (unsigned long long)rb->calls, (unsigned long long)rb->mean_ns, (unsigned long long)rb->p50_ns,
                (unsigned long long)rb->p99_ns, (unsigned long long)rn->calls, (unsigned long long)rn->mean_ns,
                (unsigned long long)rn->p50_ns, (unsigned long long)rn->p99_ns, util_ns(b1, sizeof b1, rb->total_ns),
                util_ns(b2, sizeof b2, rn->total_ns), b3);
        ratio(rb->mean_ns, rn->mean_ns, rn->calls, f);
        ratio(rb->p50_ns, rn->p50_ns, rn->calls, f);
        fputc('\n', f);
    }
    free(keys);
}

void alloctime_print_diff_text(const struct alloctime *base, const struct alloctime *newer, FILE *f)
{
    if (!base->timed || !newer->timed) {
        fprintf(f, "allocator time: not recorded in %s (memrec --time)\n",
                base->timed ? "new" : (newer->timed ? "base" : "either"));
        return;
    }
    char b1[32], b2[32];
    fprintf(f, "\ntime in the allocator: base %s%s in %llu calls, new %s%s in %llu calls", base->sampled ? "~" : "",
            util_ns(b1, sizeof b1, base->total_ns), (unsigned long long)base->calls, newer->sampled ? "~" : "",
            util_ns(b2, sizeof b2, newer->total_ns), (unsigned long long)newer->calls);
    fprintf(f, " (%+lld ns", (long long)newer->total_ns - (long long)base->total_ns);
    if (base->total_ns) {
        fprintf(f, ", new/base %.2fx", (double)newer->total_ns / (double)base->total_ns);
    }
    fputs(")\n", f);
    diff_table_text(
        "ALLOCATOR TIME PER SIZE CLASS: BASE AND NEW (mean, p50, p99: ns a call; new/base: ratio of the means, "
        "p50 n/b: of the p50s)",
        "size", base->sizes, base->nsizes, newer->sizes, newer->nsizes, 1, f);
    diff_table_text("ALLOCATOR TIME PER FUNCTION: BASE AND NEW", "function", base->funcs, base->nfuncs, newer->funcs,
                    newer->nfuncs, 0, f);
}

static void diff_table_json(const char *name, const struct alloctime_row *b, uint32_t nb, const struct alloctime_row *n,
                            uint32_t nn, int sizes, FILE *f)
{
    fprintf(f, "\"%s\": [", name);
    uint32_t *keys = xmalloc(((size_t)nb + nn + 1) * sizeof *keys);
    uint32_t k = union_keys(b, nb, n, nn, keys);
    for (uint32_t i = 0; i < k; i++) {
        const struct alloctime_row *rb = find_row(b, nb, keys[i]), *rn = find_row(n, nn, keys[i]);
        rb = rb ? rb : &zero_row;
        rn = rn ? rn : &zero_row;
        fputs(i ? ", {" : "{", f);
        if (sizes) {
            size_bounds_json(keys[i], f);
        } else {
            fprintf(f, "\"function\": \"%s\", ", alloctime_kind_name(keys[i]));
        }
        fputs("\"base\": {", f);
        row_json(rb, f);
        fputs("}, \"new\": {", f);
        row_json(rn, f);
        fprintf(f, "}, \"delta_total_ns\": %lld}", (long long)rn->total_ns - (long long)rb->total_ns);
    }
    fputc(']', f);
    free(keys);
}

/* The same as JSON members (`"alloc_time_diff": {...}`). */
static void alloctime_print_diff_json(const struct alloctime *base, const struct alloctime *newer, FILE *f)
{
    fputs("\"alloc_time_diff\": ", f);
    if (!base->timed || !newer->timed) {
        fputs("null", f);
        return;
    }
    fprintf(f, "{\"base_total_ns\": %llu, \"new_total_ns\": %llu, ", (unsigned long long)base->total_ns,
            (unsigned long long)newer->total_ns);
    diff_table_json("size_classes", base->sizes, base->nsizes, newer->sizes, newer->nsizes, 1, f);
    fputs(", ", f);
    diff_table_json("functions", base->funcs, base->nfuncs, newer->funcs, newer->nfuncs, 0, f);
    fputc('}', f);
}

/* ---- memprint --alloc-time ---- */

void alloctime_print_report(const struct alloctime *t, const struct model *m, int json, FILE *f)
{
    if (json) {
        fprintf(f, "{\"program\": ");
        esc_json_fputs(model_program(m), f);
        fprintf(f, ", \"runtime_ms\": %llu, ", (unsigned long long)model_runtime_ms(m));
        alloctime_print_json(t, f);
        fputs("}\n", f);
    } else {
        fputs("program: ", f);
        esc_text_fputs(model_program(m), f);
        fputc('\n', f);
        alloctime_print_text(t, f);
    }
}

void alloctime_print_compare(const struct alloctime *base, const struct model *mb, const struct alloctime *newer,
                             const struct model *mn, int json, FILE *f)
{
    if (json) {
        fputs("{\"base_program\": ", f);
        esc_json_fputs(model_program(mb), f);
        fputs(", \"new_program\": ", f);
        esc_json_fputs(model_program(mn), f);
        fputs(", ", f);
        alloctime_print_diff_json(base, newer, f);
        fputs("}\n", f);
    } else {
        fputs("comparing base: ", f);
        esc_text_fputs(model_program(mb), f);
        fputs("\n     with new: ", f);
        esc_text_fputs(model_program(mn), f);
        fputc('\n', f);
        alloctime_print_diff_text(base, newer, f);
    }
}
