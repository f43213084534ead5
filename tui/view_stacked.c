// SPDX-License-Identifier: MIT
/* The stacked chart: heap in use, allocations or temporary allocations
 * over the whole run, each column split into the top stacks' shares
 * (heaptrack's "consumed", "allocations" and "temporary allocations"
 * charts), with a legend that gives each stack's figure at the cursor.
 * The series and its groups are topseries_run()'s (analyzer/topseries.h):
 * the stacks with the most peak bytes, calls or temporary allocations of
 * the whole run. Allocations and temporaries are counted from the start,
 * so the last column's figures are the summary's totals. `a` opens the
 * stacks live at the cursor (livelist.h). */
#define _GNU_SOURCE
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chartcursor.h"
#include "crt.h"
#include "livelist.h"
#include "search.h"
#include "site.h"
#include "text.h"
#include "topseries.h"
#include "util.h"
#include "view.h"

#define AXIS_W CHART_AXIS_W
/* Stacks split off the chart: the legend has a line for each. */
#define STACKED_TOP 6
/* The chart's points: as many as the over-time view's. */
#define STACKED_POINTS DATA_SERIES_POINTS

enum { KIND_HEAP, KIND_CALLS, KIND_TEMPORARY, NKINDS };

static const char *const kind_names[NKINDS] = {"heap in use", "allocations", "temporary allocations"};
static const char *const kind_rank[NKINDS] = {"peak", "calls", "temporaries"};
static const enum cost_type kind_cost[NKINDS] = {COST_PEAK, COST_CALLS, COST_TEMPORARY};

struct stacked_view {
    struct view base;
    int kind;
    struct topseries *ts[NKINDS]; /* lazily, per kind */
    uint64_t gen[NKINDS]; /* d->generation each was made at */
    int failed[NKINDS];
    int col, cw;
    uint64_t end_ms;
    struct livelist live;
    struct report *r; /* memprint's merged stacks (site_report()) */
    uint64_t rgen;
};

static char status_buf[160];

static const struct topseries *series_of(struct stacked_view *s, struct data *d)
{
    int k = s->kind;
    if (s->ts[k] && s->gen[k] != d->generation) {
        topseries_free(s->ts[k]);
        s->ts[k] = NULL;
        s->failed[k] = 0;
    }
    if (!s->ts[k] && !s->failed[k]) {
        int e = 0;
        const struct report *r = site_report(d, &s->r, &s->rgen);
        /* The stacks the filter keeps, chosen by their figures in the
         * window when one is set (the whole run's while wrappers are
         * folded: the folded figures are charged to callers, which need
         * not be memprint's stacks); the series is the whole run's. */
        const struct accounting *ranked = d->fold.on ? d->m->acct : d->acct;
        struct topseries_query q = {ranked, d->keep, d->filter.thread, kind_cost[k], STACKED_TOP, STACKED_POINTS};
        if (!r || topseries_run(d->path, d->m, r, &q, &s->ts[k], &e) < 0) {
            s->ts[k] = NULL;
            s->failed[k] = 1;
        }
        s->gen[k] = d->generation;
    }
    return s->ts[k];
}

/* The first point at or after `ms`. */
static uint32_t first_point(const struct timeseries *ts, uint64_t ms)
{
    uint32_t lo = 0, up = ts->npoints;
    while (lo < up) {
        uint32_t mid = lo + (up - lo) / 2;
        if (ts->points[mid].ms < ms) {
            lo = mid + 1;
        } else {
            up = mid;
        }
    }
    return lo;
}

static uint64_t total_at(const struct timeseries *ts, uint32_t p, int kind);

/* The series point that stands for column c, split by the stacks as it
 * is: for the counts, the last one of the column (the last point for the
 * last column); for the heap, the column's point with the most in use, so
 * that the peak shows. */
static uint32_t point_of(const struct timeseries *ts, int c, int cw, int kind)
{
    uint32_t end = c + 1 >= cw ? ts->npoints : first_point(ts, chart_col_ms(c + 1, cw, ts->end_ms));
    uint32_t last = end > 0 ? end - 1 : 0;
    if (kind != KIND_HEAP) {
        return last;
    }
    uint32_t best = last;
    for (uint32_t i = first_point(ts, chart_col_ms(c, cw, ts->end_ms)); i < end; i++) {
        if (total_at(ts, i, kind) > total_at(ts, best, kind)) {
            best = i;
        }
    }
    return best;
}

/* The heap's figures are those of the moment it was largest since the
 * point before (`max`), the counts' those at the point. */
static uint64_t total_at(const struct timeseries *ts, uint32_t p, int kind)
{
    const struct ts_values *v = kind == KIND_HEAP ? &ts->points[p].max : &ts->points[p].at;
    return kind == KIND_HEAP ? v->heap : kind == KIND_CALLS ? v->calls : v->temporary;
}

