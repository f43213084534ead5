// SPDX-License-Identifier: MIT
/* The flame graph: the top-down tree as an icicle in terminal cells, the
 * zoomed frame on the first row across the whole width, each child below
 * its parent with a width proportional to its inclusive cost (largest
 * first, as calltree_sort() orders them). */
#define _GNU_SOURCE
#include "tui.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static void add_cell(struct flame_state *s, int y, int x, int w, uint32_t node)
{
    xgrow((void **)&s->cells, &s->cap, s->ncells + 1, sizeof *s->cells);
    s->cells[s->ncells].y = y;
    s->cells[s->ncells].x = x;
    s->cells[s->ncells].w = w;
    s->cells[s->ncells].node = node;
    s->ncells++;
}

static void sync(struct app *app)
{
    struct flame_state *s = &app->fl;
    if (s->generation != app->d.generation) {
        s->generation = app->d.generation;
        s->zoom = 0;
        s->sel = 0;
    }
    if (!calltree_node(app->d.tree, CALLTREE_TOP_DOWN, s->sel)) {
        s->sel = 0;
    }
}

/* Cells of the subtree under the zoomed frame, breadth by depth: a
 * child's span is its share of its parent's, rounded at both ends so that
 * siblings never overlap; spans under one column are not drawn. */
static void layout(struct app *app, int y, int rows, int w)
{
    struct flame_state *s = &app->fl;
    const struct calltree *t = app->d.tree;
    enum cost_type c = app->d.cost;
    s->ncells = 0;
    add_cell(s, y, 0, w, s->zoom);
    for (size_t i = 0; i < s->ncells; i++) {
        struct flame_cell cell = s->cells[i];
        if (cell.y + 1 >= y + rows) {
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

void view_flame_draw(struct app *app, int y, int h, int w)
{
    struct flame_state *s = &app->fl;
    struct data *d = &app->d;
    sync(app);
    int rows = h - 3;
    if (rows < 1) {
        rows = 1;
    }
    crt_put(y, 0, "FLAME GRAPH (icicle: callers above callees; Enter zooms in, Backspace out, arrows move)", w, A_BOLD);
    layout(app, y + 1, rows, w);
    for (size_t i = 0; i < s->ncells; i++) {
        const struct flame_cell *cell = &s->cells[i];
        const char *name = cell->node == 0 ? "[total]" : data_node_name(d, CALLTREE_TOP_DOWN, cell->node);
        int attr = ((cell->y + cell->x) & 1) ? crt_attr(CRT_FLAME_A) : crt_attr(CRT_FLAME_B);
        if (!crt_has_color) {
            attr = (int)A_NORMAL;
        }
        if (text_match(name, app->search)) {
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
            crt_put(cell->y, cell->x + 1, name, cell->w - 1, attr);
        }
    }
    const struct calltree_node *n = calltree_node(d->tree, CALLTREE_TOP_DOWN, s->sel);
    uint64_t total = data_total(d);
    char buf[256];
    snprintf(buf, sizeof buf, "selected: inclusive %llu (%.2f%%), self %llu: ", (unsigned long long)n->incl.v[d->cost],
             total ? 100.0 * (double)n->incl.v[d->cost] / (double)total : 0.0, (unsigned long long)n->self.v[d->cost]);
    int x = crt_put(y + h - 1, 0, buf, w, A_BOLD);
    crt_put(y + h - 1, x, s->sel == 0 ? "[total]" : data_node_name(d, CALLTREE_TOP_DOWN, s->sel), w - x, A_BOLD);
}

static const struct flame_cell *cell_of(const struct flame_state *s, uint32_t node)
{
    for (size_t i = 0; i < s->ncells; i++) {
        if (s->cells[i].node == node) {
            return &s->cells[i];
        }
    }
    return NULL;
}

/* The cell on row y nearest to column x, in direction dir (-1 left, 1 right, 0 covering x). */
static const struct flame_cell *cell_at(const struct flame_state *s, int y, int x, int dir)
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

void view_flame_click(struct app *app, int y, int x)
{
    const struct flame_cell *c = cell_at(&app->fl, y, x, 0);
    if (c) {
        app->fl.sel = c->node;
    }
}

int view_flame_key(struct app *app, enum action a, int h)
{
    struct flame_state *s = &app->fl;
    const struct calltree *t = app->d.tree;
    (void)h;
    sync(app);
    const struct flame_cell *cur = cell_of(s, s->sel);
    const struct calltree_node *n = calltree_node(t, CALLTREE_TOP_DOWN, s->sel);
    switch (a) {
    case ACT_EXPAND: s->zoom = s->sel; return 1;
    case ACT_BACK:
        if (s->zoom != 0) {
            s->zoom = calltree_node(t, CALLTREE_TOP_DOWN, s->zoom)->parent;
        }
        return 1;
    case ACT_UP:
        if (s->sel != s->zoom && n->parent != CALLTREE_NONE) {
            s->sel = n->parent;
        }
        return 1;
    case ACT_DOWN: {
        if (!cur) {
            s->sel = s->zoom;
            return 1;
        }
        const struct flame_cell *below = cell_at(s, cur->y + 1, cur->x, 0);
        if (!below || calltree_node(t, CALLTREE_TOP_DOWN, below->node)->parent != s->sel) {
            below = cell_at(s, cur->y + 1, cur->x, 1);
        }
        if (below && calltree_node(t, CALLTREE_TOP_DOWN, below->node)->parent == s->sel) {
            s->sel = below->node;
        }
        return 1;
    }
    case ACT_LEFT:
    case ACT_RIGHT: {
        if (!cur) {
            s->sel = s->zoom;
            return 1;
        }
        const struct flame_cell *next = cell_at(s, cur->y, cur->x, a == ACT_RIGHT ? 1 : -1);
        if (next) {
            s->sel = next->node;
        }
        return 1;
    }
    case ACT_HOME: s->sel = s->zoom; return 1;
    default: return 0;
    }
}
