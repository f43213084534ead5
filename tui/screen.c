// SPDX-License-Identifier: MIT
/* The event loop: title, view tabs, status line, prompts, the help and
 * detail overlays, live refresh; each view draws its body and takes the
 * keys it knows (view_*.c). */
#define _GNU_SOURCE
#include "tui.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "escape.h"
#include "util.h"

static const char *const view_names[VIEW_COUNT] = {
    "Summary", "Top-down", "Bottom-up", "Functions", "Flame graph", "Over time", "Alloc time",
};

static const char *const cost_titles[COST_NTYPES] = {
    "calls to allocation functions",
    "temporary allocations",
    "bytes live at the heap peak",
    "bytes leaked (live at the end)",
    "bytes allocated",
    "bytes mapped at the mapped peak",
    "ns in the allocator",
};

/* ---- lists ---- */

void list_push(struct list *l, uint32_t id, uint32_t depth, int kind)
{
    if (l->n == l->cap) {
        size_t cap = l->cap;
        xgrow((void **)&l->rows, &cap, (size_t)l->n + 1, sizeof *l->rows);
        l->cap = (uint32_t)cap;
    }
    l->rows[l->n].id = id;
    l->rows[l->n].depth = depth;
    l->rows[l->n].kind = kind;
    l->n++;
}

void list_clear(struct list *l)
{
    l->n = 0;
}

int list_move(struct list *l, enum action a, int page)
{
    if (l->n == 0) {
        return 0;
    }
    if (page < 1) {
        page = 1;
    }
    int64_t sel = l->sel;
    switch (a) {
    case ACT_UP: sel--; break;
    case ACT_DOWN: sel++; break;
    case ACT_PGUP: sel -= page; break;
    case ACT_PGDN: sel += page; break;
    case ACT_HOME: sel = 0; break;
    case ACT_END: sel = l->n - 1; break;
    default: return 0;
    }
    if (sel < 0) {
        sel = 0;
    }
    if (sel >= l->n) {
        sel = l->n - 1;
    }
    l->sel = (uint32_t)sel;
    return 1;
}

void list_scroll(struct list *l, int h)
{
    if (h < 1) {
        h = 1;
    }
    if (l->n == 0) {
        l->sel = l->top = 0;
        return;
    }
    if (l->sel >= l->n) {
        l->sel = l->n - 1;
    }
    if (l->sel < l->top) {
        l->top = l->sel;
    }
    if (l->sel >= l->top + (uint32_t)h) {
        l->top = l->sel - (uint32_t)h + 1;
    }
    /* After a resize to a taller screen, show as much as fits. */
    if (l->top > 0 && l->n - l->top < (uint32_t)h) {
        l->top = l->n > (uint32_t)h ? l->n - (uint32_t)h : 0;
    }
}

/* ---- drawing ---- */

static void draw_title(struct app *app, int w)
{
    char buf[512];
    crt_fill(0, 0, w, ' ', crt_attr(CRT_TITLE));
    char *path = esc_text_for(app->d.path, !app->d.utf8);
    snprintf(buf, sizeof buf, "memtui  %s  |  %s  |  cost: %s (%s)", path, view_names[app->view],
             cost_name(app->d.cost), cost_titles[app->d.cost]);
    free(path);
    crt_put(0, 0, buf, w, crt_attr(CRT_TITLE));
    if (data_live(&app->d)) {
        const char *live = time(NULL) - app->d.last_growth < 5 ? " LIVE " : " NO END RECORD ";
        int lw = (int)strlen(live);
        if (w > lw) {
            crt_put(0, w - lw, live, lw, crt_attr(CRT_LIVE));
        }
    }
    int x = 0;
    for (int i = 0; i < VIEW_COUNT && x < w; i++) {
        snprintf(buf, sizeof buf, " %d %s ", i + 1, view_names[i]);
        x += crt_put(1, x, buf, w - x, i == (int)app->view ? crt_attr(CRT_SELECTED) : (int)A_NORMAL);
    }
}

