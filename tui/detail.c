// SPDX-License-Identifier: MIT
/* The detail of a frame, drawn over the lower part of a view: the full
 * function name, file:line, module, whether it is inlined, and the source
 * lines around that line when the file can be read. Everything taken
 * from the recording or the source file is escaped before it is shown. */
#define _GNU_SOURCE
#include "detail.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crt.h"
#include "escape.h"
#include "symbolize.h"
#include "util.h"

#define CONTEXT 3

/* Write `s` over as many rows as it needs (at most max_rows); returns rows used. */
static int put_wrapped(int y, int x, const char *s, int w, int max_rows, int attr)
{
    int rows = 0;
    while (rows < max_rows) {
        int used = crt_put(y + rows, x, s, w, attr);
        rows++;
        /* Skip what was written: count bytes for `used` columns. */
        size_t skip = 0;
        int cols = 0;
        while (s[skip] && cols < used) {
            size_t len = 1;
            while ((s[skip + len] & 0xc0) == 0x80) {
                len++;
            }
            skip += len;
            cols++;
        }
        s += skip;
        if (!*s || used == 0) {
            break;
        }
    }
    return rows;
}

/* The source lines around the frame's line, read once per file and line:
 * the screen redraws the overlay every fraction of a second, and a source
 * on a slow or network disk must not be read at every draw. One frame is
 * kept, the one shown last (the overlay shows one at a time). */
struct source {
    char *file; /* NULL: nothing read yet */
    unsigned line;
    int utf8;
    int readable;
    unsigned first, n; /* the number of lines[0], how many */
    char *lines[2 * CONTEXT + 1]; /* escaped, tabs as spaces */
};

static struct source cached;

static void source_read(struct source *s, FILE *f)
{
    unsigned lo = s->line > CONTEXT ? s->line - CONTEXT : 1;
    char *line = NULL;
    size_t cap = 0;
    unsigned n = 0;
    s->first = lo;
    while (s->n < 2 * CONTEXT + 1 && getline(&line, &cap, f) > 0) {
        n++;
        if (n < lo) {
            continue;
        }
        if (n > s->line + CONTEXT) {
            break;
        }
        line[strcspn(line, "\n")] = 0;
        /* Tabs to spaces: a tab would be escaped as \x09. */
        for (char *p = line; *p; p++) {
            if (*p == '\t') {
                *p = ' ';
            }
        }
        s->lines[s->n++] = esc_text_for(line, !s->utf8);
    }
    free(line);
}

static const struct source *source_of(const struct sym_frame *fr, int utf8)
{
    struct source *s = &cached;
    if (s->file && fr->file && strcmp(s->file, fr->file) == 0 && s->line == fr->line && s->utf8 == utf8) {
        return s;
    }
    free(s->file);
    for (unsigned i = 0; i < s->n; i++) {
        free(s->lines[i]);
    }
    memset(s, 0, sizeof *s);
    s->file = xstrdup(fr->file ? fr->file : "");
    s->line = fr->line;
    s->utf8 = utf8;
    FILE *f = fr->file && fr->line ? fopen(fr->file, "r") : NULL;
    if (f) {
        s->readable = 1;
        source_read(s, f);
        fclose(f);
    }
    return s;
}

void detail_draw(const struct sym_frame *fr, const char *name, int utf8, int y, int h, int w)
{
    for (int r = 0; r < h; r++) {
        crt_fill(y + r, 0, w, ' ', (int)A_NORMAL);
    }
    crt_fill(y, 0, w, '-', A_BOLD);
    crt_put(y, 2, " FRAME DETAIL (d closes) ", w - 2, A_BOLD);
    if (!fr) {
        crt_put(y + 1, 0, "no frame selected", w, (int)A_NORMAL);
        return;
    }
    int row = y + 1;
    int end = y + h;
    char buf[512];
    crt_put(row, 0, "function: ", w, A_BOLD);
    row += put_wrapped(row, 10, name ? name : "?", w - 10, 3, (int)A_NORMAL);
    char *file = esc_text_for(fr->file, !utf8);
    if (row < end) {
        snprintf(buf, sizeof buf, "%s:%u", fr->file ? file : "(unknown)", fr->line);
        crt_put(row, 0, "file:     ", w, A_BOLD);
        row += put_wrapped(row, 10, buf, w - 10, 2, (int)A_NORMAL);
    }
    if (row < end) {
        char *mod = esc_text_for(fr->module, !utf8);
        snprintf(buf, sizeof buf, "%s+0x%llx", fr->module ? mod : "(no module)", (unsigned long long)fr->module_offset);
        free(mod);
        crt_put(row, 0, "module:   ", w, A_BOLD);
        row += put_wrapped(row, 10, buf, w - 10, 2, (int)A_NORMAL);
    }
    if (row < end) {
        crt_put(row, 0, "inlined:  ", w, A_BOLD);
        crt_put(row++, 10,
                fr->inlined ? "yes: expanded into its caller at this address" : "no: a real function's frame", w - 10,
                (int)A_NORMAL);
    }
    const struct source *src = source_of(fr, utf8);
    if (!src->readable) {
        if (row < end) {
            crt_put(row, 0, fr->file ? "source:   not readable here" : "source:   no line information", w,
                    (int)A_NORMAL);
        }
        free(file);
        return;
    }
    for (unsigned i = 0; i < src->n && row < end; i++, row++) {
        unsigned n = src->first + i;
        int attr = n == fr->line ? A_BOLD : (int)A_NORMAL;
        snprintf(buf, sizeof buf, "%s%6u  ", n == fr->line ? ">" : " ", n);
        int x = crt_put(row, 0, buf, w, attr);
        crt_put(row, x, src->lines[i], w - x, attr);
    }
    free(file);
}
