// SPDX-License-Identifier: MIT
/* The event loop: title, view tabs, status line, prompts, the help and
 * detail overlays, live refresh. It knows the views only through the
 * table of views.c and the operations of view.h: each view draws its body
 * and takes the keys it knows, and says in a view_result what the screen
 * is to do next (switch view, status line, window...). */
#define _GNU_SOURCE
#include "screen.h"

#include <ctype.h>
#include <curses.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "action.h"
#include "crt.h"
#include "detail.h"
#include "editor.h"
#include "escape.h"
#include "help.h"
#include "util.h"
#include "view.h"

struct screen {
    struct data *d;
    struct view **views; /* one per entry of view_table, same order */
    size_t cur; /* the view shown */
    char search[128];
    int help;
    char **help_text; /* help_new()'s lines */
    int help_n, help_top; /* how many; the first shown */
    int detail; /* frame detail shown over the view */
    char status[256];
    /* Geometry of the last draw (mouse). */
    int body_y, body_h, width;
};

static const char *const cost_titles[COST_NTYPES] = {
    "calls to allocation functions",
    "temporary allocations",
    "bytes live at the heap peak",
    "bytes leaked (live at the end)",
    "bytes allocated",
    "bytes mapped at the mapped peak",
    "ns in the allocator",
    "bytes/s of steady growth",
    "bytes leaked unreachable (no pointer left at the end)",
};

/* The help's lines are wrapped below this width: every line fits an
 * 80-column terminal. */
#define HELP_WIDTH 80

static struct view_ctx ctx_of(struct screen *scr)
{
    struct view_ctx c = {scr->d, scr->search};
    return c;
}

/* The view that selects nodes of tree `o` (the first in the table);
 * view_count when none does. */
static size_t tree_view(const struct screen *scr, enum calltree_orient o)
{
    for (size_t i = 0; i < view_count; i++) {
        const struct view_class *cls = scr->views[i]->cls;
        if (cls->select_node && cls->orient == o) {
            return i;
        }
    }
    return view_count;
}

/* ---- drawing ---- */

/* The tab of view i on a w-column row: " N name ". When every tab does
 * not fit, the current one keeps its name and the others' names are cut
 * to the longest length that lets them all fit (the shorter names stay
 * whole; down to the number alone), so that every number stays on screen
 * and a click finds its tab. */
static int tab_label(const struct screen *scr, size_t i, int w, char *buf, size_t cap)
{
    int full = 0;
    for (size_t k = 0; k < view_count; k++) {
        full += snprintf(NULL, 0, " %zu %s ", k + 1, view_table[k]->name);
    }
    if (full <= w || i == scr->cur || view_count < 2) {
        return snprintf(buf, cap, " %zu %s ", i + 1, view_table[i]->name);
    }
    int left = w - snprintf(NULL, 0, " %zu %s ", scr->cur + 1, view_table[scr->cur]->name);
    int fixed = 0;
    for (size_t k = 0; k < view_count; k++) {
        fixed += k == scr->cur ? 0 : snprintf(NULL, 0, " %zu ", k + 1) + 1;
    }
    /* The longest length every other name can keep: the shorter names
     * stay whole, the longer ones are cut to it. */
    int share = 0;
    for (int len = 1;; len++) {
        int used = 0, longer = 0;
        for (size_t k = 0; k < view_count; k++) {
            int n = (int)strlen(view_table[k]->name);
            if (k != scr->cur) {
                used += n < len ? n : len;
                longer |= n > len;
            }
        }
        if (used > left - fixed || !longer) {
            share = used > left - fixed ? len - 1 : len;
            break;
        }
    }
    if (share < 1) {
        return snprintf(buf, cap, " %zu ", i + 1);
    }
    return snprintf(buf, cap, " %zu %.*s ", i + 1, share, view_table[i]->name);
}

