// SPDX-License-Identifier: MIT
/* The top-down and bottom-up views: the call tree (calltree.h) as an
 * indented list of the expanded nodes, each row with its inclusive and
 * self cost and share of the total. One file, two view classes
 * (view_topdown, view_bottomup): the same code on either orientation. */
#define _GNU_SOURCE
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "columns.h"
#include "crt.h"
#include "listbox.h"
#include "search.h"
#include "text.h"
#include "util.h"
#include "view.h"

struct tree_view {
    struct view base;
    enum calltree_orient o;
    uint8_t *open; /* per node: expanded */
    uint32_t nopen;
    struct listbox l;
    uint64_t generation; /* of the data's tree the state was made for */
    char **path; /* names from the root to the selection: kept across reloads */
    uint32_t npath;
    int hoff; /* columns of the names column scrolled out on the left */
    int hmanual; /* hoff set by < or >: kept until the selection moves */
};

/* < and > scroll the names by this many columns. */
#define HSCROLL_STEP 8

/* ---- state ---- */

/* The bottom-up tree grows as nodes are expanded: the open flags grow
 * with it. */
static int is_open(const struct tree_view *s, uint32_t id)
{
    return id < s->nopen && s->open[id];
}

static void set_open(struct tree_view *s, uint32_t id, int on)
{
    if (id >= s->nopen) {
        if (!on) {
            return;
        }
        size_t cap = s->nopen;
        xgrow((void **)&s->open, &cap, (size_t)id + 1, 1); /* the new part zeroed */
        s->nopen = (uint32_t)cap;
    }
    s->open[id] = (uint8_t)on;
}

static void drop_path(struct tree_view *s)
{
    for (uint32_t i = 0; i < s->npath; i++) {
        free(s->path[i]);
    }
    free(s->path);
    s->path = NULL;
    s->npath = 0;
}

static void remember_path(struct data *d, struct tree_view *s, uint32_t node)
{
    drop_path(s);
    const struct calltree *t = d->tree;
    uint32_t depth = 0;
    for (uint32_t n = node; n != 0 && n != CALLTREE_NONE; n = calltree_node(t, s->o, n)->parent) {
        depth++;
    }
    s->path = xcalloc(depth ? depth : 1, sizeof *s->path);
    s->npath = depth;
    for (uint32_t n = node; n != 0 && n != CALLTREE_NONE; n = calltree_node(t, s->o, n)->parent) {
        s->path[--depth] = xstrdup(data_node_name(d, s->o, n));
    }
}

