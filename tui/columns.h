// SPDX-License-Identifier: MIT
/* columns.c's contract: the figure columns in front of a tree row's name:
 * the inclusive and self figure and the share of the cost in use, or,
 * with d->all_costs (the = key), the inclusive figure of every cost side
 * by side (calls, temporary, peak, leaked, allocated; mapped when the
 * program mapped memory, time in a timed recording), each as wide as the
 * whole run's figure needs. The figures are the call tree's (calltree.h). */
#ifndef TUI_COLUMNS_H
#define TUI_COLUMNS_H

#include <stddef.h>

#include "calltree.h"
#include "data.h"

/** The columns' heading into buf, ending with the two spaces before the
 * names; returns its width in columns (where the names start). */
int columns_header(const struct data *d, char *buf, size_t cap);
/** The columns of node `n` of the tree of orientation `o` into buf, as
 * wide as columns_header()'s. */
void columns_row(const struct data *d, enum calltree_orient o, const struct calltree_node *n, char *buf, size_t cap);

#endif
