// SPDX-License-Identifier: MIT
/* The flame graph: the top-down tree as an icicle in terminal cells, the
 * zoomed frame on the first row across the whole width, each child below
 * its parent with a width proportional to its inclusive cost (largest
 * first, as calltree_sort() orders them). */
#define _GNU_SOURCE
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crt.h"
#include "search.h"
#include "text.h"
#include "util.h"
#include "view.h"

struct flame_view {
    struct view base;
    uint32_t zoom; /* top-down node at the top */
    uint32_t sel;
    uint64_t generation; /* of the data's tree the state was made for */
    struct flame_cell {
        int y, x, w; /* y: the level below the zoomed frame (0: the zoomed frame) */
        uint32_t node;
    } * cells; /* laid out by the latest draw, down to one level below the screen */
    size_t ncells, cap;
    int top; /* the first level shown: the graph scrolls to keep the selection on screen */
};

static void add_cell(struct flame_view *s, int y, int x, int w, uint32_t node)
{
    xgrow((void **)&s->cells, &s->cap, s->ncells + 1, sizeof *s->cells);
    s->cells[s->ncells].y = y;
    s->cells[s->ncells].x = x;
    s->cells[s->ncells].w = w;
    s->cells[s->ncells].node = node;
    s->ncells++;
}

static void sync(struct data *d, struct flame_view *s)
{
    if (s->generation != d->generation) {
        s->generation = d->generation;
        s->zoom = 0;
        s->sel = 0;
        s->top = 0;
    }
    if (!calltree_node(d->tree, CALLTREE_TOP_DOWN, s->sel)) {
        s->sel = 0;
    }
}

/* Cells of the subtree under the zoomed frame, breadth by depth, levels
 * 0 to `levels` - 1: a child's span is its share of its parent's, rounded
 * at both ends so that siblings never overlap; spans under one column are
 * not drawn. */
static void layout(struct data *d, struct flame_view *s, int levels, int w)
{
    const struct calltree *t = d->tree;
    enum cost_type c = d->cost;
    s->ncells = 0;
    add_cell(s, 0, 0, w, s->zoom);
    for (size_t i = 0; i < s->ncells; i++) {
        struct flame_cell cell = s->cells[i];
        if (cell.y + 1 >= levels) {
            continue;
        }
        uint64_t total = calltree_node(t, CALLTREE_TOP_DOWN, cell.node)->incl.v[c];
        if (total == 0) {
            continue;
        }
        uint32_t n;
        const uint32_t *kids = calltree_children(t, CALLTREE_TOP_DOWN, cell.node, &n);
        uint64_t before = 0;
        for (uint32_t k = 0; k < n; k++) {
            uint64_t v = calltree_node(t, CALLTREE_TOP_DOWN, kids[k])->incl.v[c];
            int x0 = cell.x + (int)((unsigned __int128)before * (unsigned)cell.w / total);
            int x1 = cell.x + (int)((unsigned __int128)(before + v) * (unsigned)cell.w / total);
            before += v;
            if (x1 - x0 >= 1) {
                add_cell(s, cell.y + 1, x0, x1 - x0, kids[k]);
            }
        }
    }
}

