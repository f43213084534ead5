// SPDX-License-Identifier: MIT
/* Layout of the size histogram and the time series (charts.h). */
#include "charts.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "names.h"
#include "util.h"

/* ---- sizes ---- */

static void bar(uint64_t v, uint64_t max, int width, FILE *f)
{
    int n = max ? (int)((double)v / (double)max * width + 0.5) : 0;
    if (v > 0 && n == 0) {
        n = 1;
    }
    for (int i = 0; i < n; i++) {
        fputc('#', f);
    }
}

/* The histogram as text: one line per non-empty bucket (range, calls,
 * bytes, temporary, a bar of calls), then the `top` most frequent exact
 * sizes. */
static void charts_sizes_text(const struct sizes *s, uint32_t top, FILE *f)
{
    top = top < CHARTS_MAX_TOP ? top : CHARTS_MAX_TOP;
    char b1[32];
    fprintf(f, "SIZES OF ALLOCATIONS (requested bytes)\n");
    fprintf(f, "  %llu calls, %s (%llu bytes), %llu temporary\n", (unsigned long long)s->calls,
            util_bytes(b1, sizeof b1, s->bytes), (unsigned long long)s->bytes, (unsigned long long)s->temporary);
    uint64_t max = 0;
    for (int k = 0; k < SIZES_NBUCKETS; k++) {
        if (s->buckets[k].calls > max) {
            max = s->buckets[k].calls;
        }
    }
    fprintf(f, "  %-27s %12s %16s %12s\n", "size", "calls", "bytes", "temporary");
    for (int k = 0; k < SIZES_NBUCKETS; k++) {
        const struct sizes_bucket *b = &s->buckets[k];
        if (b->calls == 0) {
            continue;
        }
        char range[64];
        snprintf(range, sizeof range, "%" PRIu64 " - %" PRIu64, b->lo, b->hi);
        fprintf(f, "  %-27s %12" PRIu64 " %16" PRIu64 " %12" PRIu64 "  ", range, b->calls, b->bytes, b->temporary);
        bar(b->calls, max, 24, f);
        fputc('\n', f);
    }
    struct sizes_exact *e = xmalloc(((size_t)top + 1) * sizeof *e);
    uint32_t n = sizes_top(s, e, top);
    fprintf(f, "\nMOST FREQUENT SIZES\n");
    if (n == 0) {
        fprintf(f, "  (none)\n");
    }
    for (uint32_t i = 0; i < n; i++) {
        fprintf(f, "  %12" PRIu64 " bytes: %" PRIu64 " calls (%.1f%%), %" PRIu64 " temporary\n", e[i].size, e[i].calls,
                s->calls ? 100.0 * (double)e[i].calls / (double)s->calls : 0.0, e[i].temporary);
    }
    free(e);
}

/* The histogram as the members of a JSON object (no braces): "buckets"
 * (non-empty ones) and "top_sizes". */
static void charts_sizes_json(const struct sizes *s, uint32_t top, FILE *f)
{
    top = top < CHARTS_MAX_TOP ? top : CHARTS_MAX_TOP;
    fprintf(f, "\"calls\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"temporary\": %" PRIu64 ", \"buckets\": [", s->calls,
            s->bytes, s->temporary);
    int first = 1;
    for (int k = 0; k < SIZES_NBUCKETS; k++) {
        const struct sizes_bucket *b = &s->buckets[k];
        if (b->calls == 0) {
            continue;
        }
        fprintf(f,
                "%s{\"bucket\": %d, \"min\": %" PRIu64 ", \"max\": %" PRIu64 ", \"calls\": %" PRIu64
                ", \"bytes\": %" PRIu64 ", \"temporary\": %" PRIu64 "}",
                first ? "" : ", ", k, b->lo, b->hi, b->calls, b->bytes, b->temporary);
        first = 0;
    }
    fputs("], \"top_sizes\": [", f);
    struct sizes_exact *e = xmalloc(((size_t)top + 1) * sizeof *e);
    uint32_t n = sizes_top(s, e, top);
    for (uint32_t i = 0; i < n; i++) {
        fprintf(f, "%s{\"size\": %" PRIu64 ", \"calls\": %" PRIu64 ", \"temporary\": %" PRIu64 "}", i ? ", " : "",
                e[i].size, e[i].calls, e[i].temporary);
    }
    fputs("]", f);
    free(e);
}

void charts_json_str(const char *s, FILE *f)
{
    esc_json_fputs(s, f);
}

static const struct accounting *rank_acct;

static int by_calls(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    uint64_t ca = accounting_cost(rank_acct, a)->calls, cb = accounting_cost(rank_acct, b)->calls;
    if (ca != cb) {
        return ca > cb ? -1 : 1;
    }
    return a < b ? -1 : 1;
}

