// SPDX-License-Identifier: MIT
/* The table of views, in tab order. Adding a view is its view_*.c file
 * (CMake picks up tui/view_*.c) and one line in EVERY_VIEW below: the
 * list both declares each class and fills the table, so that the one line
 * is all there is to add. */
#include "view.h"

/* One line a view, each ending in a backslash: the name of the `struct
 * view_class` its file exports. */
#define EVERY_VIEW(X)                                                                                                  \
    X(view_summary)                                                                                                    \
    X(view_topdown)                                                                                                    \
    X(view_bottomup)                                                                                                   \
    X(view_funcs)                                                                                                      \
    X(view_flame)                                                                                                      \
    X(view_time)                                                                                                       \
    X(view_alloc)                                                                                                      \
    X(view_stacked)                                                                                                    \
    X(view_sizes)                                                                                                      \
    X(view_diff)                                                                                                       \
    /* a new view: one line above this one */

#define DECLARE_VIEW(cls) extern const struct view_class cls;
EVERY_VIEW(DECLARE_VIEW)

#define VIEW_ENTRY(cls) &cls,
const struct view_class *const view_table[] = {EVERY_VIEW(VIEW_ENTRY)};
const size_t view_count = sizeof view_table / sizeof view_table[0];
