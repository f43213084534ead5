// SPDX-License-Identifier: MIT
/* The sizes view: the histogram of requested sizes (memprint --sizes),
 * power-of-two buckets with their calls, bytes and temporaries and a bar
 * of their share of the calls, then the most frequent exact sizes. The
 * figures are the analysis pass's (analyzer/sizes.h), of the whole run or,
 * while a time window or a filter is set, of the allocations they keep, as
 * memprint --sizes --from --to --function --thread counts them. */
#define _GNU_SOURCE
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crt.h"
#include "listbox.h"
#include "search.h"
#include "text.h"
#include "util.h"
#include "view.h"

/* Exact sizes listed under the histogram. */
#define SIZES_TOP 20
#define BAR_W 14

enum { ROW_HEAD, ROW_BUCKET, ROW_EXACT, ROW_TEXT };

struct sizes_view {
    struct view base;
    struct analysis *a; /* sizes = 1, over the window when one is set */
    uint64_t generation; /* d->generation it was made at */
    int failed;
    struct sizes_exact top[SIZES_TOP];
    uint32_t ntop;
    struct listbox lb;
};

static void build(struct sizes_view *s, struct data *d)
{
    if (s->a && s->generation == d->generation) {
        return;
    }
    if (!s->a && s->failed && s->generation == d->generation) {
        return;
    }
    analysis_free(s->a);
    s->a = NULL;
    s->failed = 0;
    s->generation = d->generation;
    listbox_clear(&s->lb);
    struct analysis_query q = ANALYSIS_QUERY_INIT;
    q.sizes = 1;
    q.has_window = d->has_window;
    q.from_ms = d->from_ms;
    q.to_ms = d->to_ms;
    q.keep = d->keep; /* the filter's (F), as memprint --sizes --function counts */
    q.thread = d->filter.thread;
    int e = 0;
    if (analysis_run(d->path, d->m, &q, &s->a, &e) < 0 || !s->a->sizes) {
        analysis_free(s->a);
        s->a = NULL;
        s->failed = 1;
        return;
    }
    const struct sizes *z = s->a->sizes;
    listbox_push(&s->lb, 0, 0, ROW_HEAD);
    for (uint32_t k = 0; k < SIZES_NBUCKETS; k++) {
        if (z->buckets[k].calls > 0) {
            listbox_push(&s->lb, k, 0, ROW_BUCKET);
        }
    }
    listbox_push(&s->lb, 0, 0, ROW_TEXT);
    listbox_push(&s->lb, 1, 0, ROW_HEAD);
    s->ntop = sizes_top(z, s->top, SIZES_TOP);
    for (uint32_t i = 0; i < s->ntop; i++) {
        listbox_push(&s->lb, i, 0, ROW_EXACT);
    }
    s->lb.sel = s->lb.n > 1 ? 1 : 0;
}

static void bar(char *out, size_t cap, uint64_t v, uint64_t total, int utf8)
{
    int n = total ? (int)(((unsigned __int128)v * BAR_W + total - 1) / total) : 0;
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; i < n && at + 4 < cap; i++) {
        at += (size_t)snprintf(out + at, cap - at, "%s", utf8 ? "\xe2\x96\x88" : "#");
    }
}

static void draw(struct view *view, struct view_ctx *ctx, int y, int h, int w)
{
    struct data *d = ctx->d;
    struct sizes_view *s = (struct sizes_view *)view;
    build(s, d);
    if (!s->a) {
        crt_put(y, 0, "SIZES: the histogram cannot be computed for this recording", w, A_BOLD);
        return;
    }
    const struct sizes *z = s->a->sizes;
    char buf[512], range[64], b[128];
    snprintf(buf, sizeof buf, "SIZES%s: %llu allocations, %llu bytes, %llu temporary (memprint --sizes)",
             d->has_window || d->filter.on ? " kept" : "", (unsigned long long)z->calls, (unsigned long long)z->bytes,
             (unsigned long long)z->temporary);
    crt_put(y, 0, buf, w, A_BOLD);
    int rows = h - 1;
    listbox_scroll(&s->lb, rows);
    for (int r = 0; r < rows && s->lb.top + (uint32_t)r < s->lb.n; r++) {
        uint32_t idx = s->lb.top + (uint32_t)r;
        const struct row *row = &s->lb.rows[idx];
        int attr = (int)A_NORMAL;
        switch (row->kind) {
        case ROW_HEAD:
            snprintf(buf, sizeof buf, "%s",
                     row->id == 0 ? "  requested size         calls          bytes  temporary  share of calls"
                                  : "  most frequent sizes    calls                 temporary");
            attr = A_BOLD;
            break;
        case ROW_BUCKET: {
            const struct sizes_bucket *k = &z->buckets[row->id];
            snprintf(range, sizeof range, "%llu-%llu", (unsigned long long)k->lo, (unsigned long long)k->hi);
            bar(b, sizeof b, k->calls, z->calls, d->utf8);
            snprintf(buf, sizeof buf, "  %-18s %9llu %14llu %10llu %5.1f%% %s", range, (unsigned long long)k->calls,
                     (unsigned long long)k->bytes, (unsigned long long)k->temporary,
                     z->calls ? 100.0 * (double)k->calls / (double)z->calls : 0.0, b);
            break;
        }
        case ROW_EXACT: {
            const struct sizes_exact *e = &s->top[row->id];
            snprintf(range, sizeof range, "%llu", (unsigned long long)e->size);
            snprintf(buf, sizeof buf, "  %-18s %9llu %14s %10llu", range, (unsigned long long)e->calls, "",
                     (unsigned long long)e->temporary);
            break;
        }
        default: buf[0] = 0; break;
        }
        if (idx == s->lb.sel && (row->kind == ROW_BUCKET || row->kind == ROW_EXACT)) {
            attr = crt_attr(CRT_SELECTED);
            crt_fill(y + 1 + r, 0, w, ' ', attr);
        }
        crt_put(y + 1 + r, 0, buf, w, attr);
    }
}

static int selectable(const struct row *r)
{
    return r->kind == ROW_BUCKET || r->kind == ROW_EXACT;
}

static struct view_result key(struct view *v, struct view_ctx *c, enum action a, int page)
{
    struct sizes_view *s = (struct sizes_view *)v;
    (void)c;
    if (!listbox_move(&s->lb, a, page)) {
        return VIEW_RESULT_NONE;
    }
    listbox_settle(&s->lb, listbox_dir(a), selectable);
    return VIEW_RESULT_HANDLED;
}

static void click(struct view *v, struct view_ctx *c, int line, int x)
{
    struct sizes_view *s = (struct sizes_view *)v;
    (void)c;
    (void)x;
    listbox_click(&s->lb, line);
    listbox_settle(&s->lb, 1, selectable);
}

/* No names here: the search is the top-down view's. */
static struct view_result search(struct view *v, struct view_ctx *c, int dir)
{
    (void)v;
    (void)c;
    (void)dir;
    return search_forward(CALLTREE_TOP_DOWN, 0);
}

static struct view *new_view(void)
{
    struct sizes_view *s = xcalloc(1, sizeof *s);
    return &s->base;
}

static void free_view(struct view *v)
{
    struct sizes_view *s = (struct sizes_view *)v;
    if (!s) {
        return;
    }
    analysis_free(s->a);
    listbox_release(&s->lb);
    free(s);
}

const struct view_class view_sizes = {
    .name = "Sizes",
    .help = "Sizes (histogram of requested sizes)",
    .new = new_view,
    .free = free_view,
    .draw = draw,
    .key = key,
    .click = click,
    .search = search,
};