static uint64_t group_at(const struct timeseries *ts, uint32_t p, uint32_t g, int kind)
{
    const struct ts_group_values *v = &(kind == KIND_HEAP ? ts->groups_max : ts->groups)[(size_t)p * ts->ngroups + g];
    return kind == KIND_HEAP ? v->live : kind == KIND_CALLS ? v->calls : v->temporary;
}

static const char *amount(char *buf, size_t cap, uint64_t v, int kind)
{
    if (kind == KIND_HEAP) {
        return text_bytes(buf, cap, v);
    }
    snprintf(buf, cap, "%llu", (unsigned long long)v);
    return buf;
}

/* The glyph of group g (the legend's number), or of the rest. */
static char glyph_of(uint32_t g, uint32_t n)
{
    return g < n ? (char)('1' + g) : '=';
}

static void draw_chart(struct stacked_view *s, struct data *d, const struct topseries *t, int y, int ch, int cw,
                       uint32_t ng)
{
    const struct timeseries *ts = t->a->series;
    uint64_t ymax = 0;
    for (int c = 0; c < cw; c++) {
        uint64_t v = total_at(ts, point_of(ts, c, cw, s->kind), s->kind);
        ymax = v > ymax ? v : ymax;
    }
    for (int c = 0; c < cw; c++) {
        uint32_t p = point_of(ts, c, cw, s->kind);
        uint64_t total = total_at(ts, p, s->kind);
        int row = 0;
        uint64_t cum = 0;
        /* Group 0, the largest, at the bottom; the rest on top. */
        for (uint32_t g = 0; g <= ng && ymax > 0; g++) {
            uint64_t v = g < ng ? group_at(ts, p, g, s->kind) : 0;
            cum = g < ng ? cum + v : total;
            if (cum > total) {
                cum = total;
            }
            int top = (int)(((unsigned __int128)cum * (unsigned)ch + ymax / 2) / ymax);
            if (g == ng && total > 0 && top == 0) {
                top = 1; /* a column with any amount shows one cell */
            }
            char glyph[2] = {glyph_of(g, ng), 0};
            int attr =
                g < ng ? (crt_has_color ? crt_attr(g % 2 ? CRT_FLAME_B : CRT_FLAME_A) : (int)A_NORMAL) : (int)A_NORMAL;
            for (; row < top && row < ch; row++) {
                crt_put(y + ch - 1 - row, AXIS_W + 1 + c, glyph, 1, attr | (g < ng ? A_BOLD : 0));
            }
        }
        if (c == s->col) {
            for (; row < ch; row++) {
                crt_put(y + ch - 1 - row, AXIS_W + 1 + c, "|", 1, A_BOLD);
            }
        }
    }
    char buf[64], b1[32];
    for (int i = 0; i < 3; i++) {
        int yy = i == 0 ? y : i == 1 ? y + ch / 2 : y + ch - 1;
        uint64_t v = i == 0 ? ymax : i == 1 ? ymax - ymax * (uint64_t)(ch / 2) / (uint64_t)ch : 0;
        snprintf(buf, sizeof buf, "%*s", AXIS_W, amount(b1, sizeof b1, v, s->kind));
        crt_put(yy, 0, buf, AXIS_W, (int)A_NORMAL);
    }
    for (int r = 0; r < ch; r++) {
        crt_put(y + r, AXIS_W, "|", 1, (int)A_NORMAL);
    }
    crt_put(y + ch, AXIS_W, "+", 1, (int)A_NORMAL);
    crt_fill(y + ch, AXIS_W + 1, cw, '-', (int)A_NORMAL);
    int w = AXIS_W + 1 + cw;
    for (int i = 0; i < 3; i++) {
        int c = i * (cw - 1) / 2;
        snprintf(buf, sizeof buf, "%.3fs", (double)chart_col_ms(c, cw, ts->end_ms) / 1000.0);
        int len = (int)strlen(buf);
        int x = AXIS_W + 1 + c - (i == 2 ? len - 1 : i == 0 ? 0 : len / 2);
        crt_put(y + ch + 1, x, buf, w - x, (int)A_NORMAL);
    }
    (void)d;
}

