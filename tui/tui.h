// SPDX-License-Identifier: MIT
/* memtui's cross-file declarations, grouped by defining file. Every figure
 * shown comes from the analyzer library (analysis.h, calltree.h, report.h);
 * the files here only lay it out. Nothing here includes recorder/. */
#ifndef TUI_H
#define TUI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "alloctime.h"
#include "analysis.h"
#include "calltree.h"
#include "costs.h"
#include "model.h"

/* ---- data.c: the recording, its trees and the current window ---- */

/* Points of the over-time series: the chart takes the largest value of
 * the points under each column, so every spike shows at any width. */
#define DATA_SERIES_POINTS 2000

struct data {
    const char *path;
    struct model *m;
    struct frames *fr;
    struct calltree *tree; /* of `acct` */
    const struct accounting *acct; /* m->acct, or win->acct while a window is set */
    struct analysis *win; /* the window's analysis; NULL without a window */
    struct analysis *whole; /* the whole run's series (lazily, for the over-time view) */
    struct alloctime *atime; /* allocator time tables (lazily, for the allocator time view); whole run */
    int has_window;
    uint64_t from_ms, to_ms;
    enum cost_type cost;
    int by_self; /* functions sorted by self cost */
    char **summary; /* report_print_summary()'s lines, escaped */
    uint32_t nsummary;
    char **fnames; /* display name per function of `tree`, escaped; lazily */
    uint32_t nfnames;
    int utf8; /* the terminal takes UTF-8: names keep their non-ASCII characters */
    /* Live recording: the file has no END record yet. */
    off_t size;
    time_t mtime, last_growth;
    uint64_t generation; /* bumped whenever `tree` is replaced */
    uint64_t load_ms, last_load; /* how long the latest load took; when a refresh last looked */
};

/* data_open()'s own error, beside the memfmt statuses (MEMFMT_E_*, which
 * stay above -100): the symbolizer (libdw) cannot start. */
#define DATA_E_SYMBOLIZER (-1000)

/** Load `path` and build the whole run's tree. Returns 0, or a negative
 * memfmt status (with *err_errno for MEMFMT_E_IO), or DATA_E_SYMBOLIZER. */
int data_open(struct data *d, const char *path, int utf8, int *err_errno);
void data_release(struct data *d);
/** Restrict every figure to allocations made in [from, to) ms (on = 0:
 * the whole run again). Returns 0 or a memfmt status. */
int data_set_window(struct data *d, int on, uint64_t from_ms, uint64_t to_ms, int *err_errno);
/** Cost type (and, for the functions, self or inclusive order): re-sorts. */
void data_set_cost(struct data *d, enum cost_type c, int by_self);
/** The whole run's allocator time tables (alloctime.h), made at the first
 * call after a load (one pass over the file); NULL on error. */
const struct alloctime *data_alloc_time(struct data *d);
/** The whole run's series (computed while loading); NULL on error. */
const struct timeseries *data_series(struct data *d);
/** Live refresh: when the file changed since the last load, load it
 * again (keeping the window and the cost); without `force`, not sooner
 * than four load times after the previous look. Returns 1 when reloaded,
 * 0 when unchanged, negative on error (the old data stay). */
int data_refresh(struct data *d, int force);
/** 1 while the recording has no END record (memrec still writing). */
int data_live(const struct data *d);
/** Display name of node `id` of orientation `o` (escaped; owned by d). */
const char *data_node_name(struct data *d, enum calltree_orient o, uint32_t id);
/** Display name of function `f` (escaped; owned by d). */
const char *data_func_name(struct data *d, uint32_t f);
/** The total of the current cost: the root's inclusive cost. */
uint64_t data_total(const struct data *d);

/* ---- text.c: escaping and formatting ---- */

/** Human bytes ("1.50 MiB"), the report's way. */
const char *text_bytes(char *buf, size_t cap, uint64_t v);
/** Case-insensitive substring test (ASCII case). */
int text_match(const char *hay, const char *needle);

/* ---- crt.c: the terminal ---- */

