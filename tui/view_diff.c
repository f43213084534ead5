// SPDX-License-Identifier: MIT
/* The comparison view of `memtui BASE NEW`: the two recordings' top-down
 * trees merged, frames matched by function name and source file (memprint
 * --diff's difftree, analyzer/diff.h), each row with the base's and the
 * new recording's inclusive cost and the change, children ordered by the
 * largest change of the cost in use. The new recording is the one every
 * other view shows, with its window and filter; the base is read whole. */
#define _GNU_SOURCE
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crt.h"
#include "diff.h"
#include "escape.h"
#include "listbox.h"
#include "search.h"
#include "util.h"
#include "view.h"

struct diff_view {
    struct view base;
    struct difftree *t;
    uint64_t gen_new, gen_base; /* the generations of both data it was made of */
    enum cost_type cost; /* the cost the rows are ordered by */
    uint8_t *open; /* per merged node */
    struct listbox lb;
    int laid_out;
};

static uint64_t change_of(const struct diff_node *n, enum cost_type c)
{
    uint64_t a = n->base_incl.v[c], b = n->new_incl.v[c];
    return a > b ? a - b : b - a;
}

/* Largest change first; ties: the larger new cost, then merged order. */
static int by_change(const void *x, const void *y, void *arg)
{
    const struct diff_view *s = arg;
    const struct diff_node *a = &s->t->nodes[*(const uint32_t *)x], *b = &s->t->nodes[*(const uint32_t *)y];
    uint64_t ca = change_of(a, s->cost), cb = change_of(b, s->cost);
    if (ca != cb) {
        return ca < cb ? 1 : -1;
    }
    if (a->new_incl.v[s->cost] != b->new_incl.v[s->cost]) {
        return a->new_incl.v[s->cost] < b->new_incl.v[s->cost] ? 1 : -1;
    }
    return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

static void lay_out(struct diff_view *s, uint32_t node, uint32_t depth)
{
    listbox_push(&s->lb, node, depth, 0);
    const struct diff_node *n = &s->t->nodes[node];
    if (!s->open[node] || n->nkids == 0) {
        return;
    }
    uint32_t *kids = xmalloc(n->nkids * sizeof *kids);
    memcpy(kids, n->kids, n->nkids * sizeof *kids);
    qsort_r(kids, n->nkids, sizeof *kids, by_change, s);
    for (uint32_t i = 0; i < n->nkids; i++) {
        if (cost_any(&s->t->nodes[kids[i]].base_incl) || cost_any(&s->t->nodes[kids[i]].new_incl)) {
            lay_out(s, kids[i], depth + 1);
        }
    }
    free(kids);
}

static void relayout(struct diff_view *s)
{
    uint32_t sel = s->lb.n ? s->lb.rows[s->lb.sel].id : 0;
    listbox_clear(&s->lb);
    lay_out(s, 0, 0);
    s->lb.sel = 0;
    for (uint32_t i = 0; i < s->lb.n; i++) {
        if (s->lb.rows[i].id == sel) {
            s->lb.sel = i;
        }
    }
    s->laid_out = 1;
}

/* The merged tree of the two recordings as they are now. */
static int sync(struct diff_view *s, struct data *d)
{
    if (!d->base) {
        return 0;
    }
    if (!s->t || s->gen_new != d->generation || s->gen_base != d->base->generation) {
        diff_free(s->t);
        free(s->open);
        s->t = diff_build(d->base->tree, d->tree);
        s->t->base_timed = cost_recorded(&d->base->m->header, COST_TIME);
        s->t->new_timed = cost_recorded(&d->m->header, COST_TIME);
        s->open = xcalloc(s->t->n ? s->t->n : 1, 1);
        s->open[0] = 1;
        /* main(), the one child of the root, opens too. */
        if (s->t->n && s->t->nodes[0].nkids == 1) {
            s->open[s->t->nodes[0].kids[0]] = 1;
        }
        s->gen_new = d->generation;
        s->gen_base = d->base->generation;
        s->laid_out = 0;
        listbox_clear(&s->lb);
    }
    if (!s->laid_out || s->cost != d->cost) {
        s->cost = d->cost;
        relayout(s);
    }
    return 1;
}

static void draw(struct view *view, struct view_ctx *ctx, int y, int h, int w)
{
    struct data *d = ctx->d;
    struct diff_view *s = (struct diff_view *)view;
    if (!sync(s, d)) {
        crt_put(y, 0, "DIFF: start memtui with two recordings, memtui BASE NEW, to compare them", w, A_BOLD);
        crt_put(y + 1, 0, "(the comparison of memprint --diff BASE NEW)", w, (int)A_NORMAL);
        return;
    }
    char buf[1024];
    char *bp = esc_text_for(d->base->path, !d->utf8), *np = esc_text_for(d->path, !d->utf8);
    const struct diff_node *root = &s->t->nodes[0];
    long long change = (long long)root->new_incl.v[d->cost] - (long long)root->base_incl.v[d->cost];
    snprintf(buf, sizeof buf, "DIFF %s -> %s: %s %llu -> %llu (%+lld)", bp, np, cost_name(d->cost),
             (unsigned long long)root->base_incl.v[d->cost], (unsigned long long)root->new_incl.v[d->cost], change);
    free(bp);
    free(np);
    crt_put(y, 0, buf, w, A_BOLD);
    crt_put(y + 1, 0, "          base            new         change  function (largest change first)", w, A_BOLD);
    int rows = h - 2;
    listbox_scroll(&s->lb, rows);
    const char *open_mark = d->utf8 ? "\xe2\x96\xbe " : "- ";
    const char *closed_mark = d->utf8 ? "\xe2\x96\xb8 " : "+ ";
    for (int r = 0; r < rows && s->lb.top + (uint32_t)r < s->lb.n; r++) {
        uint32_t i = s->lb.top + (uint32_t)r;
        const struct row *row = &s->lb.rows[i];
        const struct diff_node *n = &s->t->nodes[row->id];
        int attr = i == s->lb.sel ? crt_attr(CRT_SELECTED) : (int)A_NORMAL;
        if (attr != (int)A_NORMAL) {
            crt_fill(y + 2 + r, 0, w, ' ', attr);
        }
        uint64_t a = n->base_incl.v[d->cost], b = n->new_incl.v[d->cost];
        char *name = row->id == 0 ? xstrdup("[total]") : esc_text_for(n->name, !d->utf8);
        const char *mark = n->nkids == 0 ? "  " : s->open[row->id] ? open_mark : closed_mark;
        int indent = (int)row->depth * 2;
        snprintf(buf, sizeof buf, "%14llu %14llu %+14lld  %*s%s%s", (unsigned long long)a, (unsigned long long)b,
                 (long long)b - (long long)a, indent, "", mark, name);
        free(name);
        crt_put_hl(y + 2 + r, 0, buf, w, attr, ctx->search);
    }
}

static struct view_result key(struct view *v, struct view_ctx *c, enum action a, int page)
{
    struct diff_view *s = (struct diff_view *)v;
    if (!sync(s, c->d) || s->lb.n == 0) {
        return VIEW_RESULT_NONE;
    }
    uint32_t id = s->lb.rows[s->lb.sel].id;
    const struct diff_node *n = &s->t->nodes[id];
    switch (a) {
    case ACT_EXPAND:
        if (n->nkids) {
            s->open[id] = !s->open[id];
            relayout(s);
        }
        return VIEW_RESULT_HANDLED;
    case ACT_RIGHT:
        if (n->nkids && !s->open[id]) {
            s->open[id] = 1;
            relayout(s);
        }
        return VIEW_RESULT_HANDLED;
    case ACT_LEFT:
        if (n->nkids && s->open[id]) {
            s->open[id] = 0;
            relayout(s);
        } else if (n->parent != CALLTREE_NONE) {
            for (uint32_t i = 0; i < s->lb.n; i++) {
                if (s->lb.rows[i].id == n->parent) {
                    s->lb.sel = i;
                }
            }
        }
        return VIEW_RESULT_HANDLED;
    default: break;
    }
    return listbox_move(&s->lb, a, page) ? VIEW_RESULT_HANDLED : VIEW_RESULT_NONE;
}

static void click(struct view *v, struct view_ctx *c, int line, int x)
{
    struct diff_view *s = (struct diff_view *)v;
    (void)c;
    (void)x;
    if (line >= 1) {
        listbox_click(&s->lb, line - 1);
    }
}

/* A search over the rows shown, from the selection. */
static struct view_result search(struct view *v, struct view_ctx *c, int dir)
{
    struct diff_view *s = (struct diff_view *)v;
    struct view_result r = VIEW_RESULT_NONE;
    if (!sync(s, c->d) || s->lb.n == 0 || !c->search[0]) {
        return r;
    }
    uint32_t n = s->lb.n;
    for (uint32_t k = dir == 0 ? 0 : 1; k <= n; k++) {
        uint32_t i = (uint32_t)(((int64_t)s->lb.sel + (dir < 0 ? -(int64_t)k : (int64_t)k) + n) % n);
        uint32_t id = s->lb.rows[i].id;
        if (id != 0 && strcasestr(s->t->nodes[id].name, c->search)) {
            s->lb.sel = i;
            r.flags = VIEW_HANDLED | VIEW_FOUND;
            r.node = CALLTREE_NONE;
            return r;
        }
    }
    return r;
}

static struct view *new_view(void)
{
    struct diff_view *s = xcalloc(1, sizeof *s);
    return &s->base;
}

static void free_view(struct view *v)
{
    struct diff_view *s = (struct diff_view *)v;
    if (!s) {
        return;
    }
    diff_free(s->t);
    free(s->open);
    listbox_release(&s->lb);
    free(s);
}

const struct view_class view_diff = {
    .name = "Diff",
    .help = "Diff (memtui BASE NEW)",
    .new = new_view,
    .free = free_view,
    .draw = draw,
    .key = key,
    .click = click,
    .search = search,
    .first_with_base = 1,
};