/* The sizes of the `top` call stacks with the most calls in `a` (an
 * accounting of the same query as `s`, which must have been filled with
 * sizes = 2), each with its innermost frame (named through `fr`) and its
 * `per` most frequent sizes; text, or the members of a JSON object
 * ("by_stack": [...]) with `json`. */
static void charts_sizes_by_stack(const struct sizes *s, const struct accounting *a, struct frames *fr, uint32_t top,
                                  uint32_t per, int json, FILE *f)
{
    uint32_t nt = accounting_ntraces(a);
    uint32_t *ids = xmalloc(((size_t)nt + 1) * sizeof *ids);
    uint32_t k = 0;
    for (uint32_t t = 0; t < nt; t++) {
        const struct acct_cost *c = accounting_cost(a, t);
        if (c && c->calls) {
            ids[k++] = t;
        }
    }
    rank_acct = a;
    qsort(ids, k, sizeof *ids, by_calls);
    top = top < CHARTS_MAX_TOP ? top : CHARTS_MAX_TOP;
    uint32_t shown = k < top ? k : top;
    struct sizes_site *all = xmalloc(((size_t)shown * per + 1) * sizeof *all);
    uint32_t *counts = xmalloc(((size_t)shown + 1) * sizeof *counts);
    sizes_of_traces(s, ids, shown, nt, all, counts, per);
    fputs(json ? "\"by_stack\": [" : "\nSIZES BY CALL STACK (the call stacks with the most calls)\n", f);
    for (uint32_t i = 0; i < shown; i++) {
        uint32_t n;
        const struct sym_frame *sf = frames_of_node(fr, ids[i], &n);
        char *name = n ? frames_name_dup(&sf[0]) : xstrdup("[no stack]");
        const char *file = n ? sf[0].file : NULL;
        uint32_t line = n ? sf[0].line : 0;
        uint64_t calls = accounting_cost(a, ids[i])->calls;
        uint32_t m = counts[i];
        const struct sizes_site *e = all + (size_t)i * per;
        if (json) {
            fprintf(f, "%s{\"function\": ", i ? ", " : "");
            charts_json_str(name, f);
            fputs(", \"file\": ", f);
            charts_json_str(file, f);
            fprintf(f, ", \"line\": %u, \"calls\": %" PRIu64 ", \"sizes\": [", line, calls);
            for (uint32_t j = 0; j < m; j++) {
                fprintf(f, "%s{\"size\": %" PRIu64 ", \"calls\": %" PRIu64 "}", j ? ", " : "", e[j].size, e[j].calls);
            }
            fputs("]}", f);
        } else {
            fprintf(f, "  %" PRIu64 " calls: %s", calls, name);
            if (file) {
                fputs(" at ", f);
                esc_text_fputs(file, f);
                fprintf(f, ":%u", line);
            }
            fputc('\n', f);
            for (uint32_t j = 0; j < m; j++) {
                fprintf(f, "      %12" PRIu64 " bytes: %" PRIu64 " calls\n", e[j].size, e[j].calls);
            }
        }
        free(name);
    }
    if (json) {
        fputc(']', f);
    } else if (k > shown) {
        fprintf(f, "  ... and %u more call stacks\n", k - shown);
    }
    free(all);
    free(counts);
    free(ids);
}

/* ---- over time ---- */

static uint64_t pick(const struct ts_values *v, int which)
{
    return which == 0 ? v->heap : which == 1 ? v->mapped : v->rss;
}

