// SPDX-License-Identifier: MIT
/* The allocator time view: memprint --alloc-time's tables (per size class,
 * per function, per thread) for the whole run, one scrollable list of
 * lines, laid out again for the screen's width. The figures are
 * alloctime.c's; this file only lays them out. */
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
    int hoff; /* columns of the tables scrolled out on the left (< >) */
};

/* < and > scroll a table wider than the screen by this many columns. */
#define HSCROLL_STEP 8
/* Columns of a table at most (the thread table has 10). */
#define MAX_CELLS 16

/* The cells of a table row ("  name   calls   total ..."): split at runs
 * of two spaces or more, in place; returns how many. */
static int split_cells(char *line, char **cells)
{
    int n = 0;
    char *p = line;
    while (*p == ' ') {
        p++;
    }
    while (*p && n < MAX_CELLS) {
        cells[n++] = p;
        char *end = strstr(p, "  ");
        if (!end) {
            break;
        }
        *end = 0;
        p = end + 2;
        while (*p == ' ') {
            p++;
        }
    }
    return n;
}

/* A new line, in a growing array. */
static void push_line(char ***out, uint32_t *n, size_t *cap, char *line)
{
    xgrow((void **)out, cap, (size_t)*n + 1, sizeof **out);
    (*out)[(*n)++] = line;
}

/* memprint's tables laid out again for `w` columns when they do not fit
 * as memprint prints them: the columns as narrow as their widest cell,
 * two spaces apart, one when that is still too wide (the p99 and max columns then fit 80 columns; the thread table's
 * last ones scroll); a text line wider than the screen goes on over more
 * rows, indented by 2. Returns the new lines (to free each, then the
 * array), *is_table set per line. */
