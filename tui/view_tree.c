// SPDX-License-Identifier: MIT
/* The top-down and bottom-up views: the call tree (calltree.h) as an
 * indented list of the expanded nodes, each row with its inclusive and
 * self cost and share of the total; and the search of every view. */
#define _GNU_SOURCE
#include "tui.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* ---- state ---- */

static void drop_path(struct tree_state *s)
{
    for (uint32_t i = 0; i < s->npath; i++) {
        free(s->path[i]);
    }
    free(s->path);
    s->path = NULL;
    s->npath = 0;
}

static void remember_path(struct app *app, struct tree_state *s, uint32_t node)
{
    drop_path(s);
    const struct calltree *t = app->d.tree;
    uint32_t depth = 0;
    for (uint32_t n = node; n != 0 && n != CALLTREE_NONE; n = calltree_node(t, s->o, n)->parent) {
        depth++;
    }
    s->path = xcalloc(depth ? depth : 1, sizeof *s->path);
    s->npath = depth;
    for (uint32_t n = node; n != 0 && n != CALLTREE_NONE; n = calltree_node(t, s->o, n)->parent) {
        s->path[--depth] = xstrdup(data_node_name(&app->d, s->o, n));
    }
}

static void rebuild(struct app *app, struct tree_state *s)
{
    const struct calltree *t = app->d.tree;
    uint32_t keep = s->l.n ? s->l.rows[s->l.sel].id : CALLTREE_NONE;
    list_clear(&s->l);
    /* Iterative depth-first walk: trees can be thousands of frames deep. */
    struct frame {
        const uint32_t *kids;
        uint32_t n, i;
    } *stack = NULL;
    size_t cap = 0, depth = 0;
    xgrow((void **)&stack, &cap, 1, sizeof *stack);
    stack[0].kids = calltree_children(t, s->o, 0, &stack[0].n);
    stack[0].i = 0;
    depth = 1;
    while (depth > 0) {
        struct frame *f = &stack[depth - 1];
        if (f->i == f->n) {
            depth--;
            continue;
        }
        uint32_t id = f->kids[f->i++];
        list_push(&s->l, id, (uint32_t)(depth - 1), 0);
        if (id < s->nopen && s->open[id]) {
            xgrow((void **)&stack, &cap, depth + 1, sizeof *stack);
            stack[depth].kids = calltree_children(t, s->o, id, &stack[depth].n);
            stack[depth].i = 0;
            depth++;
        }
    }
    free(stack);
    s->l.sel = 0;
    for (uint32_t i = 0; i < s->l.n; i++) {
        if (s->l.rows[i].id == keep) {
            s->l.sel = i;
            break;
        }
    }
}

/* After the tree was replaced (window, reload): open the remembered path
 * again by its names and select its deepest node found. */
static void sync(struct app *app, struct tree_state *s)
{
    if (s->generation == app->d.generation) {
        return;
    }
    s->generation = app->d.generation;
    const struct calltree *t = app->d.tree;
    free(s->open);
    s->nopen = calltree_size(t, s->o);
    s->open = xcalloc(s->nopen, 1);
    list_clear(&s->l);
    uint32_t node = 0;
    for (uint32_t i = 0; i < s->npath; i++) {
        uint32_t n;
        const uint32_t *kids = calltree_children(t, s->o, node, &n);
        uint32_t found = CALLTREE_NONE;
        for (uint32_t k = 0; k < n; k++) {
            if (strcmp(data_node_name(&app->d, s->o, kids[k]), s->path[i]) == 0) {
                found = kids[k];
                break;
            }
        }
        if (found == CALLTREE_NONE) {
            break;
        }
        if (node != 0) {
            s->open[node] = 1;
        }
        node = found;
    }
    rebuild(app, s);
    if (node != 0) {
        view_tree_select(app, s, node);
    }
}