static void draw_title(struct screen *scr, int w)
{
    char buf[512];
    crt_fill(0, 0, w, ' ', crt_attr(CRT_TITLE));
    char *path = esc_text_for(scr->d->path, !scr->d->utf8);
    /* Sampled: the figures per call stack are estimates, marked '~' as memprint marks them. */
    snprintf(buf, sizeof buf, "memtui  %s  |  %s  |  cost: %s (%s%s)", path, view_table[scr->cur]->name,
             cost_name(scr->d->cost), scr->d->m->sample_rate ? "~" : "", cost_titles[scr->d->cost]);
    free(path);
    crt_put(0, 0, buf, w, crt_attr(CRT_TITLE));
    if (data_live(scr->d)) {
        /* LIVE while the file grows (data_refresh() looks every second);
         * "reloading" while new figures are read in the background. */
        int growing = time(NULL) - scr->d->last_growth < 5;
        const char *live = data_reloading(scr->d) ? (growing ? " reloading  LIVE " : " reloading  NO END RECORD ")
                                                  : (growing ? " LIVE " : " NO END RECORD ");
        int lw = (int)strlen(live);
        if (w > lw) {
            crt_put(0, w - lw, live, lw, crt_attr(CRT_LIVE));
        }
    }
    int x = 0;
    for (size_t i = 0; i < view_count && x < w; i++) {
        tab_label(scr, i, w, buf, sizeof buf);
        x += crt_put(1, x, buf, w - x, i == scr->cur ? crt_attr(CRT_SELECTED) : (int)A_NORMAL);
    }
}

static int draw_window_line(struct screen *scr, int y, int w)
{
    const struct data *d = scr->d;
    if (!d->has_window) {
        return 0;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "WINDOW %.3f-%.3f s (x clears): made in it only; %llu older %s freed in it",
             (double)d->from_ms / 1000.0, (double)d->to_ms / 1000.0, (unsigned long long)d->win->earlier_freed_blocks,
             util_plural(d->win->earlier_freed_blocks, "block", "blocks"));
    crt_fill(y, 0, w, ' ', crt_attr(CRT_WINDOW));
    crt_put(y, 0, buf, w, crt_attr(CRT_WINDOW));
    return 1;
}

/* The filter's and the folding's lines under the window's, when set;
 * returns how many. */
static int draw_filter_line(struct screen *scr, int y, int w)
{
    const struct data *d = scr->d;
    char buf[512];
    int n = 0;
    if (d->filter.on) {
        char *text = esc_text_for(d->filter.text, !d->utf8);
        snprintf(buf, sizeof buf, "FILTER %s (F, then Enter on an empty line, clears)", text);
        free(text);
        crt_fill(y, 0, w, ' ', crt_attr(CRT_WINDOW));
        crt_put(y, 0, buf, w, crt_attr(CRT_WINDOW));
        n++;
    }
    if (d->fold.on) {
        char *text = esc_text_for(d->fold.re, !d->utf8);
        snprintf(buf, sizeof buf, "FOLDED: %u %s counted at the wrapper's caller (known wrappers%s%s%s; W, - stops)",
                 d->folded, util_plural(d->folded, "stack", "stacks"), text[0] ? " and '" : "", text,
                 text[0] ? "'" : "");
        free(text);
        crt_fill(y + n, 0, w, ' ', crt_attr(CRT_WINDOW));
        crt_put(y + n, 0, buf, w, crt_attr(CRT_WINDOW));
        n++;
    }
    return n;
}

/* Rows of help text on an h-row screen: the title above, the scroll
 * line below. */
static int help_rows(int h)
{
    return h - 2 > 1 ? h - 2 : 1;
}

/* Keep the help's first line shown within its lines. */
static void help_clamp(struct screen *scr, int h)
{
    int last = scr->help_n - help_rows(h);
    if (scr->help_top > last) {
        scr->help_top = last;
    }
    if (scr->help_top < 0) {
        scr->help_top = 0;
    }
}