static void chart(const struct timeseries *s, int which, int rows, FILE *f)
{
    static const char *const titles[3] = {"HEAP IN USE", "MAPPED MEMORY (mmap, brk; not heap)",
                                          "RSS (including memrec overhead)"};
    uint64_t max = 0;
    for (uint32_t i = 0; i < s->npoints; i++) {
        uint64_t v = pick(&s->points[i].max, which);
        if (v > max) {
            max = v;
        }
    }
    char b1[32];
    fprintf(f, "%s, largest %s (%" PRIu64 " bytes)\n", titles[which], util_bytes(b1, sizeof b1, max), max);
    /* The heap peak's column: the first point at or after its time. */
    uint32_t peak_col = UINT32_MAX;
    if (which == 0 && s->peak_bytes > 0) {
        for (uint32_t i = 0; i < s->npoints; i++) {
            if (s->points[i].ms >= s->peak_ms) {
                peak_col = i;
                break;
            }
        }
    }
    for (int r = rows; r >= 1; r--) {
        /* The row stands for values above (r - 1) / rows of the largest. */
        uint64_t level = (uint64_t)((double)max * (r - 1) / rows);
        if (r == rows || r == 1 || r == (rows + 1) / 2) {
            fprintf(f, "%11s |", util_bytes(b1, sizeof b1, r == 1 ? 0 : (uint64_t)((double)max * r / rows)));
        } else {
            fprintf(f, "%11s |", "");
        }
        for (uint32_t i = 0; i < s->npoints; i++) {
            uint64_t v = pick(&s->points[i].max, which);
            fputc(max > 0 && v > level ? (i == peak_col ? '*' : '#') : ' ', f);
        }
        fputc('\n', f);
    }
    fprintf(f, "%11s +", "");
    for (uint32_t i = 0; i < s->npoints; i++) {
        fputc(i == peak_col ? '^' : '-', f);
    }
    fputc('\n', f);
    double end_s = (double)s->end_ms / 1000.0;
    /* The run's end under the last column, so that the line is no wider
     * than the chart. */
    char end_label[32];
    int len = snprintf(end_label, sizeof end_label, "%.3f s", end_s);
    int pad = (int)s->npoints - 3 - len;
    fprintf(f, "%11s  0 s%*s%s\n", "", pad > 1 ? pad : 1, "", end_label);
    if (which == 0) {
        fprintf(f, "%11s  peak (* ^): %s (%" PRIu64 " bytes) at %.3f s\n", "", util_bytes(b1, sizeof b1, s->peak_bytes),
                s->peak_bytes, (double)s->peak_ms / 1000.0);
    }
}

/* Three charts (heap in use, mapped, RSS) of `rows` lines over the
 * series' points (one column each, the largest value in its interval),
 * with a byte axis, a time axis and the heap peak marked. */
static void charts_timeline_text(const struct timeseries *s, int rows, FILE *f)
{
    for (int which = 0; which < 3; which++) {
        if (which) {
            fputc('\n', f);
        }
        chart(s, which, rows, f);
    }
}

/* The series as members of a JSON object (no braces): the peaks and
 * "points" (ms, heap, mapped, rss at that time and the largest of each
 * since the point before). */
static void charts_timeline_json(const struct timeseries *s, FILE *f)
{
    fprintf(f,
            "\"end_ms\": %" PRIu64 ", \"peak_heap_bytes\": %" PRIu64 ", \"peak_heap_ms\": %" PRIu64
            ", \"mapped_peak_bytes\": %" PRIu64 ", \"mapped_peak_ms\": %" PRIu64 ", \"peak_rss_bytes\": %" PRIu64
            ", \"points\": [",
            s->end_ms, s->peak_bytes, s->peak_ms, s->mapped_peak, s->mapped_peak_ms, s->rss_peak);
    for (uint32_t i = 0; i < s->npoints; i++) {
        const struct ts_point *p = &s->points[i];
        fprintf(f,
                "%s{\"ms\": %" PRIu64 ", \"heap\": %" PRIu64 ", \"mapped\": %" PRIu64 ", \"rss\": %" PRIu64
                ", \"max_heap\": %" PRIu64 ", \"max_mapped\": %" PRIu64 ", \"max_rss\": %" PRIu64 "}",
                i ? ", " : "", p->ms, p->at.heap, p->at.mapped, p->at.rss, p->max.heap, p->max.mapped, p->max.rss);
    }
    fputs("]", f);
}

/* ---- memprint --sizes, --timeline ---- */

void charts_print_report(const struct charts_report *c, int json, FILE *f)
{
    if (json) {
        fprintf(f, "{\"runtime_ms\": %llu", (unsigned long long)model_runtime_ms(c->m));
        fputs(c->json_members, f);
        if (c->sizes) {
            fputs(", \"sizes\": {", f);
            charts_sizes_json(c->sizes, c->top, f);
            if (c->by_stack) {
                fputs(", ", f);
                charts_sizes_by_stack(c->sizes, c->acct, c->by_stack, c->top, 10, 1, f);
            }
            fputs("}", f);
        }
        if (c->series) {
            fputs(", \"timeline\": {", f);
            charts_timeline_json(c->series, f);
            fputs("}", f);
        }
        fputs("}\n", f);
        return;
    }
    fputs("program: ", f);
    esc_text_fputs(model_program(c->m), f);
    fputc('\n', f);
    if (c->note[0]) {
        fprintf(f, "%s\n", c->note);
    }
    if (c->sizes) {
        fputc('\n', f);
        charts_sizes_text(c->sizes, c->top, f);
        if (c->by_stack) {
            charts_sizes_by_stack(c->sizes, c->acct, c->by_stack, c->top, 10, 0, f);
        }
    }
    if (c->series) {
        fputc('\n', f);
        charts_timeline_text(c->series, 12, f);
    }
}
