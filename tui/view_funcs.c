// SPDX-License-Identifier: MIT
/* The functions view: every function with its self and inclusive cost
 * (calltree_func_order(), sorted by either), and for the selected one its
 * callers and callees with the cost through each call
 * (calltree_func_links()). */
#define _GNU_SOURCE
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crt.h"
#include "listbox.h"
#include "search.h"
#include "util.h"
#include "view.h"

struct funcs_view {
    struct view base;
    struct listbox l;
    uint32_t shown; /* function whose callers/callees are shown; CALLTREE_NONE: the list */
    struct listbox links;
    uint64_t generation; /* of the data's tree the state was made for */
    char *selname; /* kept across reloads */
    struct calltree_link *callers, *callees;
    uint32_t ncallers, ncallees;
    /* The functions shown before `shown`, reached by Enter on a caller or
     * a callee: Backspace goes back through them, then to the list. */
    uint32_t *history;
    size_t nhistory, history_cap;
};

enum { LINK_CALLER = 0, LINK_CALLEE = 1, LINK_HEADING = -1 };

static enum cost_type sort_cost;

static int by_cost(const void *a, const void *b)
{
    const struct calltree_link *x = a, *y = b;
    if (x->incl.v[sort_cost] != y->incl.v[sort_cost]) {
        return x->incl.v[sort_cost] < y->incl.v[sort_cost] ? 1 : -1;
    }
    return x->func < y->func ? -1 : x->func > y->func;
}

static void drop_links(struct funcs_view *s)
{
    free(s->callers);
    free(s->callees);
    s->callers = s->callees = NULL;
    s->ncallers = s->ncallees = 0;
}

static void rebuild_list(struct data *d, struct funcs_view *s)
{
    uint32_t keep = s->l.n ? s->l.rows[s->l.sel].id : CALLTREE_NONE;
    uint32_t n;
    const uint32_t *order = calltree_func_order(d->tree, &n);
    listbox_clear(&s->l);
    s->l.sel = 0;
    for (uint32_t i = 0; i < n; i++) {
        listbox_push(&s->l, order[i], 0, 0);
        if (order[i] == keep) {
            s->l.sel = i;
        }
    }
}

static void sync(struct data *d, struct funcs_view *s)
{
    if (s->generation == d->generation) {
        return;
    }
    s->generation = d->generation;
    drop_links(s);
    s->shown = CALLTREE_NONE;
    s->nhistory = 0; /* function ids of the old tree */
    listbox_clear(&s->l);
    rebuild_list(d, s);
    if (s->selname) {
        for (uint32_t i = 0; i < s->l.n; i++) {
            if (strcmp(data_func_name(d, s->l.rows[i].id), s->selname) == 0) {
                s->l.sel = i;
                break;
            }
        }
    }
}

static void show_links(struct data *d, struct funcs_view *s, uint32_t f)
{
    drop_links(s);
    s->shown = f;
    s->ncallers = calltree_func_links(d->tree, f, CALLTREE_CALLERS, &s->callers);
    s->ncallees = calltree_func_links(d->tree, f, CALLTREE_CALLEES, &s->callees);
    s->links.sel = s->links.top = 0;
}

/* A caller or a callee: the headings are not chosen. */
static int link_row(const struct row *r)
{
    return r->kind != LINK_HEADING;
}

static void build_links(struct data *d, struct funcs_view *s)
{
    sort_cost = d->cost;
    if (s->ncallers) {
        qsort(s->callers, s->ncallers, sizeof *s->callers, by_cost);
    }
    if (s->ncallees) {
        qsort(s->callees, s->ncallees, sizeof *s->callees, by_cost);
    }
    uint32_t sel = s->links.sel;
    listbox_clear(&s->links);
    listbox_push(&s->links, 0, 0, LINK_HEADING);
    for (uint32_t i = 0; i < s->ncallers; i++) {
        listbox_push(&s->links, i, 1, LINK_CALLER);
    }
    listbox_push(&s->links, 1, 0, LINK_HEADING);
    for (uint32_t i = 0; i < s->ncallees; i++) {
        listbox_push(&s->links, i, 1, LINK_CALLEE);
    }
    s->links.sel = sel < s->links.n ? sel : 0;
    listbox_settle(&s->links, 1, link_row);
}

