// SPDX-License-Identifier: MIT
/* The over-time view: heap in use, mapped memory or RSS of the whole run
 * (timeseries.h) as a bar chart of terminal cells with byte and time
 * axes and the peak marked; a cursor and two marks set the time window
 * that every view is then restricted to. Each column shows the largest
 * value of the series' points under it, so no spike is lost. */
#define _GNU_SOURCE
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chartcursor.h"
#include "crt.h"
#include "livelist.h"
#include "search.h"
#include "text.h"
#include "util.h"
#include "view.h"

#define AXIS_W CHART_AXIS_W

struct time_view {
    struct view base;
    int col; /* cursor column */
    int mark; /* first mark's column, -1: none */
    uint64_t mark_ms;
    int series; /* 0 heap, 1 mapped, 2 rss */
    int cw; /* chart columns at the latest draw */
    uint64_t end_ms;
    struct livelist live; /* a: the stacks live at the cursor, shown instead of the chart */
};

static const char *const series_names[3] = {"heap in use", "mapped memory", "RSS"};

static uint64_t value_of(const struct ts_values *v, int series)
{
    return series == 0 ? v->heap : series == 1 ? v->mapped : v->rss;
}

/* Time at the left edge of column c of cw columns over [0, end]. */
static int col_of_ms(uint64_t ms, int cw, uint64_t end)
{
    if (end == 0) {
        return 0;
    }
    int c = (int)((unsigned __int128)ms * (unsigned)cw / end);
    return c >= cw ? cw - 1 : c;
}

/* The largest value of the points whose time falls in column c. */
static uint64_t column_max(const struct timeseries *ts, int c, int cw, int series)
{
    uint64_t lo = chart_col_ms(c, cw, ts->end_ms), hi = chart_col_ms(c + 1, cw, ts->end_ms);
    uint64_t best = 0;
    int any = 0;
    for (uint32_t i = 0; i < ts->npoints; i++) {
        uint64_t ms = ts->points[i].ms;
        if (ms < lo || (ms >= hi && c + 1 < cw)) {
            continue;
        }
        uint64_t v = value_of(&ts->points[i].max, series);
        if (!any || v > best) {
            best = v;
        }
        any = 1;
    }
    if (!any) {
        /* Fewer points than columns: the latest point before the column. */
        for (uint32_t i = 0; i < ts->npoints && ts->points[i].ms <= lo; i++) {
            best = value_of(&ts->points[i].at, series);
        }
    }
    return best;
}