static void draw_help(struct screen *scr, int h, int w)
{
    char **lines = scr->help_text;
    int rows = help_rows(h);
    help_clamp(scr, h);
    erase();
    crt_fill(0, 0, w, ' ', crt_attr(CRT_TITLE));
    crt_put(0, 0, "memtui help: every key (any key but a move closes this screen)", w, crt_attr(CRT_TITLE));
    for (int r = 0; r < rows && scr->help_top + r < scr->help_n; r++) {
        const char *line = lines[scr->help_top + r];
        crt_put(r + 1, 0, line, w, line[0] != ' ' ? A_BOLD : (int)A_NORMAL);
    }
    int shown_to = scr->help_top + rows < scr->help_n ? scr->help_top + rows : scr->help_n;
    char buf[128];
    snprintf(buf, sizeof buf, "lines %d-%d of %d%s", scr->help_top + 1, shown_to, scr->help_n,
             shown_to < scr->help_n ? ": Down, PgDn or End for more" : (scr->help_top > 0 ? ": Up, PgUp or Home" : ""));
    crt_put(h - 1, 0, buf, w, A_BOLD);
}

/* A key while the help is shown: a move scrolls it, any other key closes it. */
static void help_key(struct screen *scr, int key)
{
    int page = help_rows(LINES);
    switch (action_of_key(key)) {
    case ACT_UP: scr->help_top--; break;
    case ACT_DOWN: scr->help_top++; break;
    case ACT_PGUP: scr->help_top -= page; break;
    case ACT_PGDN: scr->help_top += page; break;
    case ACT_HOME: scr->help_top = 0; break;
    case ACT_END: scr->help_top = scr->help_n; break;
    default: scr->help = 0; return;
    }
    help_clamp(scr, LINES);
}

static void draw(struct screen *scr, const char *prompt, const char *input)
{
    int h = LINES, w = COLS;
    erase();
    if (scr->help) {
        draw_help(scr, h, w);
        refresh();
        return;
    }
    draw_title(scr, w);
    int y = 2 + draw_window_line(scr, 2, w);
    y += draw_filter_line(scr, y, w);
    int body_h = h - y - 1;
    scr->body_y = y;
    scr->body_h = body_h;
    scr->width = w;
    struct view *v = scr->views[scr->cur];
    struct view_ctx c = ctx_of(scr);
    v->cls->draw(v, &c, y, body_h, w);
    if (scr->detail && v->cls->selected_frame) {
        const char *name;
        const struct sym_frame *fr = v->cls->selected_frame(v, &c, &name);
        int dh = body_h / 2 > 9 ? body_h / 2 : (body_h > 9 ? 9 : body_h);
        detail_draw(fr, name, scr->d->utf8, y + body_h - dh, dh, w);
    }
    char buf[512];
    if (prompt) {
        snprintf(buf, sizeof buf, "%s%s", prompt, input);
        char *e = esc_text_for(buf, !scr->d->utf8);
        crt_put(h - 1, 0, e, w, A_BOLD);
        free(e);
    } else if (scr->status[0]) {
        crt_put(h - 1, 0, scr->status, w, A_BOLD);
    } else if (scr->search[0]) {
        /* The search first, its term cut with an ellipsis: a long one
         * would push the keys out at 80 columns. */
        const char *more = scr->d->utf8 ? "\xe2\x80\xa6" : ">";
        int x = crt_put(h - 1, 0, "n/N:next/prev '", w, (int)A_NORMAL);
        int room = w - x - (int)strlen("'  ?:help  q:quit  /:search");
        x += crt_put_name(h - 1, x, scr->search, 0, room > 8 ? room : 8, (int)A_NORMAL, NULL, more);
        crt_put(h - 1, x, "'  ?:help  q:quit  /:search  Tab:view  c:cost  d:detail", w - x, (int)A_NORMAL);
    } else {
        crt_put(h - 1, 0, "?:help  q:quit  Tab:view  c:cost  d:detail  /:search", w, (int)A_NORMAL);
    }
    refresh();
}

/* ---- prompts ---- */