static uint32_t selected(struct data *d, struct funcs_view *s)
{
    sync(d, s);
    if (s->shown != CALLTREE_NONE) {
        const struct row *r = s->links.n ? &s->links.rows[s->links.sel] : NULL;
        if (r && r->kind == LINK_CALLER) {
            return s->callers[r->id].func;
        }
        if (r && r->kind == LINK_CALLEE) {
            return s->callees[r->id].func;
        }
        return s->shown;
    }
    return s->l.n ? s->l.rows[s->l.sel].id : CALLTREE_NONE;
}

static void draw_row(struct view_ctx *c, int y, int w, int attr, const struct cost_vec *incl,
                     const struct cost_vec *self, int indent, const char *name)
{
    struct data *d = c->d;
    uint64_t total = data_total(d);
    char buf[128];
    char self_text[32] = "";
    if (self) {
        snprintf(self_text, sizeof self_text, "%llu", (unsigned long long)self->v[d->cost]);
    }
    uint64_t v = incl->v[d->cost];
    snprintf(buf, sizeof buf, "%14llu %14s %6.2f%%  %*s", (unsigned long long)v, self_text,
             total ? 100.0 * (double)v / (double)total : 0.0, indent, "");
    if (attr != (int)A_NORMAL) {
        crt_fill(y, 0, w, ' ', attr);
    }
    int x = crt_put(y, 0, buf, w, attr);
    crt_put_name(y, x, name, 0, w - x, attr, c->search, d->utf8 ? "\xe2\x80\xa6" : ">");
}

static void draw(struct view *v, struct view_ctx *c, int y, int h, int w)
{
    struct funcs_view *s = (struct funcs_view *)v;
    struct data *d = c->d;
    sync(d, s);
    char buf[512];
    int rows = h - 1;
    if (s->shown == CALLTREE_NONE) {
        rebuild_list(d, s);
        snprintf(buf, sizeof buf, "%14s %14s %7s  function (sorted by %s; s: sort by %s; Enter: callers and callees)",
                 "inclusive", "self", "share", d->by_self ? "self" : "inclusive", d->by_self ? "inclusive" : "self");
        crt_put(y, 0, buf, w, A_BOLD);
        listbox_scroll(&s->l, rows);
        for (int r = 0; r < rows && s->l.top + (uint32_t)r < s->l.n; r++) {
            uint32_t i = s->l.top + (uint32_t)r;
            const struct calltree_func *f = calltree_func(d->tree, s->l.rows[i].id);
            draw_row(c, y + 1 + r, w, i == s->l.sel ? crt_attr(CRT_SELECTED) : (int)A_NORMAL, &f->incl, &f->self, 0,
                     data_func_label(d, s->l.rows[i].id));
        }
        free(s->selname);
        s->selname = s->l.n ? xstrdup(data_func_name(d, s->l.rows[s->l.sel].id)) : NULL;
        return;
    }
    build_links(d, s);
    snprintf(buf, sizeof buf, "%14s %14s %7s  %s (Backspace: back)", "through call", "", "share",
             data_func_label(d, s->shown));
    crt_put(y, 0, buf, w, A_BOLD);
    listbox_scroll(&s->links, rows);
    for (int r = 0; r < rows && s->links.top + (uint32_t)r < s->links.n; r++) {
        uint32_t i = s->links.top + (uint32_t)r;
        const struct row *row = &s->links.rows[i];
        int attr = i == s->links.sel ? crt_attr(CRT_SELECTED) : (int)A_NORMAL;
        if (row->kind == LINK_HEADING) {
            uint32_t n = row->id == 0 ? s->ncallers : s->ncallees;
            snprintf(buf, sizeof buf, "%s (%u)%s", row->id == 0 ? "CALLERS" : "CALLEES", n,
                     n == 0 ? (row->id == 0 ? ": none, an outermost frame" : ": none, allocates itself") : "");
            crt_put(y + 1 + r, 0, buf, w, attr | A_BOLD);
            continue;
        }
        const struct calltree_link *lk = row->kind == LINK_CALLER ? &s->callers[row->id] : &s->callees[row->id];
        draw_row(c, y + 1 + r, w, attr, &lk->incl, NULL, 2, data_func_label(d, lk->func));
    }
}