static void draw(struct view *view, struct view_ctx *ctx, int y, int h, int w)
{
    struct data *d = ctx->d;
    struct time_view *s = (struct time_view *)view;
    const struct timeseries *ts = data_series(d);
    char buf[256], b1[32], b2[32];
    if (s->live.open && livelist_draw(&s->live, d, y, h, w)) {
        return;
    }
    if (!ts || ts->npoints == 0) {
        crt_put(y, 0, "OVER TIME: the series cannot be computed for this recording", w, A_BOLD);
        return;
    }
    int cw = w - AXIS_W - 1;
    int ch = h - 5;
    /* A run shorter than the chart is wide: one column per millisecond,
     * the time records' resolution is no finer. */
    if (ts->end_ms + 1 < (uint64_t)cw) {
        cw = (int)ts->end_ms + 1;
    }
    if (cw < 4 || ch < 2) {
        crt_put(y, 0, "OVER TIME: the screen is too small for the chart", w, A_BOLD);
        return;
    }
    if (s->col >= cw) {
        s->col = cw - 1;
    }
    if (s->col < 0) {
        s->col = 0;
    }
    uint64_t peak = s->series == 0 ? ts->peak_bytes : s->series == 1 ? ts->mapped_peak : ts->rss_peak;
    uint64_t peak_ms = s->series == 0 ? ts->peak_ms : s->series == 1 ? ts->mapped_peak_ms : 0;
    uint64_t cols_max = 0;
    int rss_col = 0;
    for (int c = 0; c < cw; c++) {
        uint64_t v = column_max(ts, c, cw, s->series);
        if (v > cols_max) {
            cols_max = v;
            rss_col = c;
        }
    }
    uint64_t ymax = peak > cols_max ? peak : cols_max;
    int peak_col = s->series == 2 ? rss_col : col_of_ms(peak_ms, cw, ts->end_ms);
    /* The peak and its time before the keys: at 80 columns the keys are cut, not the figures. */
    snprintf(buf, sizeof buf, "OVER TIME: %s; peak %s (%llu bytes) at %.3f s (v: heap, mapped, RSS)",
             series_names[s->series], text_bytes(b1, sizeof b1, peak), (unsigned long long)peak,
             s->series == 2 ? (double)chart_col_ms(rss_col, cw, ts->end_ms) / 1000.0 : (double)peak_ms / 1000.0);
    crt_put(y, 0, buf, w, A_BOLD);
    int top = y + 1;
    const char *block = d->utf8 ? "\xe2\x96\x88" : "#";
    int series_attr = crt_attr(s->series == 0 ? CRT_HEAP : s->series == 1 ? CRT_MAPPED : CRT_RSS);
    for (int c = 0; c < cw; c++) {
        uint64_t v = column_max(ts, c, cw, s->series);
        int bar = ymax ? (int)(((unsigned __int128)v * (unsigned)ch + ymax - 1) / ymax) : 0;
        uint64_t c0 = chart_col_ms(c, cw, ts->end_ms), c1 = chart_col_ms(c + 1, cw, ts->end_ms);
        int in_window = d->has_window && c1 > d->from_ms && c0 < d->to_ms;
        int marked = s->mark >= 0 && c == s->mark;
        for (int r = 0; r < ch; r++) {
            int yy = top + ch - 1 - r;
            int attr = in_window ? crt_attr(CRT_WINDOW) : (int)A_NORMAL;
            if (r < bar) {
                crt_put(yy, AXIS_W + 1 + c, block, 1, attr | series_attr);
            } else if (c == s->col) {
                crt_put(yy, AXIS_W + 1 + c, "|", 1, attr | A_BOLD);
            } else if (marked) {
                crt_put(yy, AXIS_W + 1 + c, ":", 1, attr | A_BOLD);
            } else if (in_window) {
                crt_put(yy, AXIS_W + 1 + c, " ", 1, attr);
            }
        }
        if (c == peak_col && peak > 0) {
            int yy = top + ch - 1 - (bar < ch ? bar : ch - 1);
            crt_put(yy, AXIS_W + 1 + c, "P", 1, A_BOLD | crt_attr(CRT_MATCH));
        }
    }
    /* Byte axis: the top, the middle, zero. */
    for (int i = 0; i < 3; i++) {
        int yy = i == 0 ? top : i == 1 ? top + ch / 2 : top + ch - 1;
        uint64_t v = i == 0 ? ymax : i == 1 ? ymax - ymax * (uint64_t)(ch / 2) / (uint64_t)ch : 0;
        snprintf(buf, sizeof buf, "%*s", AXIS_W, text_bytes(b1, sizeof b1, v));
        crt_put(yy, 0, buf, AXIS_W, (int)A_NORMAL);
    }
    for (int r = 0; r < ch; r++) {
        crt_put(top + r, AXIS_W, "|", 1, (int)A_NORMAL);
    }
    /* Time axis. */
    crt_put(top + ch, AXIS_W, "+", 1, (int)A_NORMAL);
    crt_fill(top + ch, AXIS_W + 1, cw, '-', (int)A_NORMAL);
    for (int i = 0; i < 5; i++) {
        int c = i * (cw - 1) / 4;
        crt_put(top + ch, AXIS_W + 1 + c, "+", 1, (int)A_NORMAL);
        snprintf(buf, sizeof buf, "%.3fs", (double)chart_col_ms(c, cw, ts->end_ms) / 1000.0);
        int len = (int)strlen(buf);
        int x = AXIS_W + 1 + c - (i == 4 ? len - 1 : i == 0 ? 0 : len / 2);
        crt_put(top + ch + 1, x, buf, w - x, (int)A_NORMAL);
    }
    uint64_t c0 = chart_col_ms(s->col, cw, ts->end_ms), c1 = chart_col_ms(s->col + 1, cw, ts->end_ms);
    snprintf(buf, sizeof buf, "cursor %.3f-%.3f s: largest %s %s", (double)c0 / 1000.0, (double)c1 / 1000.0,
             series_names[s->series], text_bytes(b2, sizeof b2, column_max(ts, s->col, cw, s->series)));
    crt_put(top + ch + 2, 0, buf, w, (int)A_NORMAL);
    if (s->mark >= 0) {
        snprintf(buf, sizeof buf, "window start marked at %.3f s: move and press m again to set its end",
                 (double)s->mark_ms / 1000.0);
    } else {
        snprintf(buf, sizeof buf,
                 "Left/Right move the cursor; m marks a window's start then end; w types one; x clears");
    }
    crt_put(top + ch + 3, 0, buf, w, (int)A_NORMAL);
    /* Remembered for the keys: the columns' geometry. */
    s->cw = cw;
    s->end_ms = ts->end_ms;
}