static char **layout(char **in, uint32_t n, int w, uint32_t *nout, uint8_t **is_table)
{
    char **out = NULL;
    uint8_t *tab = NULL;
    size_t cap = 0, tcap = 0;
    uint32_t k = 0;
    for (uint32_t i = 0; i < n;) {
        if (strncmp(in[i], "  ", 2) != 0) {
            /* Text: wrapped at a space. */
            const char *line = in[i++];
            size_t len = strlen(line), at = 0;
            do {
                int room = at ? w - 2 : w;
                size_t end = len;
                if (room > 0 && len - at > (size_t)room) {
                    end = at + (size_t)room;
                    for (size_t b = end; b > at + (size_t)room / 2; b--) {
                        if (line[b] == ' ') {
                            end = b;
                            break;
                        }
                    }
                }
                char *row;
                if (asprintf(&row, "%s%.*s", at ? "  " : "", (int)(end - at), line + at) < 0) {
                    die("out of memory");
                }
                xgrow((void **)&tab, &tcap, (size_t)k + 1, 1);
                tab[k] = 0;
                push_line(&out, &k, &cap, row);
                at = end;
                while (line[at] == ' ') {
                    at++;
                }
            } while (at < len);
            continue;
        }
        /* A table: the indented lines up to the next line that is not. */
        uint32_t first = i;
        while (i < n && strncmp(in[i], "  ", 2) == 0) {
            i++;
        }
        uint32_t rows = i - first;
        /* A table that fits is shown as memprint prints it. */
        int fits = 1;
        for (uint32_t r = first; r < i && fits; r++) {
            fits = (int)strlen(in[r]) <= w;
        }
        if (fits) {
            for (uint32_t r = first; r < i; r++) {
                xgrow((void **)&tab, &tcap, (size_t)k + 1, 1);
                tab[k] = 1;
                push_line(&out, &k, &cap, xstrdup(in[r]));
            }
            continue;
        }
        char **copies = xcalloc(rows, sizeof *copies);
        char *(*cells)[MAX_CELLS] = xcalloc(rows, sizeof *cells);
        int *ncells = xcalloc(rows, sizeof *ncells);
        int width[MAX_CELLS] = {0}, ncols = 0;
        for (uint32_t r = 0; r < rows; r++) {
            copies[r] = xstrdup(in[first + r]);
            ncells[r] = split_cells(copies[r], cells[r]);
            ncols = ncells[r] > ncols ? ncells[r] : ncols;
            for (int c = 0; c < ncells[r]; c++) {
                int len = (int)strlen(cells[r][c]);
                width[c] = len > width[c] ? len : width[c];
            }
        }
        int total = 2;
        for (int c = 0; c < ncols; c++) {
            total += width[c] + (c ? 2 : 0);
        }
        int gap = total <= w ? 2 : 1;
        for (uint32_t r = 0; r < rows; r++) {
            char *row = NULL;
            size_t len = 0;
            FILE *f = open_memstream(&row, &len);
            if (!f) {
                die("out of memory");
            }
            fputs("  ", f);
            for (int c = 0; c < ncells[r]; c++) {
                /* The first column (names) to the left, the figures to the right. */
                fprintf(f, c ? "%*s%*s" : "%*s%-*s", c ? gap : 0, "", width[c], cells[r][c]);
            }
            fclose(f);
            xgrow((void **)&tab, &tcap, (size_t)k + 1, 1);
            tab[k] = 1;
            push_line(&out, &k, &cap, row);
            free(copies[r]);
        }
        free(copies);
        free(cells);
        free(ncells);
    }
    *nout = k;
    *is_table = tab;
    return out;
}

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
    struct alloc_view *s = (struct alloc_view *)v;
    struct listbox *l = &s->l;
    char **text;
    uint32_t ntext;
    char *buf = table_lines(c->d, &text, &ntext);
    uint32_t n;
    uint8_t *is_table;
    char **lines = layout(text, ntext, w, &n, &is_table);
    free(text);
    free(buf);
    uint32_t old = l->n ? l->sel : 0;
    listbox_clear(l);
    int widest = 0;
    for (uint32_t i = 0; i < n; i++) {
        listbox_push(l, i, 0, 0);
        int len = (int)strlen(lines[i]);
        widest = is_table[i] && len > widest ? len : widest;
    }
    l->sel = old < l->n ? old : 0;
    if (s->hoff > widest - w + HSCROLL_STEP) {
        s->hoff = widest > w ? widest - w + HSCROLL_STEP : 0;
    }
    if (s->hoff < 0 || widest <= w) {
        s->hoff = 0;
    }
    char head[160];
    snprintf(head, sizeof head, "ALLOCATOR TIME (whole run; latency of each call)%s",
             widest > w ? (s->hoff ? "  < >: from column" : "  > for more columns") : "");
    int hx = crt_put(y, 0, head, w, A_BOLD);
    if (s->hoff) {
        char col[16];
        snprintf(col, sizeof col, " %d", s->hoff + 1);
        crt_put(y, hx, col, w - hx, A_BOLD);
    }
    int rows = h - 1;
    listbox_scroll(l, rows);
    for (int r = 0; r < rows && l->top + (uint32_t)r < l->n; r++) {
        uint32_t i = l->top + (uint32_t)r;
        int attr = i == l->sel ? crt_attr(CRT_SELECTED) : (int)A_NORMAL;
        if (attr != (int)A_NORMAL) {
            crt_fill(y + 1 + r, 0, w, ' ', attr);
        }
        /* The lines hold only digits, names of functions and ASCII; the
         * tables scroll, the text does not. */
        const char *line = lines[i];
        size_t len = strlen(line);
        size_t skip = is_table[i] ? (size_t)s->hoff : 0;
        crt_put(y + 1 + r, 0, skip < len ? line + skip : "", w, attr);
    }
    for (uint32_t i = 0; i < n; i++) {
        free(lines[i]);
    }
    free(lines);
    free(is_table);
}

static struct view_result key(struct view *v, struct view_ctx *c, enum action a, int page)
{
    struct alloc_view *s = (struct alloc_view *)v;
    (void)c;
    if (a == ACT_SCROLL_LEFT || a == ACT_SCROLL_RIGHT) {
        s->hoff += a == ACT_SCROLL_RIGHT ? HSCROLL_STEP : -HSCROLL_STEP; /* draw() bounds it */
        return VIEW_RESULT_HANDLED;
    }
    return listbox_move(&s->l, a, page) ? VIEW_RESULT_HANDLED : VIEW_RESULT_NONE;
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