static int draw_window_line(struct app *app, int y, int w)
{
    if (!app->d.has_window) {
        return 0;
    }
    char buf[256];
    snprintf(buf, sizeof buf,
             "WINDOW %.3f-%.3f s: only allocations made in it are counted (%llu earlier %s freed in it "
             "not counted); x clears",
             (double)app->d.from_ms / 1000.0, (double)app->d.to_ms / 1000.0,
             (unsigned long long)app->d.win->earlier_freed_blocks,
             util_plural(app->d.win->earlier_freed_blocks, "block", "blocks"));
    crt_fill(y, 0, w, ' ', crt_attr(CRT_WINDOW));
    crt_put(y, 0, buf, w, crt_attr(CRT_WINDOW));
    return 1;
}

static void draw_help(int h, int w)
{
    const char *const *lines = action_help();
    erase();
    crt_fill(0, 0, w, ' ', crt_attr(CRT_TITLE));
    crt_put(0, 0, "memtui help: every key (any key closes this screen)", w, crt_attr(CRT_TITLE));
    for (int i = 0; lines[i] && i + 1 < h; i++) {
        crt_put(i + 1, 0, lines[i], w, lines[i][0] != ' ' ? A_BOLD : (int)A_NORMAL);
    }
}

/* The frame the detail overlay describes: the selected row's. */
static const struct sym_frame *selected_frame(struct app *app, const char **name)
{
    struct data *d = &app->d;
    uint32_t node = CALLTREE_NONE;
    enum calltree_orient o = CALLTREE_TOP_DOWN;
    *name = NULL;
    switch (app->view) {
    case VIEW_SUMMARY:
        if (app->summary.n && app->summary.rows[app->summary.sel].kind >= 0) {
            node = app->summary.rows[app->summary.sel].id;
            o = CALLTREE_BOTTOM_UP;
        }
        break;
    case VIEW_TOPDOWN: node = view_tree_selected(app, &app->td); break;
    case VIEW_BOTTOMUP:
        node = view_tree_selected(app, &app->bu);
        o = CALLTREE_BOTTOM_UP;
        break;
    case VIEW_FLAME: node = app->fl.sel; break;
    case VIEW_FUNCTIONS: {
        uint32_t f = view_funcs_selected(app);
        const struct calltree_func *fn = calltree_func(d->tree, f);
        if (fn) {
            *name = data_func_name(d, f);
            return fn->frame;
        }
        return NULL;
    }
    default: return NULL;
    }
    const struct calltree_node *n = calltree_node(d->tree, o, node);
    if (!n || !n->frame) {
        return NULL;
    }
    *name = data_node_name(d, o, node);
    return n->frame;
}

static void draw(struct app *app, const char *prompt, const char *input)
{
    int h = LINES, w = COLS;
    erase();
    if (app->help) {
        draw_help(h, w);
        refresh();
        return;
    }
    draw_title(app, w);
    int y = 2 + draw_window_line(app, 2, w);
    int body_h = h - y - 1;
    app->body_y = y;
    app->body_h = body_h;
    app->width = w;
    switch (app->view) {
    case VIEW_SUMMARY: view_summary_draw(app, y, body_h, w); break;
    case VIEW_TOPDOWN: view_tree_draw(app, &app->td, y, body_h, w); break;
    case VIEW_BOTTOMUP: view_tree_draw(app, &app->bu, y, body_h, w); break;
    case VIEW_FUNCTIONS: view_funcs_draw(app, y, body_h, w); break;
    case VIEW_FLAME: view_flame_draw(app, y, body_h, w); break;
    case VIEW_TIME: view_time_draw(app, y, body_h, w); break;
    case VIEW_ALLOC_TIME: view_alloc_draw(app, y, body_h, w); break;
    default: break;
    }
    if (app->detail && app->view != VIEW_TIME && app->view != VIEW_ALLOC_TIME) {
        const char *name;
        const struct sym_frame *fr = selected_frame(app, &name);
        int dh = body_h / 2 > 9 ? body_h / 2 : (body_h > 9 ? 9 : body_h);
        view_detail_draw(app, fr, name, y + body_h - dh, dh, w);
    }
    char buf[512];
    if (prompt) {
        snprintf(buf, sizeof buf, "%s%s", prompt, input);
        char *e = esc_text_for(buf, !app->d.utf8);
        crt_put(h - 1, 0, e, w, A_BOLD);
        free(e);
    } else if (app->status[0]) {
        crt_put(h - 1, 0, app->status, w, A_BOLD);
    } else {
        snprintf(buf, sizeof buf, "?:help  q:quit  Tab:view  c:cost  d:detail  /:search%s%s%s",
                 app->search[0] ? "  n/N:next/prev '" : "", app->search[0] ? app->search : "",
                 app->search[0] ? "'" : "");
        crt_put(h - 1, 0, buf, w, (int)A_NORMAL);
    }
    refresh();
}