enum crt_color {
    CRT_NORMAL,
    CRT_TITLE,
    CRT_SELECTED,
    CRT_MATCH,
    CRT_HEAP,
    CRT_MAPPED,
    CRT_RSS,
    CRT_WINDOW,
    CRT_LIVE,
    CRT_FLAME_A,
    CRT_FLAME_B,
    CRT_NCOLORS,
};

/** Batch mode: curses on a screen of w x h cells that goes nowhere
 * (/dev/null), no colours, no signal handlers. Returns 0, or -1 when
 * curses cannot start. */
int crt_init_batch(int w, int h);
/** Batch mode: write the screen's text to `out`, one line per row,
 * trailing spaces removed. */
void crt_dump(FILE *out);
/** Refuse terminals curses cannot drive well (TERM unset or "dumb",
 * output not a terminal): 0 when usable, else -1 with a message in buf. */
int crt_check(char *buf, size_t cap);
/** Take the screen: curses, colours unless NO_COLOR, mouse, and signal
 * handlers that give the terminal back (SIGTERM, SIGINT, SIGHUP set a
 * flag; SIGSEGV, SIGABRT, SIGBUS, SIGFPE end curses and re-raise). */
void crt_init(void);
/** Give the terminal back. Idempotent. */
void crt_done(void);
/** Set by SIGINT/SIGTERM/SIGHUP: the loop ends. */
extern volatile int crt_quit_signal;
/** 1 when colours are in use. */
extern int crt_has_color;
/** Attribute of a role. */
int crt_attr(enum crt_color c);
/** Write `s` (escaped) at (y, x), at most `w` columns, with `attr`;
 * returns the columns written. */
int crt_put(int y, int x, const char *s, int w, int attr);
/** Fill `w` columns at (y, x) with `ch` (an ASCII character). */
void crt_fill(int y, int x, int w, char ch, int attr);
/** `s` written with its first occurrence of `hl` (case-insensitive) in
 * the match colour. */
int crt_put_hl(int y, int x, const char *s, int w, int attr, const char *hl);

/* ---- action.c: keys ---- */

enum action {
    ACT_NONE,
    ACT_QUIT,
    ACT_UP,
    ACT_DOWN,
    ACT_PGUP,
    ACT_PGDN,
    ACT_HOME,
    ACT_END,
    ACT_EXPAND, /* Enter: expand, open, zoom */
    ACT_RIGHT, /* expand; flame graph and chart: move right */
    ACT_LEFT, /* collapse or parent; flame graph and chart: move left */
    ACT_BACK, /* Backspace: zoom out, leave callers */
    ACT_NEXT_VIEW,
    ACT_PREV_VIEW,
    ACT_VIEW1,
    ACT_VIEW2,
    ACT_VIEW3,
    ACT_VIEW4,
    ACT_VIEW5,
    ACT_VIEW6,
    ACT_VIEW7,
    ACT_COST_NEXT,
    ACT_COST_PREV,
    ACT_SORT_SELF,
    ACT_SEARCH,
    ACT_SEARCH_NEXT,
    ACT_SEARCH_PREV,
    ACT_HELP,
    ACT_DETAIL,
    ACT_MARK,
    ACT_WINDOW_ENTER,
    ACT_WINDOW_CLEAR,
    ACT_SERIES,
    ACT_REFRESH,
    ACT_EXPAND_ALL,
    ACT_NACTIONS,
};

/** The action of a key (a curses key code or character). */
enum action action_of_key(int key);
/** Help lines: "keys  what" for every action, NULL-terminated. */
const char *const *action_help(void);

/* ---- screen.c: views, the event loop ---- */

enum view_id {
    VIEW_SUMMARY,
    VIEW_TOPDOWN,
    VIEW_BOTTOMUP,
    VIEW_FUNCTIONS,
    VIEW_FLAME,
    VIEW_TIME,
    VIEW_ALLOC_TIME, /* allocator time per size class, function, thread */
    VIEW_COUNT,
};

/* One line of a list view. */
struct row {
    uint32_t id; /* node, function or summary entry */
    uint32_t depth;
    int kind; /* view's own */
};

struct list {
    struct row *rows;
    uint32_t n, cap;
    uint32_t sel, top;
};