static struct view_result key(struct view *v, struct view_ctx *c, enum action a, int page)
{
    struct time_view *s = (struct time_view *)v;
    struct view_result r = VIEW_RESULT_HANDLED;
    if (s->live.open) {
        return livelist_key(&s->live, a, page) ? r : VIEW_RESULT_NONE;
    }
    if (chart_cursor_move(&s->col, s->cw, a)) {
        return r;
    }
    switch (a) {
    case ACT_SERIES: s->series = (s->series + 1) % 3; break;
    case ACT_LIVE_AT: {
        /* What was live at the end of the cursor's column; the last
         * column reads through the end of the run. */
        if (s->cw <= 0) {
            return VIEW_RESULT_NONE;
        }
        int e = 0;
        uint64_t at = chart_live_ms(s->col, s->cw, s->end_ms);
        if (livelist_open(&s->live, c->d, at, &e) < 0) {
            r.flags |= VIEW_STATUS;
            r.status = "cannot compute what was live at the cursor (one more pass over the recording failed)";
        }
        break;
    }
    case ACT_MARK:
        if (s->cw <= 0) {
            return VIEW_RESULT_NONE;
        }
        if (s->mark < 0) {
            s->mark = s->col;
            s->mark_ms = chart_col_ms(s->col, s->cw, s->end_ms);
        } else {
            int lo = s->mark < s->col ? s->mark : s->col;
            int hi = s->mark < s->col ? s->col : s->mark;
            uint64_t from = chart_col_ms(lo, s->cw, s->end_ms);
            uint64_t to = chart_col_ms(hi + 1, s->cw, s->end_ms);
            if (hi + 1 >= s->cw) {
                to = s->end_ms + 1; /* through the end of the run */
            }
            s->mark = -1;
            if (to > from) {
                r.flags |= VIEW_WINDOW;
                r.from_ms = from;
                r.to_ms = to;
            }
        }
        break;
    default: return VIEW_RESULT_NONE;
    }
    if (s->col < 0) {
        s->col = 0;
    }
    if (s->cw > 0 && s->col >= s->cw) {
        s->col = s->cw - 1;
    }
    return r;
}

/* ---- the view class ---- */

static void window_clear(struct view *v)
{
    ((struct time_view *)v)->mark = -1;
}

/* The selected stack of the live list (a), for d and e; none on the chart. */
static const struct sym_frame *selected_frame(struct view *v, struct view_ctx *c, const char **name)
{
    return livelist_frame(&((struct time_view *)v)->live, c->d, name);
}

static struct view *new_view(void)
{
    struct time_view *s = xcalloc(1, sizeof *s);
    s->mark = -1;
    return &s->base;
}

static void free_view(struct view *v)
{
    if (v) {
        livelist_free(&((struct time_view *)v)->live);
    }
    free(v);
}

static void click(struct view *v, struct view_ctx *c, int line, int x)
{
    (void)c;
    struct time_view *s = (struct time_view *)v;
    chart_click(&s->live, &s->col, line, x);
}

const struct view_class view_time = {
    .name = "Over time",
    .new = new_view,
    .free = free_view,
    .draw = draw,
    .key = key,
    .click = click,
    .selected_frame = selected_frame,
    .search = search_chart,
    .window_clear = window_clear,
};
