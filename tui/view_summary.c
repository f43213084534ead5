// SPDX-License-Identifier: MIT
/* The summary view: memprint's summary lines (report_print_summary(), for
 * the window when one is set) and the top allocation sites of each cost;
 * Enter on a site opens it in the bottom-up view. */
#include "tui.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#define TOP_SITES 5

enum { ROW_LINE = -1, ROW_HEADING = -2, ROW_BLANK = -3, ROW_NONE = -4 };

static const char *const headings[COST_NTYPES] = {
    "MOST CALLS TO ALLOCATION FUNCTIONS",
    "MOST TEMPORARY ALLOCATIONS",
    "PEAK MEMORY CONSUMERS",
    "MOST MEMORY LEAKED",
    "MOST MEMORY ALLOCATED",
    "PEAK MAPPED MEMORY",
    "MOST TIME IN THE ALLOCATOR",
};

/* The `k` sites of the bottom-up root with the largest inclusive cost c;
 * ties keep the tree's sorted order (deterministic). */
static uint32_t top_sites(const struct calltree *t, enum cost_type c, uint32_t *out, uint32_t k)
{
    uint32_t n;
    const uint32_t *kids = calltree_children(t, CALLTREE_BOTTOM_UP, 0, &n);
    uint32_t got = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t v = calltree_node(t, CALLTREE_BOTTOM_UP, kids[i])->incl.v[c];
        if (v == 0) {
            continue;
        }
        uint32_t at = got;
        if (got == k) {
            if (v <= calltree_node(t, CALLTREE_BOTTOM_UP, out[k - 1])->incl.v[c]) {
                continue;
            }
            at = k - 1; /* the last one drops out */
        } else {
            got++;
        }
        while (at > 0 && calltree_node(t, CALLTREE_BOTTOM_UP, out[at - 1])->incl.v[c] < v) {
            out[at] = out[at - 1];
            at--;
        }
        out[at] = kids[i];
    }
    return got;
}

static void build(struct app *app)
{
    struct data *d = &app->d;
    struct list *l = &app->summary;
    list_clear(l);
    for (uint32_t i = 0; i < d->nsummary; i++) {
        list_push(l, i, 0, ROW_LINE);
    }
    for (int c = 0; c < COST_NTYPES; c++) {
        if (c == COST_MAPPED && cost_total(d->acct, COST_MAPPED) == 0) {
            continue;
        }
        if (!cost_recorded(&d->m->header, (enum cost_type)c)) {
            continue;
        }
        list_push(l, 0, 0, ROW_BLANK);
        list_push(l, (uint32_t)c, 0, ROW_HEADING);
        uint32_t top[TOP_SITES];
        uint32_t n = top_sites(d->tree, (enum cost_type)c, top, TOP_SITES);
        for (uint32_t i = 0; i < n; i++) {
            list_push(l, top[i], (uint32_t)c, c);
        }
        if (n == 0) {
            list_push(l, 0, 0, ROW_NONE);
        }
    }
}

/* Rows of sites can be opened; lines and headings cannot. */
static int selectable(const struct list *l, uint32_t i)
{
    return l->rows[i].kind >= 0;
}

void view_summary_draw(struct app *app, int y, int h, int w)
{
    struct data *d = &app->d;
    struct list *l = &app->summary;
    uint32_t old = l->n ? l->sel : 0;
    build(app);
    l->sel = old < l->n ? old : 0;
    crt_put(y, 0, "SUMMARY (Enter on a site: open it in the bottom-up view)", w, A_BOLD);
    int rows = h - 1;
    list_scroll(l, rows);
    for (int r = 0; r < rows && l->top + (uint32_t)r < l->n; r++) {
        const struct row *row = &l->rows[l->top + (uint32_t)r];
        int yy = y + 1 + r;
        int attr = l->top + (uint32_t)r == l->sel ? crt_attr(CRT_SELECTED) : (int)A_NORMAL;
        char buf[64];
        switch (row->kind) {
        case ROW_LINE: crt_put(yy, 0, d->summary[row->id], w, attr); break;
        case ROW_HEADING: crt_put(yy, 0, headings[row->id], w, attr | A_BOLD); break;
        case ROW_BLANK: break;
        case ROW_NONE: crt_put(yy, 0, "  (none)", w, attr); break;
        default: {
            const struct calltree_node *n = calltree_node(d->tree, CALLTREE_BOTTOM_UP, row->id);
            if (attr != (int)A_NORMAL) {
                crt_fill(yy, 0, w, ' ', attr);
            }
            snprintf(buf, sizeof buf, "  %14llu  ", (unsigned long long)n->incl.v[row->kind]);
            int x = crt_put(yy, 0, buf, w, attr);
            crt_put_hl(yy, x, data_node_name(d, CALLTREE_BOTTOM_UP, row->id), w - x, attr, app->search);
            break;
        }
        }
    }
}

int view_summary_key(struct app *app, enum action a, int h)
{
    struct list *l = &app->summary;
    if (a == ACT_EXPAND || a == ACT_RIGHT) {
        if (l->n && selectable(l, l->sel)) {
            app->view = VIEW_BOTTOMUP;
            view_tree_select(app, &app->bu, l->rows[l->sel].id);
        }
        return 1;
    }
    return list_move(l, a, h);
}