/* ---- prompts ---- */

/* Read a line on the status line; returns 1 on Enter, 0 on Esc. */
static int prompt_line(struct app *app, const char *prompt, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    for (;;) {
        draw(app, prompt, buf);
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

void screen_status(struct app *app, const char *fmt, const char *arg)
{
    snprintf(app->status, sizeof app->status, fmt, arg);
}

void screen_apply_window(struct app *app, int on, uint64_t from, uint64_t to)
{
    /* One more pass over the file: say so while the screen waits. */
    screen_status(app, "%s", on ? "computing the window (one more pass over the recording)..." : "");
    draw(app, NULL, NULL);
    app->status[0] = 0;
    int e = 0;
    int rc = data_set_window(&app->d, on, from, to, &e);
    if (rc < 0) {
        screen_status(app, "cannot compute the window: %s", rc == MEMFMT_E_IO ? strerror(e) : memfmt_strerror(rc));
    }
}

/* "FROM-TO" in milliseconds. */
static void enter_window(struct app *app)
{
    char buf[64];
    if (!prompt_line(app, "window in ms (FROM-TO): ", buf, sizeof buf)) {
        return;
    }
    unsigned long long from, to;
    char extra;
    if (sscanf(buf, "%llu-%llu%c", &from, &to, &extra) != 2 || from >= to) {
        screen_status(app, "not a window: '%s' (expected FROM-TO in milliseconds, FROM < TO)", buf);
        return;
    }
    screen_apply_window(app, 1, from, to);
}

/* ---- keys ---- */

static int body_rows(struct app *app)
{
    return app->body_h - 1 > 1 ? app->body_h - 1 : 1;
}

static void view_key(struct app *app, enum action a)
{
    int h = body_rows(app);
    switch (app->view) {
    case VIEW_SUMMARY: view_summary_key(app, a, h); break;
    case VIEW_TOPDOWN: view_tree_key(app, &app->td, a, h); break;
    case VIEW_BOTTOMUP: view_tree_key(app, &app->bu, a, h); break;
    case VIEW_FUNCTIONS: view_funcs_key(app, a, h); break;
    case VIEW_FLAME: view_flame_key(app, a, h); break;
    case VIEW_TIME: view_time_key(app, a, h); break;
    case VIEW_ALLOC_TIME: view_alloc_key(app, a, h); break;
    default: break;
    }
}

static void click(struct app *app, int y, int x)
{
    if (y == 1) {
        int at = 0;
        for (int i = 0; i < VIEW_COUNT; i++) {
            int len = (int)strlen(view_names[i]) + 4;
            if (x >= at && x < at + len) {
                app->view = (enum view_id)i;
                return;
            }
            at += len;
        }
        return;
    }
    if (y < app->body_y || y >= app->body_y + app->body_h) {
        return;
    }
    struct list *l = NULL;
    switch (app->view) {
    case VIEW_SUMMARY: l = &app->summary; break;
    case VIEW_TOPDOWN: l = &app->td.l; break;
    case VIEW_BOTTOMUP: l = &app->bu.l; break;
    case VIEW_FUNCTIONS: l = app->fn.shown == CALLTREE_NONE ? &app->fn.l : &app->fn.links; break;
    case VIEW_FLAME: view_flame_click(app, y, x); return;
    case VIEW_TIME: app->tm.col = x; return;
    default: return;
    }
    /* List views: one header row above the rows. */
    uint32_t row = l->top + (uint32_t)(y - app->body_y - 1);
    if (y > app->body_y && row < l->n) {
        l->sel = row;
    }
}

int screen_run(struct app *app)
{
    app->fn.shown = CALLTREE_NONE;
    app->tm.mark = -1;
    app->td.o = CALLTREE_TOP_DOWN;
    app->bu.o = CALLTREE_BOTTOM_UP;
    app->td.generation = app->bu.generation = UINT64_MAX;
    app->fn.generation = app->fl.generation = UINT64_MAX;
    timeout(250);
    struct timespec last;
    clock_gettime(CLOCK_MONOTONIC, &last);
    for (;;) {
        if (crt_quit_signal) {
            return 0;
        }
        draw(app, NULL, NULL);
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
                if (data_refresh(&app->d, 0) < 0) {
                    screen_status(app, "%s", "cannot reload the recording: showing the previous data");
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
        if (app->help) {
            app->help = 0;
            continue;
        }
        app->status[0] = 0;
        if (c == KEY_MOUSE) {
            MEVENT ev;
            if (getmouse(&ev) == OK) {
                click(app, ev.y, ev.x);
            }
            continue;
        }
        enum action a = action_of_key(c);
        switch (a) {
        case ACT_QUIT: return 0;
        case ACT_HELP: app->help = 1; break;
        case ACT_NEXT_VIEW: app->view = (enum view_id)((app->view + 1) % VIEW_COUNT); break;
        case ACT_PREV_VIEW: app->view = (enum view_id)((app->view + VIEW_COUNT - 1) % VIEW_COUNT); break;
        case ACT_VIEW1:
        case ACT_VIEW2:
        case ACT_VIEW3:
        case ACT_VIEW4:
        case ACT_VIEW5:
        case ACT_VIEW6:
        case ACT_VIEW7: app->view = (enum view_id)(a - ACT_VIEW1); break;
        case ACT_COST_NEXT:
        case ACT_COST_PREV: {
            int step = a == ACT_COST_NEXT ? 1 : COST_NTYPES - 1;
            enum cost_type nc = (enum cost_type)((app->d.cost + step) % COST_NTYPES);
            /* A cost the recording does not hold (allocator time without
             * memrec --time) is passed over, not shown as zeros. */
            if (!cost_recorded(&app->d.m->header, nc)) {
                nc = (enum cost_type)((nc + step) % COST_NTYPES);
            }
            data_set_cost(&app->d, nc, app->d.by_self);
            break;
        }
        case ACT_DETAIL: app->detail = !app->detail; break;
        case ACT_SEARCH: {
            char buf[sizeof app->search];
            if (prompt_line(app, "search: ", buf, sizeof buf) && buf[0]) {
                memcpy(app->search, buf, sizeof buf);
                if (!view_search(app, 0)) {
                    screen_status(app, "no match for '%s'", app->search);
                }
            }
            break;
        }
        case ACT_SEARCH_NEXT:
        case ACT_SEARCH_PREV:
            if (app->search[0] && !view_search(app, a == ACT_SEARCH_NEXT ? 1 : -1)) {
                screen_status(app, "no match for '%s'", app->search);
            }
            break;
        case ACT_WINDOW_ENTER: enter_window(app); break;
        case ACT_WINDOW_CLEAR:
            app->tm.mark = -1;
            if (app->d.has_window) {
                screen_apply_window(app, 0, 0, 0);
            }
            break;
        case ACT_REFRESH:
            last = now;
            if (data_refresh(&app->d, 1) < 0) {
                screen_status(app, "%s", "cannot reload the recording: showing the previous data");
            }
            break;
        default: view_key(app, a); break;
        }
    }
}
