// SPDX-License-Identifier: MIT
/* The allocator time view: memprint --alloc-time's tables (per size class,
 * per function, per thread) for the whole run, one scrollable list of
 * lines. The figures are alloctime.c's; this file only lays them out. */
#define _GNU_SOURCE
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crt.h"
#include "listbox.h"
#include "util.h"
#include "view.h"

struct alloc_view {
    struct view base;
    struct listbox l; /* the tables' lines */
};

/* The tables as text, split into lines in place: returns the buffer (to
 * free) and the line starts in *lines (to free), *n lines. */
static char *table_lines(struct data *d, char ***lines, uint32_t *n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        *lines = NULL;
        *n = 0;
        return NULL;
    }
    if (!cost_recorded(&d->m->header, COST_TIME)) {
        fputs("allocator time: not recorded (memrec --time)\n", f);
    } else {
        const struct alloctime *t = data_alloc_time(d);
        if (t) {
            alloctime_print_text(t, f);
        } else {
            fputs("allocator time: the recording could not be read again\n", f);
        }
    }
    fclose(f);
    uint32_t count = 0;
    for (size_t i = 0; i < len; i++) {
        count += buf[i] == '\n';
    }
    *lines = xmalloc(((size_t)count + 1) * sizeof **lines);
    uint32_t k = 0;
    char *s = buf;
    for (char *nl = strchr(s, '\n'); nl; nl = strchr(s, '\n')) {
        *nl = 0;
        (*lines)[k++] = s;
        s = nl + 1;
    }
    *n = k;
    return buf;
}

static void draw(struct view *v, struct view_ctx *c, int y, int h, int w)
{
    struct listbox *l = &((struct alloc_view *)v)->l;
    char **lines;
    uint32_t n;
    char *buf = table_lines(c->d, &lines, &n);
    uint32_t old = l->n ? l->sel : 0;
    listbox_clear(l);
    for (uint32_t i = 0; i < n; i++) {
        listbox_push(l, i, 0, 0);
    }
    l->sel = old < l->n ? old : 0;
    crt_put(y, 0, "ALLOCATOR TIME (whole run; latency of each call in the allocator)", w, A_BOLD);
    int rows = h - 1;
    listbox_scroll(l, rows);
    for (int r = 0; r < rows && l->top + (uint32_t)r < l->n; r++) {
        uint32_t i = l->top + (uint32_t)r;
        int attr = i == l->sel ? crt_attr(CRT_SELECTED) : (int)A_NORMAL;
        if (attr != (int)A_NORMAL) {
            crt_fill(y + 1 + r, 0, w, ' ', attr);
        }
        /* The lines hold only digits, names of functions and ASCII. */
        crt_put(y + 1 + r, 0, lines[i], w, attr);
    }
    free(lines);
    free(buf);
}

static struct view_result key(struct view *v, struct view_ctx *c, enum action a, int page)
{
    (void)c;
    return listbox_move(&((struct alloc_view *)v)->l, a, page) ? VIEW_RESULT_HANDLED : VIEW_RESULT_NONE;
}

static void click(struct view *v, struct view_ctx *c, int line, int x)
{
    (void)c;
    (void)x;
    listbox_click(&((struct alloc_view *)v)->l, line);
}

static struct view *new_view(void)
{
    struct alloc_view *s = xcalloc(1, sizeof *s);
    return &s->base;
}

static void free_view(struct view *v)
{
    struct alloc_view *s = (struct alloc_view *)v;
    if (s) {
        listbox_release(&s->l);
        free(s);
    }
}

const struct view_class view_alloc = {
    .name = "Alloc time",
    .help = "Allocator time (memrec --time)",
    .new = new_view,
    .free = free_view,
    .draw = draw,
    .key = key,
    .click = click,
};
