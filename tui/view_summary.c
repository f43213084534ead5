// SPDX-License-Identifier: MIT
/* The summary view: memprint's summary lines (report_print_summary(), for
 * the window when one is set) and the first entries of each section of
 * memprint's report (sites.h), with their figure, unit and share; Enter
 * on one opens its allocation site in the bottom-up view. */
#define _GNU_SOURCE
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crt.h"
#include "escape.h"
#include "listbox.h"
#include "search.h"
#include "util.h"
#include "view.h"

enum { ROW_LINE = -1, ROW_HEADING = -2, ROW_BLANK = -3, ROW_NONE = -4 };

struct summary_view {
    struct view base;
    struct listbox l;
    /* The bottom-up site of each entry, found once per tree (a scan of
     * every site): of the tree of `generation`. */
    uint64_t generation;
    uint32_t nodes[COST_NTYPES][SITES_TOP];
    /* The restrictions of the last draw: a change starts from the top. */
    int seen, has_window;
    uint64_t from_ms, to_ms;
    struct filter filter;
    struct fold fold;
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
    "MOST MEMORY UNREACHABLE",
};

/* Where the row of `line` that starts at byte `from` ends, on a `w`-column
 * row: at the last space that lets it fit (bytes count as columns at
 * most), or at w bytes when it has none. */
static size_t wrap_end(const char *line, size_t from, int w)
{
    size_t n = strlen(line + from);
    if (w < 1 || n <= (size_t)w) {
        return from + n;
    }
    for (size_t k = (size_t)w; k > (size_t)w / 2; k--) {
        if (line[from + k] == ' ') {
            return from + k;
        }
    }
    return from + (size_t)w;
}

/* A summary line wider than the screen goes on over more rows, indented
 * by 2 (the RSS versus heap line is ~120 columns): each row's `depth` is
 * the byte of the line it starts at. */
#define WRAP_INDENT 2

static void build(struct data *d, struct listbox *l, int w)
{
    listbox_clear(l);
    for (uint32_t i = 0; i < d->nsummary; i++) {
        const char *line = d->summary[i];
        size_t at = 0, len = strlen(line);
        do {
            listbox_push(l, i, (uint32_t)at, ROW_LINE);
            at = wrap_end(line, at, at ? w - WRAP_INDENT : w);
            while (line[at] == ' ') {
                at++;
            }
        } while (at < len);
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
        uint32_t n = d->sites ? d->sites->n[c] : 0;
        for (uint32_t i = 0; i < n; i++) {
            listbox_push(l, i, (uint32_t)c, c);
        }
        if (n == 0) {
            listbox_push(l, 0, 0, ROW_NONE);
        }
    }
}

/* The bottom-up site of entry `e`: the allocation site of its innermost
 * frame's function; CALLTREE_NONE when the tree has none of that name. */
static uint32_t site_node(const struct data *d, const struct site *e)
{
    uint32_t n;
    const uint32_t *kids = calltree_children(d->tree, CALLTREE_BOTTOM_UP, 0, &n);
    for (uint32_t i = 0; i < n; i++) {
        const struct calltree_node *node = calltree_node(d->tree, CALLTREE_BOTTOM_UP, kids[i]);
        if (strcmp(calltree_func(d->tree, node->func)->name, e->name) == 0) {
            return kids[i];
        }
    }
    return CALLTREE_NONE;
}

static const struct site *row_site(const struct data *d, const struct row *r)
{
    return &d->sites->top[r->kind][r->id];
}

/* site_node() of the entry of row `r`, from the view's cache. */
static uint32_t row_node(struct summary_view *v, const struct data *d, const struct row *r)
{
    if (v->generation != d->generation) {
        v->generation = d->generation;
        for (int c = 0; c < COST_NTYPES; c++) {
            for (uint32_t i = 0; i < SITES_TOP; i++) {
                v->nodes[c][i] = d->sites && i < d->sites->n[c] ? site_node(d, &d->sites->top[c][i]) : CALLTREE_NONE;
            }
        }
    }
    return v->nodes[r->kind][r->id];
}

/* The unit column of an entry: bytes and times as memprint's report
 * writes them ("117.25 KiB", "1.20 ms"), counts by what they count. */
