// SPDX-License-Identifier: MIT
/* Folded stacks ("outer;...;inner count", one line per distinct stack) of
 * a call tree for one cost type, the input of flamegraph.pl, inferno and
 * speedscope. The counts sum to the tree root's inclusive cost, which is
 * the summary's figure. Never prints anywhere but the stream it is given. */
#ifndef FOLDED_H
#define FOLDED_H

#include <stdio.h>

#include "calltree.h"

/* A line holds at most this many frames: a deeper stack keeps its
 * outermost FOLDED_MAX_DEPTH - 1 and ends with the frame "[N frames cut]",
 * so that the output is at most lines x FOLDED_MAX_DEPTH names, whatever
 * the depth the recording claims. Counts are never cut: they still sum to
 * the total. */
#define FOLDED_MAX_DEPTH 256

/** Write one line per top-down node with a self cost `c` above zero: the
 * frame names from the outermost (frames_name_dup(), ';' written as ':') and
 * the cost; the root's own cost (stacks with no frames) as "[no stack]".
 * Lines come in depth-first order of the tree's current sort. Returns 0,
 * or -1 when writing failed (errno set by stdio). O(output). */
int folded_write(const struct calltree *t, enum cost_type c, FILE *f);

#endif