void view_tree_select(struct app *app, struct tree_state *s, uint32_t node)
{
    sync(app, s);
    const struct calltree *t = app->d.tree;
    const struct calltree_node *n = calltree_node(t, s->o, node);
    if (!n) {
        return;
    }
    for (uint32_t p = n->parent; p != CALLTREE_NONE && p != 0; p = calltree_node(t, s->o, p)->parent) {
        s->open[p] = 1;
    }
    rebuild(app, s);
    for (uint32_t i = 0; i < s->l.n; i++) {
        if (s->l.rows[i].id == node) {
            s->l.sel = i;
            break;
        }
    }
    remember_path(app, s, node);
}

uint32_t view_tree_selected(struct app *app, struct tree_state *s)
{
    sync(app, s);
    return s->l.n ? s->l.rows[s->l.sel].id : CALLTREE_NONE;
}

/* ---- drawing ---- */

void view_tree_draw(struct app *app, struct tree_state *s, int y, int h, int w)
{
    struct data *d = &app->d;
    sync(app, s);
    /* A re-sort (cost type) changes the children's order: lay out again. */
    rebuild(app, s);
    uint64_t total = data_total(d);
    char buf[256];
    snprintf(buf, sizeof buf, "%14s %14s %7s  %s", "inclusive", "self", "share",
             s->o == CALLTREE_TOP_DOWN ? "function (callees below)" : "allocation site (callers below)");
    crt_put(y, 0, buf, w, A_BOLD);
    int rows = h - 1;
    list_scroll(&s->l, rows);
    const char *open_mark = d->utf8 ? "\xe2\x96\xbe " : "- ";
    const char *closed_mark = d->utf8 ? "\xe2\x96\xb8 " : "+ ";
    for (int r = 0; r < rows && s->l.top + (uint32_t)r < s->l.n; r++) {
        uint32_t i = s->l.top + (uint32_t)r;
        const struct row *row = &s->l.rows[i];
        const struct calltree_node *n = calltree_node(d->tree, s->o, row->id);
        int attr = i == s->l.sel ? crt_attr(CRT_SELECTED) : (int)A_NORMAL;
        if (attr != (int)A_NORMAL) {
            crt_fill(y + 1 + r, 0, w, ' ', attr);
        }
        uint64_t v = n->incl.v[d->cost];
        double share = total ? 100.0 * (double)v / (double)total : 0.0;
        snprintf(buf, sizeof buf, "%14llu %14llu %6.2f%%  ", (unsigned long long)v,
                 (unsigned long long)n->self.v[d->cost], share);
        int x = crt_put(y + 1 + r, 0, buf, w, attr);
        int indent = (int)row->depth * 2;
        if (indent > (w - x) / 2) {
            indent = (w - x) / 2;
        }
        x += indent;
        uint32_t nk;
        calltree_children(d->tree, s->o, row->id, &nk);
        const char *mark = nk == 0 ? "  " : (row->id < s->nopen && s->open[row->id] ? open_mark : closed_mark);
        x += crt_put(y + 1 + r, x, mark, w - x, attr);
        crt_put_hl(y + 1 + r, x, data_node_name(d, s->o, row->id), w - x, attr, app->search);
    }
    if (s->l.n == 0) {
        crt_put(y + 1, 2, "(no allocation with this cost)", w - 2, (int)A_NORMAL);
    }
}

/* ---- keys ---- */

static void open_subtree(struct tree_state *s, const struct calltree *t, uint32_t node)
{
    uint32_t *todo = NULL;
    size_t cap = 0, n = 0;
    xgrow((void **)&todo, &cap, 1, sizeof *todo);
    todo[n++] = node;
    while (n > 0) {
        uint32_t id = todo[--n];
        uint32_t nk;
        const uint32_t *kids = calltree_children(t, s->o, id, &nk);
        if (nk == 0) {
            continue;
        }
        s->open[id] = 1;
        xgrow((void **)&todo, &cap, n + nk, sizeof *todo);
        memcpy(todo + n, kids, nk * sizeof *kids);
        n += nk;
    }
    free(todo);
}

