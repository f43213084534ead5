// SPDX-License-Identifier: MIT
/* action.c's contract: what a key means (one table of bindings) and the
 * help text that names every key. Depends on nothing else in tui/. */
#ifndef TUI_ACTION_H
#define TUI_ACTION_H

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
    ACT_VIEW8,
    ACT_VIEW9,
    ACT_VIEW10, /* the number keys (0 for the tenth): the view at that place of the views table */
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
    ACT_SCROLL_LEFT, /* <: the names column, in the trees */
    ACT_SCROLL_RIGHT, /* > */
    ACT_LIVE_AT, /* a: the charts: what was live at the cursor */
    ACT_FILTER, /* F: type a filter (function, file, module, thread) */
    ACT_FOLD, /* W: fold allocator wrappers into their callers */
    ACT_COLUMNS, /* =: every cost as a column in the trees */
    ACT_EDIT, /* e: the selected frame's source in $EDITOR */
    ACT_NACTIONS,
};

/** The action of a key (a curses key code or character). */
enum action action_of_key(int key);
/** Help lines: "keys  what" for every action, NULL-terminated; keys in
 * the first 23 columns. One entry is action_help_views itself (compare
 * the pointer): the place for the views' number keys and names, which
 * help.h makes from the table of views. */
const char *const *action_help(void);
/** The help line that stands for the list of views (see action_help()). */
extern const char action_help_views[];

#endif
