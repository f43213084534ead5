// SPDX-License-Identifier: MIT
/* The view interface: what screen.c knows of a view. Each view_*.c file
 * exports one `struct view_class` (htop's PanelClass): its name, its state
 * and the operations on it; views.c lists them in tab order. A view never
 * touches another view's state nor the screen's: its key, click and search
 * handlers return a `struct view_result` saying what should happen next,
 * and screen.c does it. */
#ifndef TUI_VIEW_H
#define TUI_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "action.h"
#include "calltree.h"
#include "data.h"

/* What screen.c gives every operation: the recording and the search. */
struct view_ctx {
    struct data *d;
    const char *search; /* the current search ("" for none): drawn highlighted */
};

/* What a key or a search asks the screen to do; several at once. The
 * screen redraws after every key whatever the flags. */
enum view_flags {
    VIEW_HANDLED = 1 << 0, /* the view took the key */
    VIEW_STATUS = 1 << 1, /* show `status` on the status line until the next key */
    VIEW_GOTO =
        1 << 2, /* switch to the view that selects nodes of tree `o`, and select `node` there (unless CALLTREE_NONE) */
    /* search: run it in the view that selects nodes of tree `o` instead, switching
     * to it with VIEW_GOTO; without, every other view of that tree follows the match */
    VIEW_SEARCH_IN = 1 << 3,
    VIEW_FOUND = 1 << 4, /* search: a match is selected (`o` and `node` name it when the view has a tree) */
    VIEW_WINDOW = 1 << 5, /* restrict every view to [from_ms, to_ms) */
};

struct view_result {
    enum view_flags flags;
    enum calltree_orient o; /* VIEW_GOTO, VIEW_SEARCH_IN, VIEW_FOUND */
    uint32_t node; /* VIEW_GOTO, VIEW_FOUND; CALLTREE_NONE for none */
    const char *status; /* VIEW_STATUS: a static string */
    uint64_t from_ms, to_ms; /* VIEW_WINDOW */
};

/** Nothing to do. */
#define VIEW_RESULT_NONE ((struct view_result){0, CALLTREE_TOP_DOWN, CALLTREE_NONE, NULL, 0, 0})
/** The key was taken; nothing else to do. */
#define VIEW_RESULT_HANDLED ((struct view_result){VIEW_HANDLED, CALLTREE_TOP_DOWN, CALLTREE_NONE, NULL, 0, 0})

/* A view's state starts with this (htop's Object): the view's own struct
 * embeds it first, so the class's operations cast it back. */
struct view {
    const struct view_class *cls;
};

/* The operations of a view. `draw`, `key`, `new` and `free` are required;
 * every other one may be NULL, and then the screen does without it. */
struct view_class {
    const char *name; /* the tab's title */
    const char *help; /* how the help names it, when not by `name`; may be NULL */
    /** A fresh state (the screen sets its `cls`); freed by `free`, which
     * takes NULL too. */
    struct view *(*new)(void);
    void (*free)(struct view *v);
    /** Draw the body: `h` rows from row `y`, `w` columns. */
    void (*draw)(struct view *v, struct view_ctx *c, int y, int h, int w);
    /** An action the screen does not handle itself; `page` rows a page. */
    struct view_result (*key)(struct view *v, struct view_ctx *c, enum action a, int page);
    /** A click at body line `line` (0: the body's first row) and column `x`. */
    void (*click)(struct view *v, struct view_ctx *c, int line, int x);
    /** The frame the detail overlay (d) describes, *name its display name;
     * NULL for none ("no frame selected"). NULL op: the view shows no
     * overlay. */
    const struct sym_frame *(*selected_frame)(struct view *v, struct view_ctx *c, const char **name);
    /** Move to the next (dir 1), previous (-1) or first from here (0)
     * match of c->search. NULL op: nothing ever matches. */
    struct view_result (*search)(struct view *v, struct view_ctx *c, int dir);
    /** Select node `node` of tree `orient` (below): the target of
     * VIEW_GOTO and VIEW_SEARCH_IN, and how a view that forwarded a search
     * follows its match. NULL op: the view selects no tree node. */
    void (*select_node)(struct view *v, struct view_ctx *c, uint32_t node);
    enum calltree_orient orient; /* the tree select_node() takes nodes of */
    /** The window is being cleared (x, in any view): drop any half-set mark. */
    void (*window_clear)(struct view *v);
    int first_with_base; /* memtui BASE NEW opens on this view (the comparison) */
};

/* ---- views.c: the table of views ---- */

/** Every view class, in tab order: the number keys 1..9 open the first
 * nine. */
extern const struct view_class *const view_table[];
/** How many entries view_table has. */
extern const size_t view_count;

#endif