/* Read a line on the status line; returns 1 on Enter, 0 on Esc. */
static int prompt_line(struct screen *scr, const char *prompt, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    for (;;) {
        draw(scr, prompt, buf);
        int c = getch();
        if (crt_quit_signal) {
            return 0;
        }
        if (c == ERR || c == KEY_RESIZE) {
            continue;
        }
        if (c == SCREEN_KEY_DUMP) {
            ungetch(c);
            return 1;
        }
        if (c == 27) {
            return 0;
        }
        if (c == '\r' || c == '\n' || c == KEY_ENTER) {
            return 1;
        }
        if (c == KEY_BACKSPACE || c == 127 || c == 8) {
            if (n > 0) {
                buf[--n] = 0;
            }
            continue;
        }
        if (c >= 0x20 && c < 0x7f && n + 1 < cap) {
            buf[n++] = (char)c;
            buf[n] = 0;
        }
    }
}

/* A one-line message on the status line until the next key (`fmt` has one %s). */
static void set_status(struct screen *scr, const char *fmt, const char *arg)
{
    snprintf(scr->status, sizeof scr->status, fmt, arg);
}

/* Restrict every view to [from, to) ms (on = 0: clear); errors go to the status line. */
static void apply_window(struct screen *scr, int on, uint64_t from, uint64_t to)
{
    /* One more pass over the file: say so while the screen waits. */
    set_status(scr, "%s", on ? "computing the window (one more pass over the recording)..." : "");
    draw(scr, NULL, NULL);
    scr->status[0] = 0;
    int e = 0;
    int rc = data_set_window(scr->d, on, from, to, &e);
    if (rc < 0) {
        set_status(scr, "cannot compute the window: %s", rc == MEMFMT_E_IO ? strerror(e) : memfmt_strerror(rc));
    }
}

/* One end of a typed window: a number of milliseconds, or of seconds
 * with an s after it ("1.5", "0.25s"); *end past its last character.
 * -1 when it is none. */
static double window_end(const char *s, const char **end)
{
    char *e;
    if (!isdigit((unsigned char)*s) && *s != '.') {
        return -1;
    }
    double v = strtod(s, &e);
    if (e == s || !isfinite(v) || v < 0) {
        return -1;
    }
    if (*e == 's') {
        v *= 1000.0;
        e++;
    } else if (e[0] == 'm' && e[1] == 's') {
        e += 2;
    }
    *end = e;
    return v;
}

/* "FROM-TO" in milliseconds (or seconds, with s), within the run: the
 * window starts before the run's end (the series' last point), and one
 * that goes past the end goes through it. Fractions of a millisecond
 * widen it to whole ones, the time records' resolution. */
static void enter_window(struct screen *scr)
{
    char buf[64];
    if (!prompt_line(scr, "window in ms, FROM-TO (or in seconds: 0.5s-1.5s): ", buf, sizeof buf)) {
        return;
    }
    const char *p = buf;
    double from = window_end(p, &p);
    double to = from >= 0 && *p == '-' ? window_end(p + 1, &p) : -1;
    if (from < 0 || to < 0 || *p || from >= to) {
        set_status(scr, "not a window: '%s' (expected FROM-TO in milliseconds, FROM < TO, or 0.5s-1.5s)", buf);
        return;
    }
    const struct timeseries *ts = data_series(scr->d);
    uint64_t run_end = ts ? ts->end_ms : UINT64_MAX - 1;
    if (from > (double)run_end) {
        snprintf(scr->status, sizeof scr->status, "no window: '%s' starts after the run's end at %.3f s (%llu ms)", buf,
                 (double)run_end / 1000.0, (unsigned long long)run_end);
        return;
    }
    uint64_t lo = (uint64_t)floor(from);
    uint64_t hi = to > (double)run_end ? run_end + 1 : (uint64_t)ceil(to);
    apply_window(scr, 1, lo, hi > lo ? hi : lo + 1);
}

/* F: a filter typed on the status line (filter.h), applied to every view. */
static void enter_filter(struct screen *scr)
{
    char buf[256], err[256];
    if (!prompt_line(scr, "filter: [function|file|module] [!]REGEX, or thread N (empty: none): ", buf, sizeof buf)) {
        return;
    }
    struct filter f;
    if (filter_parse(buf, &f, err, sizeof err) < 0) {
        set_status(scr, "%s", err);
        return;
    }
    set_status(scr, "%s", "computing the filter (one more pass over the recording)...");
    draw(scr, NULL, NULL);
    scr->status[0] = 0;
    int e = 0;
    int rc = data_set_filter(scr->d, &f, &e, err, sizeof err);
    if (rc == MEMFMT_E_INVALID) {
        set_status(scr, "%s", err);
    } else if (rc < 0) {
        set_status(scr, "cannot compute the filter: %s", rc == MEMFMT_E_IO ? strerror(e) : memfmt_strerror(rc));
    }
}