static void draw(struct view *v, struct view_ctx *c, int y, int h, int w)
{
    struct flame_view *s = (struct flame_view *)v;
    struct data *d = c->d;
    sync(d, s);
    int rows = h - 3;
    if (rows < 1) {
        rows = 1;
    }
    /* Scroll so that the selected frame's level is on screen; lay out one
     * level more than shown, so that Down finds the frame below the last row. */
    int sel_level = (int)(calltree_node(d->tree, CALLTREE_TOP_DOWN, s->sel)->depth -
                          calltree_node(d->tree, CALLTREE_TOP_DOWN, s->zoom)->depth);
    if (sel_level < 0) {
        sel_level = 0; /* not under the zoomed frame */
    }
    if (sel_level < s->top) {
        s->top = sel_level;
    }
    if (sel_level >= s->top + rows) {
        s->top = sel_level - rows + 1;
    }
    layout(d, s, s->top + rows + 1, w);
    int deepest = 0;
    for (size_t i = 0; i < s->ncells; i++) {
        deepest = s->cells[i].y > deepest ? s->cells[i].y : deepest;
    }
    char head[160];
    int n_head = snprintf(head, sizeof head, "FLAME GRAPH (callers above callees; Enter zooms in, Backspace out)");
    if (s->top > 0 || deepest >= rows) {
        snprintf(head + n_head, sizeof head - (size_t)n_head, " levels %d-%d%s", s->top + 1,
                 s->top + rows < deepest + 1 ? s->top + rows : deepest + 1, deepest >= s->top + rows ? "+" : "");
    }
    crt_put(y, 0, head, w, A_BOLD);
    for (size_t i = 0; i < s->ncells; i++) {
        struct flame_cell at = s->cells[i];
        if (at.y < s->top || at.y >= s->top + rows) {
            continue;
        }
        at.y = y + 1 + at.y - s->top; /* its screen row */
        const struct flame_cell *cell = &at;
        const char *name = cell->node == 0 ? "[total]" : data_node_name(d, CALLTREE_TOP_DOWN, cell->node);
        const char *label = cell->node == 0 ? "[total]" : data_node_label(d, CALLTREE_TOP_DOWN, cell->node);
        int attr = ((cell->y + cell->x) & 1) ? crt_attr(CRT_FLAME_A) : crt_attr(CRT_FLAME_B);
        if (!crt_has_color) {
            attr = (int)A_NORMAL;
        }
        if (text_match(name, c->search)) {
            attr = crt_attr(CRT_MATCH);
        }
        if (cell->node == s->sel) {
            attr = crt_attr(CRT_SELECTED) | A_BOLD;
        }
        crt_fill(cell->y, cell->x, cell->w, ' ', attr);
        if (cell->w == 1) {
            crt_put(cell->y, cell->x, "|", 1, attr);
        } else {
            crt_put(cell->y, cell->x, "|", 1, attr);
            crt_put_name(cell->y, cell->x + 1, label, 0, cell->w - 1, attr, NULL, d->utf8 ? "\xe2\x80\xa6" : ">");
        }
    }
    const struct calltree_node *n = calltree_node(d->tree, CALLTREE_TOP_DOWN, s->sel);
    uint64_t total = data_total(d);
    char buf[256];
    snprintf(buf, sizeof buf, "selected: inclusive %llu (%.2f%%), self %llu: ", (unsigned long long)n->incl.v[d->cost],
             total ? 100.0 * (double)n->incl.v[d->cost] / (double)total : 0.0, (unsigned long long)n->self.v[d->cost]);
    int x = crt_put(y + h - 1, 0, buf, w, A_BOLD);
    crt_put_name(y + h - 1, x, s->sel == 0 ? "[total]" : data_node_label(d, CALLTREE_TOP_DOWN, s->sel), 0, w - x,
                 A_BOLD, NULL, d->utf8 ? "\xe2\x80\xa6" : ">");
}

static const struct flame_cell *cell_of(const struct flame_view *s, uint32_t node)
{
    for (size_t i = 0; i < s->ncells; i++) {
        if (s->cells[i].node == node) {
            return &s->cells[i];
        }
    }
    return NULL;
}

/* The cell on row y nearest to column x, in direction dir (-1 left, 1 right, 0 covering x). */
static const struct flame_cell *cell_at(const struct flame_view *s, int y, int x, int dir)
{
    const struct flame_cell *best = NULL;
    for (size_t i = 0; i < s->ncells; i++) {
        const struct flame_cell *c = &s->cells[i];
        if (c->y != y) {
            continue;
        }
        if (dir == 0 && x >= c->x && x < c->x + c->w) {
            return c;
        }
        if (dir > 0 && c->x > x && (!best || c->x < best->x)) {
            best = c;
        }
        if (dir < 0 && c->x < x && (!best || c->x > best->x)) {
            best = c;
        }
    }
    return best;
}

static void click(struct view *v, struct view_ctx *c, int line, int x)
{
    struct flame_view *s = (struct flame_view *)v;
    (void)c;
    if (line < 1) {
        return; /* the heading */
    }
    const struct flame_cell *cell = cell_at(s, s->top + line - 1, x, 0);
    if (cell) {
        s->sel = cell->node;
    }
}