static void draw(struct view *view, struct view_ctx *ctx, int y, int h, int w)
{
    struct data *d = ctx->d;
    struct stacked_view *s = (struct stacked_view *)view;
    if (s->live.open && livelist_draw(&s->live, d, y, h, w)) {
        return;
    }
    const struct topseries *t = series_of(s, d);
    char buf[1024], b1[32], b2[32], label[768];
    if (!t || !t->a->series || t->a->series->npoints == 0) {
        crt_put(y, 0, "STACKED: the series cannot be computed for this recording", w, A_BOLD);
        return;
    }
    const struct timeseries *ts = t->a->series;
    /* Legend lines below the chart: as many stacks as leave it 4 rows. */
    uint32_t ng = t->n;
    int room = h - 5 - 1 - 4;
    if ((int)ng > room) {
        ng = room > 0 ? (uint32_t)room : 0;
    }
    int ch = h - 5 - (int)ng - 1;
    int cw = w - AXIS_W - 1;
    if (ts->end_ms + 1 < (uint64_t)cw) {
        cw = (int)ts->end_ms + 1;
    }
    if (cw < 4 || ch < 2) {
        crt_put(y, 0, "STACKED: the screen is too small for the chart", w, A_BOLD);
        return;
    }
    s->col = s->col < 0 ? 0 : s->col >= cw ? cw - 1 : s->col;
    s->cw = cw;
    s->end_ms = ts->end_ms;
    snprintf(buf, sizeof buf, "STACKED: %s, top %u stacks by %s (v: heap, allocations, temporary)", kind_names[s->kind],
             ng, kind_rank[s->kind]);
    crt_put(y, 0, buf, w, A_BOLD);
    draw_chart(s, d, t, y + 1, ch, cw, ng);
    int ly = y + 1 + ch + 2;
    uint32_t p = point_of(ts, s->col, cw, s->kind);
    uint64_t c0 = chart_col_ms(s->col, cw, ts->end_ms);
    uint64_t c1 = s->col + 1 >= cw ? ts->end_ms : chart_col_ms(s->col + 1, cw, ts->end_ms);
    uint64_t total = total_at(ts, p, s->kind);
    snprintf(buf, sizeof buf, "cursor %.3f-%.3f s: %s at %.3f s %s (%llu); a: live then", (double)c0 / 1000.0,
             (double)c1 / 1000.0, kind_names[s->kind], (double)ts->points[p].ms / 1000.0,
             amount(b1, sizeof b1, total, s->kind), (unsigned long long)total);
    crt_put(ly, 0, buf, w, (int)A_NORMAL);
    uint64_t rest = total;
    for (uint32_t g = 0; g < ng; g++) {
        uint64_t v = group_at(ts, p, g, s->kind);
        rest = rest >= v ? rest - v : 0;
        snprintf(buf, sizeof buf, " %c %12llu  %s", glyph_of(g, ng), (unsigned long long)v,
                 site_label(d, t->top[g].trace, label, sizeof label));
        crt_put(ly + 1 + (int)g, 0, buf, w, (int)A_NORMAL);
    }
    snprintf(buf, sizeof buf, " %c %12llu  every other stack (%s)", glyph_of(ng, ng), (unsigned long long)rest,
             amount(b2, sizeof b2, rest, s->kind));
    crt_put(ly + 1 + (int)ng, 0, buf, w, (int)A_NORMAL);
}

static struct view_result key(struct view *v, struct view_ctx *c, enum action a, int page)
{
    struct stacked_view *s = (struct stacked_view *)v;
    struct view_result r = VIEW_RESULT_HANDLED;
    if (s->live.open) {
        return livelist_key(&s->live, a, page) ? r : VIEW_RESULT_NONE;
    }
    if (chart_cursor_move(&s->col, s->cw, a)) {
        return r;
    }
    switch (a) {
    case ACT_SERIES: s->kind = (s->kind + 1) % NKINDS; break;
    case ACT_LIVE_AT: {
        if (s->cw <= 0) {
            return VIEW_RESULT_NONE;
        }
        /* What was live at the end of the cursor's column; the last
         * column reads through the end of the run. */
        uint64_t at = chart_live_ms(s->col, s->cw, s->end_ms);
        int e = 0;
        int rc = livelist_open(&s->live, c->d, at, &e);
        if (rc < 0) {
            snprintf(status_buf, sizeof status_buf, "cannot compute what was live: %s",
                     rc == MEMFMT_E_IO ? strerror(e) : memfmt_strerror(rc));
            r.flags |= VIEW_STATUS;
            r.status = status_buf;
        }
        break;
    }
    default: return VIEW_RESULT_NONE;
    }
    return r;
}

/* The selected stack of the live list, for d and e; none on the chart. */
static const struct sym_frame *selected_frame(struct view *v, struct view_ctx *c, const char **name)
{
    return livelist_frame(&((struct stacked_view *)v)->live, c->d, name);
}

static struct view *new_view(void)
{
    struct stacked_view *s = xcalloc(1, sizeof *s);
    return &s->base;
}

static void free_view(struct view *v)
{
    struct stacked_view *s = (struct stacked_view *)v;
    if (!s) {
        return;
    }
    for (int k = 0; k < NKINDS; k++) {
        topseries_free(s->ts[k]);
    }
    livelist_free(&s->live);
    report_free(s->r);
    free(s);
}

static void click(struct view *v, struct view_ctx *c, int line, int x)
{
    (void)c;
    struct stacked_view *s = (struct stacked_view *)v;
    chart_click(&s->live, &s->col, line, x);
}

const struct view_class view_stacked = {
    .name = "Stacked",
    .help = "Stacked (top stacks over time)",
    .new = new_view,
    .free = free_view,
    .draw = draw,
    .key = key,
    .click = click,
    .selected_frame = selected_frame,
    .search = search_chart,
};
