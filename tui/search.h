// SPDX-License-Identifier: MIT
/* search.c's contract: the search every view does the same way, in one
 * place: the order in which a list is searched from its selection, a
 * search handed on to the view of a tree, and whether any function
 * matches at all. It selects nothing: each view moves its own cursor to
 * the index found. */
#ifndef TUI_SEARCH_H
#define TUI_SEARCH_H

#include <stdint.h>

#include "calltree.h"
#include "data.h"
#include "view.h"

/** The name of item `i` of a list being searched; `arg` is the caller's. */
typedef const char *(*search_name_fn)(void *arg, uint32_t i);

/** The index of the first of `n` items, in display order from item `at`
 * and wrapping around, whose name (`name(arg, i)`) holds `needle`
 * (text_match(): case-insensitive): with dir 0 from `at` itself, with 1
 * from the item after it, with -1 from the item before it going up.
 * Returns `n` when none matches (and for n = 0). */
uint32_t search_step(uint32_t n, uint32_t at, int dir, const char *needle, search_name_fn name, void *arg);

/** The result of a view without names of its own: the search runs in the
 * view that selects nodes of tree `o` (VIEW_SEARCH_IN), and with `go` the
 * screen switches to that view (VIEW_GOTO). */
struct view_result search_forward(enum calltree_orient o, int go);

/** The search of a chart view (view_class.search): the charts have no
 * names, so it runs in the top-down tree's view, whose match the chart's
 * cursor then follows. */
struct view_result search_chart(struct view *v, struct view_ctx *c, int dir);

/** 1 when the display name of some function of the data's tree holds
 * `needle`. O(functions): a quick "no" before a search that builds. */
int search_any_function(struct data *d, const char *needle);

#endif