static struct view_result key(struct view *v, struct view_ctx *c, enum action a, int page)
{
    struct flame_view *s = (struct flame_view *)v;
    const struct calltree *t = c->d->tree;
    (void)page;
    sync(c->d, s);
    const struct flame_cell *cur = cell_of(s, s->sel);
    const struct calltree_node *n = calltree_node(t, CALLTREE_TOP_DOWN, s->sel);
    switch (a) {
    case ACT_EXPAND:
        s->zoom = s->sel;
        s->top = 0;
        return VIEW_RESULT_HANDLED;
    case ACT_BACK:
        if (s->zoom != 0) {
            s->zoom = calltree_node(t, CALLTREE_TOP_DOWN, s->zoom)->parent;
        }
        return VIEW_RESULT_HANDLED;
    case ACT_UP:
        if (s->sel != s->zoom && n->parent != CALLTREE_NONE) {
            s->sel = n->parent;
        }
        return VIEW_RESULT_HANDLED;
    case ACT_DOWN: {
        if (!cur) {
            s->sel = s->zoom;
            return VIEW_RESULT_HANDLED;
        }
        const struct flame_cell *below = cell_at(s, cur->y + 1, cur->x, 0);
        if (!below || calltree_node(t, CALLTREE_TOP_DOWN, below->node)->parent != s->sel) {
            below = cell_at(s, cur->y + 1, cur->x, 1);
        }
        if (below && calltree_node(t, CALLTREE_TOP_DOWN, below->node)->parent == s->sel) {
            s->sel = below->node;
        }
        return VIEW_RESULT_HANDLED;
    }
    case ACT_LEFT:
    case ACT_RIGHT: {
        if (!cur) {
            s->sel = s->zoom;
            return VIEW_RESULT_HANDLED;
        }
        const struct flame_cell *next = cell_at(s, cur->y, cur->x, a == ACT_RIGHT ? 1 : -1);
        if (next) {
            s->sel = next->node;
        }
        return VIEW_RESULT_HANDLED;
    }
    case ACT_HOME: s->sel = s->zoom; return VIEW_RESULT_HANDLED;
    default: return VIEW_RESULT_NONE;
    }
}

/* ---- the view class ---- */

static const struct sym_frame *selected_frame(struct view *v, struct view_ctx *c, const char **name)
{
    struct flame_view *s = (struct flame_view *)v;
    const struct calltree_node *n = calltree_node(c->d->tree, CALLTREE_TOP_DOWN, s->sel);
    *name = NULL;
    if (!n || !n->frame) {
        return NULL;
    }
    *name = data_node_name(c->d, CALLTREE_TOP_DOWN, s->sel);
    return n->frame;
}

/* Every match is highlighted; the cursor goes to the top-down view's
 * match (the screen gives it to select_node()). */
static struct view_result search(struct view *v, struct view_ctx *c, int dir)
{
    (void)v;
    (void)c;
    (void)dir;
    return search_forward(CALLTREE_TOP_DOWN, 0);
}

/* No sync() here: a node chosen before the first draw after a reload is
 * dropped by that draw, as the zoom is. */
static void select_node(struct view *v, struct view_ctx *c, uint32_t node)
{
    (void)c;
    ((struct flame_view *)v)->sel = node;
}

static struct view *new_view(void)
{
    struct flame_view *s = xcalloc(1, sizeof *s);
    s->generation = UINT64_MAX; /* no tree yet: the first sync() makes the state */
    return &s->base;
}

static void free_view(struct view *v)
{
    struct flame_view *s = (struct flame_view *)v;
    if (s) {
        free(s->cells);
        free(s);
    }
}

const struct view_class view_flame = {
    .name = "Flame graph",
    .new = new_view,
    .free = free_view,
    .draw = draw,
    .key = key,
    .click = click,
    .selected_frame = selected_frame,
    .search = search,
    .select_node = select_node,
    .orient = CALLTREE_TOP_DOWN,
};