/* W: fold the known allocator wrappers (and the typed expression's
 * functions) into their callers in every view; "-" stops. */
static void enter_fold(struct screen *scr)
{
    char buf[256], err[256];
    if (!prompt_line(scr, "fold wrappers: Enter: the known ones; REGEX: and these; -: stop folding: ", buf,
                     sizeof buf)) {
        return;
    }
    struct fold f;
    memset(&f, 0, sizeof f);
    f.on = strcmp(buf, "-") != 0;
    if (f.on) {
        snprintf(f.re, sizeof f.re, "%s", buf);
    }
    set_status(scr, "%s", "folding the wrappers (one more pass over the recording)...");
    draw(scr, NULL, NULL);
    scr->status[0] = 0;
    int e = 0;
    int rc = data_set_fold(scr->d, &f, &e, err, sizeof err);
    if (rc == MEMFMT_E_INVALID) {
        set_status(scr, "%s", err);
    } else if (rc < 0) {
        set_status(scr, "cannot fold the wrappers: %s", rc == MEMFMT_E_IO ? strerror(e) : memfmt_strerror(rc));
    }
}

/* e: the selected frame's source file at its line in the user's editor. */
static void edit_source(struct screen *scr)
{
    struct view *v = scr->views[scr->cur];
    struct view_ctx c = ctx_of(scr);
    const char *name = NULL;
    const struct sym_frame *fr = v->cls->selected_frame ? v->cls->selected_frame(v, &c, &name) : NULL;
    if (!fr || !fr->file) {
        set_status(scr, "%s", fr ? "no source file for this frame (no debug information)" : "no frame selected");
        return;
    }
    if (crt_batch()) {
        set_status(scr, "%s", "e: no editor in batch mode");
        return;
    }
    char err[256];
    int rc = editor_open(fr->file, fr->line, err, sizeof err);
    if (rc < 0) {
        set_status(scr, "%s", err);
    } else if (rc > 0) {
        snprintf(scr->status, sizeof scr->status, "the editor exited with status %d", rc);
    }
}

/* ---- keys ---- */

static int body_rows(const struct screen *scr)
{
    return scr->body_h - 1 > 1 ? scr->body_h - 1 : 1;
}

/* Do what a view's key asked. */
static void apply_result(struct screen *scr, struct view_result r)
{
    if (r.flags & VIEW_STATUS) {
        set_status(scr, "%s", r.status);
    }
    if (r.flags & VIEW_WINDOW) {
        apply_window(scr, 1, r.from_ms, r.to_ms);
    }
    if (r.flags & VIEW_GOTO) {
        size_t t = tree_view(scr, r.o);
        if (t < view_count) {
            scr->cur = t;
            if (r.node != CALLTREE_NONE) {
                struct view_ctx c = ctx_of(scr);
                scr->views[t]->cls->select_node(scr->views[t], &c, r.node);
            }
        }
    }
}

/* The current view's search; 1 when a match is selected. A view that
 * searches through a tree view's (VIEW_SEARCH_IN) either moves there
 * (VIEW_GOTO) or stays, and then every other view of that tree (the one
 * asking too, when it is one) follows the match. */
