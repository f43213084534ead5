// SPDX-License-Identifier: MIT
/* listbox.c's contract: the list widget every list view is made of (htop's
 * Panel): rows of (id, depth, kind), a selection and a scroll position,
 * moved by actions and by clicks. It draws nothing: each view draws its
 * rows its own way. Depends on action.h only. */
#ifndef TUI_LISTBOX_H
#define TUI_LISTBOX_H

#include <stdint.h>

#include "action.h"

/* One line of a list view. */
struct row {
    uint32_t id; /* node, function or summary entry */
    uint32_t depth;
    int kind; /* view's own */
};

struct listbox {
    struct row *rows;
    uint32_t n, cap;
    uint32_t sel, top;
};

#define LISTBOX_INIT                                                                                                   \
    {                                                                                                                  \
        NULL, 0, 0, 0, 0                                                                                               \
    }

/** Append a row (the list owns its rows; listbox_release() frees them). */
void listbox_push(struct listbox *l, uint32_t id, uint32_t depth, int kind);
/** Drop every row; the selection and the scroll position stay. */
void listbox_clear(struct listbox *l);
/** Free the rows; the list is empty (LISTBOX_INIT) afterwards. */
void listbox_release(struct listbox *l);
/** Move the selection by an action, `page` rows for PgUp/PgDn; returns 1
 * when the action is a move (even at an end), 0 otherwise. */
int listbox_move(struct listbox *l, enum action a, int page);
/** Put the selection on a row that `ok` takes: the nearest from the
 * selection in direction `dir` (1 down, -1 up), else the nearest the
 * other way; unchanged when `ok` takes none. With none taken above the
 * selection, the list scrolls to its top, so the rows there show. */
void listbox_settle(struct listbox *l, int dir, int (*ok)(const struct row *r));
/** The direction listbox_settle() goes after action `a` moved the
 * selection: up for Up, PgUp and End, down for the others. */
int listbox_dir(enum action a);
/** Keep the selection on screen for `h` rows. */
void listbox_scroll(struct listbox *l, int h);
/** A click on screen row `line` of a list drawn with one header line
 * above its rows (line 0 = the header): selects that row when there is
 * one. */
void listbox_click(struct listbox *l, int line);

#endif