static struct view_result key(struct view *v, struct view_ctx *c, enum action a, int page)
{
    struct funcs_view *s = (struct funcs_view *)v;
    struct data *d = c->d;
    sync(d, s);
    if (a == ACT_SORT_SELF) {
        data_set_cost(d, d->cost, !d->by_self);
        return VIEW_RESULT_HANDLED;
    }
    if (s->shown == CALLTREE_NONE) {
        if ((a == ACT_EXPAND || a == ACT_RIGHT) && s->l.n) {
            show_links(d, s, s->l.rows[s->l.sel].id);
            return VIEW_RESULT_HANDLED;
        }
        return listbox_move(&s->l, a, page) ? VIEW_RESULT_HANDLED : VIEW_RESULT_NONE;
    }
    if ((a == ACT_BACK || a == ACT_LEFT) && s->nhistory > 0) {
        /* Back to the function shown before, on the row of the one left. */
        uint32_t from = s->shown;
        show_links(d, s, s->history[--s->nhistory]);
        build_links(d, s);
        for (uint32_t i = 0; i < s->links.n; i++) {
            const struct row *r = &s->links.rows[i];
            if ((r->kind == LINK_CALLER && s->callers[r->id].func == from) ||
                (r->kind == LINK_CALLEE && s->callees[r->id].func == from)) {
                s->links.sel = i;
                break;
            }
        }
        return VIEW_RESULT_HANDLED;
    }
    if (a == ACT_BACK || a == ACT_LEFT) {
        uint32_t f = s->shown;
        s->shown = CALLTREE_NONE;
        drop_links(s);
        for (uint32_t i = 0; i < s->l.n; i++) {
            if (s->l.rows[i].id == f) {
                s->l.sel = i;
            }
        }
        return VIEW_RESULT_HANDLED;
    }
    if (a == ACT_EXPAND || a == ACT_RIGHT) {
        uint32_t f = selected(d, s);
        if (f != s->shown && f != CALLTREE_NONE) {
            xgrow((void **)&s->history, &s->history_cap, s->nhistory + 1, sizeof *s->history);
            s->history[s->nhistory++] = s->shown;
            show_links(d, s, f);
        }
        return VIEW_RESULT_HANDLED;
    }
    if (!listbox_move(&s->links, a, page)) {
        return VIEW_RESULT_NONE;
    }
    listbox_settle(&s->links, listbox_dir(a), link_row);
    return VIEW_RESULT_HANDLED;
}

/* ---- the view class ---- */

static void click(struct view *v, struct view_ctx *c, int line, int x)
{
    struct funcs_view *s = (struct funcs_view *)v;
    (void)c;
    (void)x;
    listbox_click(s->shown == CALLTREE_NONE ? &s->l : &s->links, line);
}

static const struct sym_frame *selected_frame(struct view *v, struct view_ctx *c, const char **name)
{
    uint32_t f = selected(c->d, (struct funcs_view *)v);
    const struct calltree_func *fn = calltree_func(c->d->tree, f);
    *name = NULL;
    if (!fn) {
        return NULL;
    }
    *name = data_func_name(c->d, f);
    return fn->frame;
}

struct name_arg {
    struct data *d;
    const struct listbox *l;
};

static const char *row_name(void *arg, uint32_t i)
{
    struct name_arg *a = arg;
    return data_func_name(a->d, a->l->rows[i].id);
}

/* The search looks at the list of functions (leaving a callers and
 * callees page), from the selection. */
static struct view_result search(struct view *v, struct view_ctx *c, int dir)
{
    struct funcs_view *s = (struct funcs_view *)v;
    struct listbox *l = &s->l;
    struct view_result r = VIEW_RESULT_NONE;
    s->shown = CALLTREE_NONE;
    selected(c->d, s);
    struct name_arg arg = {c->d, l};
    uint32_t i = search_step(l->n, l->sel, dir, c->search, row_name, &arg);
    if (i < l->n) {
        l->sel = i;
        r.flags = VIEW_FOUND;
    }
    return r;
}

static struct view *new_view(void)
{
    struct funcs_view *s = xcalloc(1, sizeof *s);
    s->shown = CALLTREE_NONE;
    s->generation = UINT64_MAX; /* no tree yet: the first sync() makes the state */
    return &s->base;
}

static void free_view(struct view *v)
{
    struct funcs_view *s = (struct funcs_view *)v;
    if (!s) {
        return;
    }
    listbox_release(&s->l);
    listbox_release(&s->links);
    free(s->selname);
    free(s->history);
    drop_links(s);
    free(s);
}

const struct view_class view_funcs = {
    .name = "Functions",
    .new = new_view,
    .free = free_view,
    .draw = draw,
    .key = key,
    .click = click,
    .selected_frame = selected_frame,
    .search = search,
};