int view_tree_key(struct app *app, struct tree_state *s, enum action a, int h)
{
    sync(app, s);
    const struct calltree *t = app->d.tree;
    if (s->l.n == 0) {
        return 0;
    }
    uint32_t id = s->l.rows[s->l.sel].id;
    uint32_t nk;
    calltree_children(t, s->o, id, &nk);
    switch (a) {
    case ACT_EXPAND:
        if (nk > 0) {
            s->open[id] = !s->open[id];
        }
        break;
    case ACT_RIGHT:
        if (nk > 0) {
            s->open[id] = 1;
        }
        break;
    case ACT_EXPAND_ALL: open_subtree(s, t, id); break;
    case ACT_LEFT:
        if (nk > 0 && s->open[id]) {
            s->open[id] = 0;
        } else {
            uint32_t p = calltree_node(t, s->o, id)->parent;
            if (p != 0 && p != CALLTREE_NONE) {
                view_tree_select(app, s, p);
                return 1;
            }
        }
        break;
    default:
        if (!list_move(&s->l, a, h)) {
            return 0;
        }
        break;
    }
    rebuild(app, s);
    remember_path(app, s, s->l.rows[s->l.sel].id);
    return 1;
}

/* ---- search ---- */

/* Every node of orientation o in display order (children sorted). */
static uint32_t *all_nodes(const struct calltree *t, enum calltree_orient o, uint32_t *count)
{
    uint32_t total = calltree_size(t, o);
    uint32_t *out = xmalloc((size_t)total * sizeof *out);
    uint32_t *todo = xmalloc((size_t)total * sizeof *todo);
    uint32_t n = 0, m = 0;
    todo[m++] = 0;
    while (m > 0) {
        uint32_t id = todo[--m];
        if (id != 0) {
            out[n++] = id;
        }
        uint32_t nk;
        const uint32_t *kids = calltree_children(t, o, id, &nk);
        /* Pushed in reverse so that the first child comes out first. */
        for (uint32_t k = nk; k > 0 && m < total; k--) {
            todo[m++] = kids[k - 1];
        }
    }
    free(todo);
    *count = n;
    return out;
}

static int search_tree(struct app *app, struct tree_state *s, int dir)
{
    sync(app, s);
    uint32_t n;
    uint32_t *nodes = all_nodes(app->d.tree, s->o, &n);
    uint32_t cur = s->l.n ? s->l.rows[s->l.sel].id : CALLTREE_NONE;
    uint32_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (nodes[i] == cur) {
            at = i;
            break;
        }
    }
    int found = 0;
    for (uint32_t k = 0; k < n && !found; k++) {
        uint32_t step = dir == 0 ? k : k + 1;
        uint32_t i = dir < 0 ? (at + n - step % n) % n : (at + step) % n;
        if (text_match(data_node_name(&app->d, s->o, nodes[i]), app->search)) {
            view_tree_select(app, s, nodes[i]);
            found = 1;
        }
    }
    free(nodes);
    return found;
}

int view_search(struct app *app, int dir)
{
    switch (app->view) {
    case VIEW_TOPDOWN: return search_tree(app, &app->td, dir);
    case VIEW_BOTTOMUP: return search_tree(app, &app->bu, dir);
    case VIEW_SUMMARY:
        /* The summary's sites are the bottom-up view's: search there. */
        app->view = VIEW_BOTTOMUP;
        return search_tree(app, &app->bu, dir);
    case VIEW_FLAME:
    case VIEW_TIME:
        /* The flame graph highlights every match; the cursor goes to the
         * top-down tree's match. */
        if (search_tree(app, &app->td, dir)) {
            app->fl.sel = view_tree_selected(app, &app->td);
            return 1;
        }
        return 0;
    case VIEW_FUNCTIONS: {
        struct list *l = &app->fn.l;
        if (app->fn.shown != CALLTREE_NONE) {
            app->fn.shown = CALLTREE_NONE;
        }
        view_funcs_selected(app);
        uint32_t n = l->n;
        for (uint32_t k = 0; k < n; k++) {
            uint32_t step = dir == 0 ? k : k + 1;
            uint32_t i = dir < 0 ? (l->sel + n - step % n) % n : (l->sel + step) % n;
            if (text_match(data_func_name(&app->d, l->rows[i].id), app->search)) {
                l->sel = i;
                return 1;
            }
        }
        return 0;
    }
    default: return 0;
    }
}