static void rebuild(struct data *d, struct tree_view *s)
{
    const struct calltree *t = d->tree;
    uint32_t keep = s->l.n ? s->l.rows[s->l.sel].id : CALLTREE_NONE;
    listbox_clear(&s->l);
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
        listbox_push(&s->l, id, (uint32_t)(depth - 1), 0);
        if (is_open(s, id)) {
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

static void tree_select(struct data *d, struct tree_view *s, uint32_t node);

/* After the tree was replaced (window, reload): open the remembered path
 * again by its names and select its deepest node found. */
static void sync(struct data *d, struct tree_view *s)
{
    if (s->generation == d->generation) {
        return;
    }
    s->generation = d->generation;
    const struct calltree *t = d->tree;
    free(s->open);
    s->open = NULL;
    s->nopen = 0;
    listbox_clear(&s->l);
    uint32_t node = 0;
    for (uint32_t i = 0; i < s->npath; i++) {
        uint32_t n;
        const uint32_t *kids = calltree_children(t, s->o, node, &n);
        uint32_t found = CALLTREE_NONE;
        for (uint32_t k = 0; k < n; k++) {
            if (strcmp(data_node_name(d, s->o, kids[k]), s->path[i]) == 0) {
                found = kids[k];
                break;
            }
        }
        if (found == CALLTREE_NONE) {
            break;
        }
        if (node != 0) {
            set_open(s, node, 1);
        }
        node = found;
    }
    rebuild(d, s);
    if (node != 0) {
        tree_select(d, s, node);
    }
}

static void tree_select(struct data *d, struct tree_view *s, uint32_t node)
{
    sync(d, s);
    const struct calltree *t = d->tree;
    const struct calltree_node *n = calltree_node(t, s->o, node);
    if (!n) {
        return;
    }
    for (uint32_t p = n->parent; p != CALLTREE_NONE && p != 0; p = calltree_node(t, s->o, p)->parent) {
        set_open(s, p, 1);
    }
    rebuild(d, s);
    for (uint32_t i = 0; i < s->l.n; i++) {
        if (s->l.rows[i].id == node) {
            s->l.sel = i;
            break;
        }
    }
    remember_path(d, s, node);
    s->hmanual = 0;
}

static uint32_t tree_selected(struct data *d, struct tree_view *s)
{
    sync(d, s);
    return s->l.n ? s->l.rows[s->l.sel].id : CALLTREE_NONE;
}

/* ---- drawing ---- */

static void draw(struct view *view, struct view_ctx *c, int y, int h, int w)
{
    struct data *d = c->d;
    struct tree_view *s = (struct tree_view *)view;
    sync(d, s);
    /* A re-sort (cost type) changes the children's order: lay out again. */
    rebuild(d, s);
    char buf[256], cols[192];
    /* The figures' columns (columns.h): one cost's, or every cost's (=). */
    int names_x = columns_header(d, cols, sizeof cols), names_w = w - names_x;
    snprintf(buf, sizeof buf, "%s%s", cols,
             s->o == CALLTREE_TOP_DOWN ? "function (callees below)" : "allocation site (callers below)");
    crt_put(y, 0, buf, w, A_BOLD);
    int rows = h - 1;
    listbox_scroll(&s->l, rows);
    const char *open_mark = d->utf8 ? "\xe2\x96\xbe " : "- ";
    const char *closed_mark = d->utf8 ? "\xe2\x96\xb8 " : "+ ";
    /* A row with nothing under it has a mark too: blank, its name would
     * stand where a child's mark stands, and read as the row above's. */
    const char *leaf_mark = d->utf8 ? "\xc2\xb7 " : ". ";
    const char *more = d->utf8 ? "\xe2\x80\xa6" : ">";
    /* The names column scrolls so that the selected row's mark stays in
     * its left half, however deep the row: two columns a level. */
    if (s->l.n && !s->hmanual) {
        int sel_indent = (int)s->l.rows[s->l.sel].depth * 2;
        if (sel_indent < s->hoff) {
            s->hoff = sel_indent;
        }
        if (names_w > 1 && sel_indent > s->hoff + names_w / 2) {
            s->hoff = sel_indent - names_w / 2;
        }
    }
    if (s->hoff > 0) {
        snprintf(buf, sizeof buf, "%s%s from column %d (< >)", cols, s->o == CALLTREE_TOP_DOWN ? "function" : "site",
                 s->hoff + 1);
        crt_fill(y, 0, w, ' ', A_BOLD); /* over the longer heading drawn before */
        crt_put(y, 0, buf, w, A_BOLD);
    }
    char *line = NULL;
    size_t line_cap = 0;
    for (int r = 0; r < rows && s->l.top + (uint32_t)r < s->l.n; r++) {
        uint32_t i = s->l.top + (uint32_t)r;
        const struct row *row = &s->l.rows[i];
        const struct calltree_node *n = calltree_node(d->tree, s->o, row->id);
        int attr = i == s->l.sel ? crt_attr(CRT_SELECTED) : (int)A_NORMAL;
        if (attr != (int)A_NORMAL) {
            crt_fill(y + 1 + r, 0, w, ' ', attr);
        }
        columns_row(d, s->o, n, buf, sizeof buf);
        int x = crt_put(y + 1 + r, 0, buf, w, attr);
        /* Whether it has children, without building them (bottom-up). */
        int kids = calltree_has_children(d->tree, s->o, row->id);
        const char *mark = !kids ? leaf_mark : (is_open(s, row->id) ? open_mark : closed_mark);
        const char *label = data_node_label(d, s->o, row->id);
        size_t indent = (size_t)row->depth * 2;
        xgrow((void **)&line, &line_cap, indent + strlen(mark) + strlen(label) + 1, 1);
        memset(line, ' ', indent);
        snprintf(line + indent, line_cap - indent, "%s%s", mark, label);
        /* Following the selection, the scroll takes a row's indentation
         * only, so a shallower row still shows its mark and name (after
         * the cut mark); < and > scroll the whole column. */
        int skip = s->hoff;
        if (!s->hmanual) {
            skip = (int)indent < s->hoff ? (int)indent : s->hoff;
            skip = skip > 0 ? skip - 1 : 0;
        }
        crt_put_name(y + 1 + r, x, line, skip, w - x, attr, c->search, more);
    }
    free(line);
    if (s->l.n == 0) {
        crt_put(y + 1, 2, "(no allocation with this cost)", w - 2, (int)A_NORMAL);
    }
}

/* ---- keys ---- */

/* '*' opens at most this many nodes: a bottom-up subtree is built as it
 * is opened, and can hold allocation sites x depth nodes. */
#define OPEN_ALL_MAX 100000

/* Open `node`'s subtree, depth first; 1 when it stopped at OPEN_ALL_MAX. */
static int open_subtree(struct tree_view *s, const struct calltree *t, uint32_t node)
{
    uint32_t *todo = NULL;
    size_t cap = 0, n = 0;
    uint32_t opened = 0;
    int cut = 0;
    xgrow((void **)&todo, &cap, 1, sizeof *todo);
    todo[n++] = node;
    while (n > 0) {
        uint32_t id = todo[--n];
        if (!calltree_has_children(t, s->o, id)) {
            continue;
        }
        if (opened == OPEN_ALL_MAX) {
            cut = 1;
            break;
        }
        uint32_t nk;
        const uint32_t *kids = calltree_children(t, s->o, id, &nk);
        set_open(s, id, 1);
        opened++;
        xgrow((void **)&todo, &cap, n + nk, sizeof *todo);
        memcpy(todo + n, kids, nk * sizeof *kids);
        n += nk;
    }
    free(todo);
    return cut;
}

static struct view_result key(struct view *v, struct view_ctx *c, enum action a, int page)
{
    struct data *d = c->d;
    struct tree_view *s = (struct tree_view *)v;
    struct view_result r = VIEW_RESULT_HANDLED;
    sync(d, s);
    const struct calltree *t = d->tree;
    if (s->l.n == 0) {
        return VIEW_RESULT_NONE;
    }
    uint32_t id = s->l.rows[s->l.sel].id;
    int kids = calltree_has_children(t, s->o, id);
    switch (a) {
    case ACT_EXPAND:
        if (kids) {
            set_open(s, id, !is_open(s, id));
        }
        break;
    case ACT_RIGHT:
        if (kids) {
            set_open(s, id, 1);
        }
        break;
    case ACT_EXPAND_ALL:
        if (open_subtree(s, t, id)) {
            r.flags |= VIEW_STATUS;
            r.status = "expanded the first 100000 nodes of the subtree only";
        }
        break;
    case ACT_SCROLL_LEFT:
    case ACT_SCROLL_RIGHT:
        s->hoff += a == ACT_SCROLL_RIGHT ? HSCROLL_STEP : -HSCROLL_STEP;
        if (s->hoff < 0) {
            s->hoff = 0;
        }
        s->hmanual = 1;
        return r;
    case ACT_LEFT:
        if (kids && is_open(s, id)) {
            set_open(s, id, 0);
        } else {
            uint32_t p = calltree_node(t, s->o, id)->parent;
            if (p != 0 && p != CALLTREE_NONE) {
                tree_select(d, s, p);
                return r;
            }
        }
        break;
    default:
        if (!listbox_move(&s->l, a, page)) {
            return VIEW_RESULT_NONE;
        }
        break;
    }
    rebuild(d, s);
    remember_path(d, s, s->l.rows[s->l.sel].id);
    s->hmanual = 0;
    return r;
}

/* ---- search ---- */

/* Every node built of orientation o in display order (children sorted):
 * the whole tree for top-down; for bottom-up, the sites and the callers
 * of every node expanded so far, building nothing more. */
static uint32_t *built_nodes(const struct calltree *t, enum calltree_orient o, uint32_t *count)
{
    uint32_t nk;
    calltree_children(t, o, 0, &nk); /* the sites, at least */
    uint32_t total = calltree_built(t, o);
    uint32_t *out = xmalloc((size_t)total * sizeof *out);
    uint32_t *todo = xmalloc((size_t)total * sizeof *todo);
    uint32_t n = 0, m = 0;
    todo[m++] = 0;
    while (m > 0) {
        uint32_t id = todo[--m];
        if (id != 0) {
            out[n++] = id;
        }
        if (!calltree_expanded(t, o, id)) {
            continue;
        }
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

/* The bottom-up node of a match that no node built so far shows, found
 * through the top-down tree: its first node (display order) of a matching
 * function, followed down its heaviest children to an allocation site;
 * the bottom-up path from that site up to the match is built (its nodes
 * only, with their siblings). CALLTREE_NONE when no stack reaches a match
 * within CALLTREE_MAX_DEPTH frames of its site. O(top-down nodes) plus
 * the expansions along the path. */
static uint32_t bottom_up_match(struct data *d, const char *needle)
{
    const struct calltree *t = d->tree;
    uint32_t n;
    uint32_t *td = built_nodes(t, CALLTREE_TOP_DOWN, &n);
    uint32_t found = CALLTREE_NONE;
    for (uint32_t i = 0; i < n && found == CALLTREE_NONE; i++) {
        uint32_t x = td[i];
        if (!text_match(data_node_name(d, CALLTREE_TOP_DOWN, x), needle)) {
            continue;
        }
        uint32_t site = x;
        while (!cost_any(&calltree_node(t, CALLTREE_TOP_DOWN, site)->self)) {
            uint32_t nk;
            const uint32_t *kids = calltree_children(t, CALLTREE_TOP_DOWN, site, &nk);
            uint32_t next = CALLTREE_NONE;
            for (uint32_t k = 0; k < nk && next == CALLTREE_NONE; k++) {
                if (cost_any(&calltree_node(t, CALLTREE_TOP_DOWN, kids[k])->incl)) {
                    next = kids[k];
                }
            }
            if (next == CALLTREE_NONE) {
                break;
            }
            site = next;
        }
        const struct calltree_node *sn = calltree_node(t, CALLTREE_TOP_DOWN, site);
        if (!cost_any(&sn->self) || sn->depth - calltree_node(t, CALLTREE_TOP_DOWN, x)->depth >= CALLTREE_MAX_DEPTH) {
            continue;
        }
        uint32_t b = 0;
        for (uint32_t y = site;; y = calltree_node(t, CALLTREE_TOP_DOWN, y)->parent) {
            uint32_t f = calltree_node(t, CALLTREE_TOP_DOWN, y)->func;
            uint32_t nk;
            const uint32_t *kids = calltree_children(t, CALLTREE_BOTTOM_UP, b, &nk);
            uint32_t c = CALLTREE_NONE;
            for (uint32_t k = 0; k < nk && c == CALLTREE_NONE; k++) {
                if (calltree_node(t, CALLTREE_BOTTOM_UP, kids[k])->func == f) {
                    c = kids[k];
                }
            }
            if (c == CALLTREE_NONE) {
                BUG("bottom-up path of a top-down node not found");
            }
            b = c;
            if (y == x) {
                break;
            }
        }
        found = b;
    }
    free(td);
    return found;
}

struct name_arg {
    struct data *d;
    enum calltree_orient o;
    const uint32_t *nodes;
};

static const char *node_name(void *arg, uint32_t i)
{
    struct name_arg *a = arg;
    return data_node_name(a->d, a->o, a->nodes[i]);
}

/* Search among the nodes built, in display order from the selection; the
 * bottom-up tree is never built whole for it (see bottom_up_match()). */
static int search_tree(struct data *d, struct tree_view *s, const char *needle, int dir)
{
    sync(d, s);
    if (!search_any_function(d, needle)) {
        return 0;
    }
    uint32_t n;
    uint32_t *nodes = built_nodes(d->tree, s->o, &n);
    uint32_t cur = s->l.n ? s->l.rows[s->l.sel].id : CALLTREE_NONE;
    uint32_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (nodes[i] == cur) {
            at = i;
            break;
        }
    }
    struct name_arg arg = {d, s->o, nodes};
    uint32_t i = search_step(n, at, dir, needle, node_name, &arg);
    int found = i < n;
    if (found) {
        tree_select(d, s, nodes[i]);
    }
    free(nodes);
    if (!found && s->o == CALLTREE_BOTTOM_UP) {
        uint32_t b = bottom_up_match(d, needle);
        if (b != CALLTREE_NONE) {
            tree_select(d, s, b);
            found = 1;
        }
    }
    return found;
}

/* ---- the view classes ---- */

static void click(struct view *v, struct view_ctx *c, int line, int x)
{
    (void)c;
    (void)x;
    listbox_click(&((struct tree_view *)v)->l, line);
}

static const struct sym_frame *selected_frame(struct view *v, struct view_ctx *c, const char **name)
{
    struct tree_view *s = (struct tree_view *)v;
    uint32_t node = tree_selected(c->d, s);
    const struct calltree_node *n = calltree_node(c->d->tree, s->o, node);
    *name = NULL;
    if (!n || !n->frame) {
        return NULL;
    }
    *name = data_node_name(c->d, s->o, node);
    return n->frame;
}

static struct view_result search(struct view *v, struct view_ctx *c, int dir)
{
    struct tree_view *s = (struct tree_view *)v;
    struct view_result r = VIEW_RESULT_NONE;
    if (search_tree(c->d, s, c->search, dir)) {
        r.flags = VIEW_FOUND;
        r.o = s->o;
        r.node = tree_selected(c->d, s);
    }
    return r;
}

static void select_node(struct view *v, struct view_ctx *c, uint32_t node)
{
    tree_select(c->d, (struct tree_view *)v, node);
}

static struct view *new_tree(enum calltree_orient o)
{
    struct tree_view *s = xcalloc(1, sizeof *s);
    s->o = o;
    s->generation = UINT64_MAX; /* no tree yet: the first sync() makes the state */
    return &s->base;
}

static struct view *new_topdown(void)
{
    return new_tree(CALLTREE_TOP_DOWN);
}

static struct view *new_bottomup(void)
{
    return new_tree(CALLTREE_BOTTOM_UP);
}

static void free_view(struct view *v)
{
    struct tree_view *s = (struct tree_view *)v;
    if (!s) {
        return;
    }
    free(s->open);
    listbox_release(&s->l);
    drop_path(s);
    free(s);
}

const struct view_class view_topdown = {
    .name = "Top-down",
    .new = new_topdown,
    .free = free_view,
    .draw = draw,
    .key = key,
    .click = click,
    .selected_frame = selected_frame,
    .search = search,
    .select_node = select_node,
    .orient = CALLTREE_TOP_DOWN,
};

const struct view_class view_bottomup = {
    .name = "Bottom-up",
    .new = new_bottomup,
    .free = free_view,
    .draw = draw,
    .key = key,
    .click = click,
    .selected_frame = selected_frame,
    .search = search,
    .select_node = select_node,
    .orient = CALLTREE_BOTTOM_UP,
};