static int search(struct screen *scr, int dir)
{
    struct view *v = scr->views[scr->cur];
    struct view_ctx c = ctx_of(scr);
    if (!v->cls->search) {
        return 0;
    }
    struct view_result r = v->cls->search(v, &c, dir);
    if (!(r.flags & VIEW_SEARCH_IN)) {
        return (r.flags & VIEW_FOUND) != 0;
    }
    size_t t = tree_view(scr, r.o);
    if (t == view_count || !scr->views[t]->cls->search) {
        return 0;
    }
    if (r.flags & VIEW_GOTO) {
        scr->cur = t;
    }
    struct view *tv = scr->views[t];
    struct view_result f = tv->cls->search(tv, &c, dir);
    if (!(f.flags & VIEW_FOUND)) {
        return 0;
    }
    if (!(r.flags & VIEW_GOTO)) {
        for (size_t i = 0; i < view_count; i++) {
            const struct view_class *cls = scr->views[i]->cls;
            if (i != t && cls->select_node && cls->orient == f.o) {
                cls->select_node(scr->views[i], &c, f.node);
            }
        }
    }
    return 1;
}

static void click(struct screen *scr, int y, int x)
{
    if (y == 1) {
        int at = 0;
        for (size_t i = 0; i < view_count; i++) {
            char tab[128];
            int len = tab_label(scr, i, scr->width, tab, sizeof tab);
            if (x >= at && x < at + len) {
                scr->cur = i;
                return;
            }
            at += len;
        }
        return;
    }
    if (y < scr->body_y || y >= scr->body_y + scr->body_h) {
        return;
    }
    struct view *v = scr->views[scr->cur];
    if (v->cls->click) {
        struct view_ctx c = ctx_of(scr);
        v->cls->click(v, &c, y - scr->body_y, x);
    }
}

/* One key; returns 1 when the loop is to end. */
static int on_action(struct screen *scr, enum action a, struct timespec *last, struct timespec now)
{
    switch (a) {
    case ACT_QUIT: return 1;
    case ACT_HELP:
        scr->help = 1;
        scr->help_top = 0;
        break;
    case ACT_NEXT_VIEW: scr->cur = (scr->cur + 1) % view_count; break;
    case ACT_PREV_VIEW: scr->cur = (scr->cur + view_count - 1) % view_count; break;
    case ACT_VIEW1:
    case ACT_VIEW2:
    case ACT_VIEW3:
    case ACT_VIEW4:
    case ACT_VIEW5:
    case ACT_VIEW6:
    case ACT_VIEW7:
    case ACT_VIEW8:
    case ACT_VIEW9:
    case ACT_VIEW10:
        if ((size_t)(a - ACT_VIEW1) < view_count) {
            scr->cur = (size_t)(a - ACT_VIEW1);
        }
        break;
    case ACT_COST_NEXT:
    case ACT_COST_PREV: {
        int step = a == ACT_COST_NEXT ? 1 : COST_NTYPES - 1;
        enum cost_type nc = (enum cost_type)((scr->d->cost + step) % COST_NTYPES);
        /* A cost the recording does not hold (allocator time without
         * memrec --time, mapped when nothing was mapped) is passed over,
         * not shown as zeros. */
        for (int k = 0; k < COST_NTYPES && !data_cost_offered(scr->d, nc); k++) {
            nc = (enum cost_type)((nc + step) % COST_NTYPES);
        }
        data_set_cost(scr->d, nc, scr->d->by_self);
        break;
    }
    case ACT_DETAIL: scr->detail = !scr->detail; break;
    case ACT_SEARCH: {
        char buf[sizeof scr->search];
        if (prompt_line(scr, "search: ", buf, sizeof buf) && buf[0]) {
            memcpy(scr->search, buf, sizeof buf);
            if (!search(scr, 0)) {
                set_status(scr, "no match for '%s'", scr->search);
            }
        }
        break;
    }
    case ACT_SEARCH_NEXT:
    case ACT_SEARCH_PREV:
        if (scr->search[0] && !search(scr, a == ACT_SEARCH_NEXT ? 1 : -1)) {
            set_status(scr, "no match for '%s'", scr->search);
        }
        break;
    case ACT_WINDOW_ENTER: enter_window(scr); break;
    case ACT_FILTER: enter_filter(scr); break;
    case ACT_FOLD: enter_fold(scr); break;
    case ACT_EDIT: edit_source(scr); break;
    case ACT_COLUMNS: scr->d->all_costs = !scr->d->all_costs; break;
    case ACT_WINDOW_CLEAR:
        for (size_t i = 0; i < view_count; i++) {
            if (scr->views[i]->cls->window_clear) {
                scr->views[i]->cls->window_clear(scr->views[i]);
            }
        }
        if (scr->d->has_window) {
            apply_window(scr, 0, 0, 0);
        }
        break;
    case ACT_REFRESH:
        *last = now;
        if (data_refresh(scr->d, 1) < 0) {
            set_status(scr, "%s", "cannot reload the recording: showing the previous data");
        }
        break;
    default: {
        struct view *v = scr->views[scr->cur];
        struct view_ctx c = ctx_of(scr);
        apply_result(scr, v->cls->key(v, &c, a, body_rows(scr)));
        break;
    }
    }
    return 0;
}

