// SPDX-License-Identifier: MIT
/* The summary view: memprint's summary lines (report_print_summary(), for
 * the window when one is set) and the top allocation sites of each cost;
 * Enter on a site opens it in the bottom-up view. */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crt.h"
#include "listbox.h"
#include "search.h"
#include "util.h"
#include "view.h"

#define TOP_SITES 5

enum { ROW_LINE = -1, ROW_HEADING = -2, ROW_BLANK = -3, ROW_NONE = -4 };

struct summary_view {
    struct view base;
    struct listbox l;
};

static const char *const headings[COST_NTYPES] = {
    "MOST CALLS TO ALLOCATION FUNCTIONS",
    "MOST TEMPORARY ALLOCATIONS",
    "PEAK MEMORY CONSUMERS",
    "MOST MEMORY LEAKED",
    "MOST MEMORY ALLOCATED",
    "PEAK MAPPED MEMORY",
    "MOST TIME IN THE ALLOCATOR",
    "MOST MEMORY GROWTH (bytes/s)",
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

static void build(struct data *d, struct listbox *l)
{
    listbox_clear(l);
    for (uint32_t i = 0; i < d->nsummary; i++) {
        listbox_push(l, i, 0, ROW_LINE);
    }
    for (int c = 0; c < COST_NTYPES; c++) {
        if (c == COST_MAPPED && cost_total(d->acct, COST_MAPPED) == 0) {
            continue;
        }
        if (!cost_recorded(&d->m->header, (enum cost_type)c)) {
            continue;
        }
        listbox_push(l, 0, 0, ROW_BLANK);
        listbox_push(l, (uint32_t)c, 0, ROW_HEADING);
        uint32_t top[TOP_SITES];
        uint32_t n = top_sites(d->tree, (enum cost_type)c, top, TOP_SITES);
        for (uint32_t i = 0; i < n; i++) {
            listbox_push(l, top[i], (uint32_t)c, c);
        }
        if (n == 0) {
            listbox_push(l, 0, 0, ROW_NONE);
        }
    }
}

/* Rows of sites can be opened; lines and headings cannot. */
static int site_row(const struct row *r)
{
    return r->kind >= 0;
}

static int selectable(const struct listbox *l, uint32_t i)
{
    return site_row(&l->rows[i]);
}

static void draw(struct view *v, struct view_ctx *c, int y, int h, int w)
{
    struct data *d = c->d;
    struct listbox *l = &((struct summary_view *)v)->l;
    uint32_t old = l->n ? l->sel : 0;
    build(d, l);
    l->sel = old < l->n ? old : 0;
    /* The selection goes over the sites only: the lines are read, not chosen. */
    listbox_settle(l, 1, site_row);
    crt_put(y, 0, "SUMMARY (Enter on a site: open it in the bottom-up view)", w, A_BOLD);
    int rows = h - 1;
    listbox_scroll(l, rows);
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
            crt_put_name(yy, x, data_node_label(d, CALLTREE_BOTTOM_UP, row->id), 0, w - x, attr, c->search,
                         d->utf8 ? "\xe2\x80\xa6" : ">");
            break;
        }
        }
    }
}

/* Enter on a site: the bottom-up view opens it. */
static struct view_result key(struct view *v, struct view_ctx *c, enum action a, int page)
{
    struct listbox *l = &((struct summary_view *)v)->l;
    (void)c;
    if (a == ACT_EXPAND || a == ACT_RIGHT) {
        struct view_result r = VIEW_RESULT_HANDLED;
        if (l->n && selectable(l, l->sel)) {
            r.flags |= VIEW_GOTO;
            r.o = CALLTREE_BOTTOM_UP;
            r.node = l->rows[l->sel].id;
        }
        return r;
    }
    if (!listbox_move(l, a, page)) {
        return VIEW_RESULT_NONE;
    }
    listbox_settle(l, listbox_dir(a), site_row);
    return VIEW_RESULT_HANDLED;
}

static void click(struct view *v, struct view_ctx *c, int line, int x)
{
    (void)c;
    (void)x;
    listbox_click(&((struct summary_view *)v)->l, line);
}

static const struct sym_frame *selected_frame(struct view *v, struct view_ctx *c, const char **name)
{
    struct listbox *l = &((struct summary_view *)v)->l;
    *name = NULL;
    if (!l->n || !selectable(l, l->sel)) {
        return NULL;
    }
    uint32_t node = l->rows[l->sel].id;
    const struct calltree_node *n = calltree_node(c->d->tree, CALLTREE_BOTTOM_UP, node);
    if (!n || !n->frame) {
        return NULL;
    }
    *name = data_node_name(c->d, CALLTREE_BOTTOM_UP, node);
    return n->frame;
}

/* The summary's sites are the bottom-up view's: the search goes there. */
static struct view_result search(struct view *v, struct view_ctx *c, int dir)
{
    (void)v;
    (void)c;
    (void)dir;
    return search_forward(CALLTREE_BOTTOM_UP, 1);
}

static struct view *new_view(void)
{
    struct summary_view *s = xcalloc(1, sizeof *s);
    return &s->base;
}

static void free_view(struct view *v)
{
    struct summary_view *s = (struct summary_view *)v;
    if (s) {
        listbox_release(&s->l);
        free(s);
    }
}

const struct view_class view_summary = {
    .name = "Summary",
    .new = new_view,
    .free = free_view,
    .draw = draw,
    .key = key,
    .click = click,
    .selected_frame = selected_frame,
    .search = search,
};