static const char *site_figure(char *buf, size_t cap, enum cost_type c, uint64_t v)
{
    switch (c) {
    case COST_CALLS: snprintf(buf, cap, "calls"); break;
    case COST_TEMPORARY: snprintf(buf, cap, "temporary"); break;
    case COST_TIME: util_ns(buf, cap, v); break;
    case COST_GROWTH: {
        char b[32];
        snprintf(buf, cap, "%s/s", util_bytes(b, sizeof b, v));
        break;
    }
    default: util_bytes(buf, cap, v); break;
    }
    return buf;
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
    struct summary_view *sv = (struct summary_view *)v;
    /* The selection stays on its entry (cost and rank) across redraws and
     * reloads, whatever the lines above it wrap to; a new window, filter
     * or folding starts again from the first entry, the lines on screen. */
    int changed = !sv->seen || sv->has_window != d->has_window || sv->from_ms != d->from_ms || sv->to_ms != d->to_ms ||
                  memcmp(&sv->filter, &d->filter, sizeof d->filter) != 0 ||
                  memcmp(&sv->fold, &d->fold, sizeof d->fold) != 0;
    sv->seen = 1;
    sv->has_window = d->has_window;
    sv->from_ms = d->from_ms;
    sv->to_ms = d->to_ms;
    sv->filter = d->filter;
    sv->fold = d->fold;
    int kind = l->n ? l->rows[l->sel].kind : ROW_NONE;
    uint32_t id = l->n ? l->rows[l->sel].id : 0;
    build(d, l, w);
    l->sel = 0;
    if (changed) {
        l->top = 0;
    } else {
        for (uint32_t i = 0; i < l->n && kind >= 0; i++) {
            if (l->rows[i].kind == kind && l->rows[i].id == id) {
                l->sel = i;
                break;
            }
        }
    }
    /* The selection goes over the sites only: the lines are read, not chosen. */
    listbox_settle(l, 1, site_row);
    crt_put(y, 0, "SUMMARY (Enter on a site: open it in the bottom-up view)", w, A_BOLD);
    int rows = h - 1;
    listbox_scroll(l, rows);
    for (int r = 0; r < rows && l->top + (uint32_t)r < l->n; r++) {
        const struct row *row = &l->rows[l->top + (uint32_t)r];
        int yy = y + 1 + r;
        int attr = l->top + (uint32_t)r == l->sel ? crt_attr(CRT_SELECTED) : (int)A_NORMAL;
        char buf[512];
        switch (row->kind) {
        case ROW_LINE: {
            /* This row's part of the line: up to where the next row starts. */
            const char *line = d->summary[row->id];
            size_t end = wrap_end(line, row->depth, row->depth ? w - WRAP_INDENT : w);
            int x = row->depth ? WRAP_INDENT : 0;
            snprintf(buf, sizeof buf, "%.*s", (int)(end - row->depth), line + row->depth);
            crt_put(yy, x, buf, w - x, attr);
            break;
        }
        case ROW_HEADING: crt_put(yy, 0, headings[row->id], w, attr | A_BOLD); break;
        case ROW_BLANK: break;
        case ROW_NONE: crt_put(yy, 0, "  (none)", w, attr); break;
        default: {
            const struct site *e = row_site(d, row);
            if (attr != (int)A_NORMAL) {
                crt_fill(yy, 0, w, ' ', attr);
            }
            char fig[32];
            snprintf(buf, sizeof buf, "  %14llu %-11s %5.1f%%  ", (unsigned long long)e->value,
                     site_figure(fig, sizeof fig, (enum cost_type)row->kind, e->value), e->share);
            int x = crt_put(yy, 0, buf, w, attr);
            uint32_t node = row_node((struct summary_view *)v, d, row);
            const char *label = node != CALLTREE_NONE ? data_node_label(d, CALLTREE_BOTTOM_UP, node) : e->name;
            /* Entries are stacks: two of one function differ by the line of their call. */
            char *text = NULL;
            if (e->frame.file && e->frame.line) {
                const char *base = strrchr(e->frame.file, '/');
                char *file = esc_text_for(base ? base + 1 : e->frame.file, !d->utf8);
                if (asprintf(&text, "%s at %s:%u", label, file, e->frame.line) < 0) {
                    text = NULL;
                }
                free(file);
            }
            crt_put_name(yy, x, text ? text : label, 0, w - x, attr, c->search, d->utf8 ? "\xe2\x80\xa6" : ">");
            free(text);
            break;
        }
        }
    }
}

/* Enter on a site: the bottom-up view opens it. */
static struct view_result key(struct view *v, struct view_ctx *c, enum action a, int page)
{
    struct listbox *l = &((struct summary_view *)v)->l;
    if (a == ACT_EXPAND || a == ACT_RIGHT) {
        struct view_result r = VIEW_RESULT_HANDLED;
        if (l->n && selectable(l, l->sel)) {
            r.flags |= VIEW_GOTO;
            r.o = CALLTREE_BOTTOM_UP;
            r.node = row_node((struct summary_view *)v, c->d, &l->rows[l->sel]);
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
    /* The entry's own allocation call: its stack's innermost frame. */
    const struct site *e = row_site(c->d, &l->rows[l->sel]);
    uint32_t node = row_node((struct summary_view *)v, c->d, &l->rows[l->sel]);
    *name = node != CALLTREE_NONE ? data_node_name(c->d, CALLTREE_BOTTOM_UP, node) : e->name;
    return &e->frame;
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
    s->generation = UINT64_MAX; /* no tree yet */
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