/* The wheel moves WHEEL_ROWS rows (the help, or the view's selection as
 * Up and Down do); a button press or click is click()'s. */
#define WHEEL_ROWS 3

static void mouse(struct screen *scr, const MEVENT *ev, struct timespec *last, struct timespec now)
{
    int wheel = (ev->bstate & BUTTON4_PRESSED) ? -1 : (ev->bstate & BUTTON5_PRESSED) ? 1 : 0;
    if (!wheel) {
        if (scr->help) {
            scr->help = 0;
        } else {
            click(scr, ev->y, ev->x);
        }
        return;
    }
    for (int i = 0; i < WHEEL_ROWS; i++) {
        if (scr->help) {
            help_key(scr, wheel < 0 ? KEY_UP : KEY_DOWN);
        } else {
            on_action(scr, wheel < 0 ? ACT_UP : ACT_DOWN, last, now);
        }
    }
}

static int run(struct screen *scr)
{
    struct timespec last;
    clock_gettime(CLOCK_MONOTONIC, &last);
    for (;;) {
        if (crt_quit_signal) {
            return 0;
        }
        /* A reload in the background is taken in as soon as it is done,
         * between keys: the keys never wait for it. */
        if (data_reloading(scr->d) && data_refresh(scr->d, 0) < 0) {
            set_status(scr, "%s", "cannot reload the recording: showing the previous data");
        }
        timeout(data_reloading(scr->d) ? 50 : 250);
        draw(scr, NULL, NULL);
        int c = getch();
        if (crt_quit_signal) {
            return 0;
        }
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        int tick = (now.tv_sec - last.tv_sec) * 1000 + (now.tv_nsec - last.tv_nsec) / 1000000 >= 1000;
        if (c == ERR) {
            if (tick) {
                last = now;
                if (data_refresh(scr->d, 0) < 0) {
                    set_status(scr, "%s", "cannot reload the recording: showing the previous data");
                }
            }
            continue;
        }
        if (c == KEY_RESIZE) {
            continue;
        }
        if (c == SCREEN_KEY_DUMP) {
            return 0;
        }
        if (scr->help && c != KEY_MOUSE) {
            help_key(scr, c);
            continue;
        }
        scr->status[0] = 0;
        if (c == KEY_MOUSE) {
            MEVENT ev;
            if (getmouse(&ev) == OK) {
                mouse(scr, &ev, &last, now);
            }
            continue;
        }
        if (on_action(scr, action_of_key(c), &last, now)) {
            return 0;
        }
    }
}

int screen_run(struct data *d)
{
    struct screen scr;
    memset(&scr, 0, sizeof scr);
    scr.d = d;
    scr.views = xcalloc(view_count, sizeof *scr.views);
    scr.help_text = help_new(HELP_WIDTH);
    while (scr.help_text[scr.help_n]) {
        scr.help_n++;
    }
    for (size_t i = 0; i < view_count; i++) {
        scr.views[i] = view_table[i]->new ();
        scr.views[i]->cls = view_table[i];
        if (d->base && view_table[i]->first_with_base) {
            scr.cur = i; /* two files: the comparison first */
        }
    }
    int status = run(&scr);
    for (size_t i = 0; i < view_count; i++) {
        view_table[i]->free(scr.views[i]);
    }
    free(scr.views);
    help_free(scr.help_text);
    return status;
}