struct app {
    struct data d;
    enum view_id view;
    char search[128];
    int help;
    int detail; /* frame detail shown over the view */
    char status[256];
    /* Per view state. */
    struct list summary;
    struct tree_state {
        enum calltree_orient o;
        uint8_t *open; /* per node: expanded */
        uint32_t nopen;
        struct list l;
        uint64_t generation;
        char **path; /* names from the root to the selection: kept across reloads */
        uint32_t npath;
    } td, bu;
    struct funcs_state {
        struct list l;
        uint32_t shown; /* function whose callers/callees are shown; CALLTREE_NONE: the list */
        struct list links;
        uint64_t generation;
        char *selname; /* kept across reloads */
        struct calltree_link *callers, *callees;
        uint32_t ncallers, ncallees;
    } fn;
    struct flame_state {
        uint32_t zoom; /* top-down node at the top */
        uint32_t sel;
        uint64_t generation;
        struct flame_cell {
            int y, x, w;
            uint32_t node;
        } * cells; /* laid out by the latest draw */
        size_t ncells, cap;
    } fl;
    struct time_state {
        int col; /* cursor column */
        int mark; /* first mark's column, -1: none */
        uint64_t mark_ms;
        int series; /* 0 heap, 1 mapped, 2 rss */
        int cw; /* chart columns at the latest draw */
        uint64_t end_ms;
    } tm;
    struct list at; /* the allocator time view's lines */
    /* Geometry of the last draw (mouse). */
    int body_y, body_h, width;
};

void list_push(struct list *l, uint32_t id, uint32_t depth, int kind);
void list_clear(struct list *l);
/** Move the selection by an action; returns 1 when handled. */
int list_move(struct list *l, enum action a, int page);
/** Keep the selection on screen for `h` rows. */
void list_scroll(struct list *l, int h);

/** Restrict every view to [from, to) ms (on = 0: clear); errors go to the status line. */
void screen_apply_window(struct app *app, int on, uint64_t from, uint64_t to);
/** A one-line message on the status line until the next key (`fmt` has one %s). */
void screen_status(struct app *app, const char *fmt, const char *arg);
/** A key code no terminal sends: the batch mode's last key, which ends
 * the loop with the screen as the keys before it left it (a prompt open
 * at that moment takes it as Enter). */
#define SCREEN_KEY_DUMP 0x4000
/** Run the event loop until quit. Returns the exit status. */
int screen_run(struct app *app);

/* ---- view_*.c: drawing and keys of each view ---- */

void view_summary_draw(struct app *app, int y, int h, int w);
int view_summary_key(struct app *app, enum action a, int h);

void view_tree_draw(struct app *app, struct tree_state *s, int y, int h, int w);
int view_tree_key(struct app *app, struct tree_state *s, enum action a, int h);
/** Select `node` in a tree view, expanding its ancestors. */
void view_tree_select(struct app *app, struct tree_state *s, uint32_t node);
/** The node selected in a tree view; CALLTREE_NONE when none. */
uint32_t view_tree_selected(struct app *app, struct tree_state *s);

void view_funcs_draw(struct app *app, int y, int h, int w);
int view_funcs_key(struct app *app, enum action a, int h);
uint32_t view_funcs_selected(struct app *app);

void view_flame_draw(struct app *app, int y, int h, int w);
int view_flame_key(struct app *app, enum action a, int h);
void view_flame_click(struct app *app, int y, int x);

void view_time_draw(struct app *app, int y, int h, int w);
/** The allocator time view (view_alloc.c): the tables of memprint
 * --alloc-time, or why there are none. */
void view_alloc_draw(struct app *app, int y, int h, int w);
int view_alloc_key(struct app *app, enum action a, int h);
int view_time_key(struct app *app, enum action a, int h);

/** Frame detail over the screen for a frame (NULL: "no frame"). */
void view_detail_draw(struct app *app, const struct sym_frame *fr, const char *name, int y, int h, int w);

/** Search: move to the next (dir 1) or previous (-1) match of
 * app->search in the current view; returns 1 when found. */
int view_search(struct app *app, int dir);

#endif
