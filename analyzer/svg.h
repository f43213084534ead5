// SPDX-License-Identifier: MIT
/* A self-contained interactive SVG flame graph: frames given in pre-order
 * with their depth and cost, written as one file with its own script
 * (click to zoom, reset, search with the matched share, a tooltip with the
 * exact cost and share of every frame). No external file, font or network.
 * Every name is escaped: a frame name can never inject markup or script.
 * Never prints anywhere but the stream it is given. */
#ifndef SVG_H
#define SVG_H

#include <stdint.h>
#include <stdio.h>

#include "calltree.h"

/*
 * How to use:
 *
 *     struct svg *g = svg_new(&opts);
 *     svg_frame(g, 0, "all", total, 0);             // the root, depth 0
 *     svg_frame(g, 1, "main", 900, 0);              // its children follow it,
 *     svg_frame(g, 2, "make_table", 900, 0);        // depth-first
 *     rc = svg_write(g, f); svg_free(g);
 *
 * A frame's x is its parent's x plus the costs of the siblings before it,
 * so children are drawn inside their parent when their costs sum to at
 * most the parent's.
 */

struct svg_options {
    const char *title; /* first line of the heading (program, cost, window); escaped */
    const char *subtitle; /* second line, or NULL */
    const char *unit; /* "bytes" or "calls": printed after costs */
    int flame; /* 1: root at the bottom, stacks upwards; 0: icicle, root at the top */
    int diff; /* 1: frames carry a base cost: red grew, blue shrank */
};

struct svg;

/** A new, empty graph. `o` is copied, its strings are not: they must live
 * until svg_write(). Dies only on out of memory. */
struct svg *svg_new(const struct svg_options *o);
/** Release; accepts NULL. */
void svg_free(struct svg *g);
/** Add a frame at `depth` (0 for the root, then at most one more than the
 * frame before). `name` is copied. `base` is the cost in the base
 * recording (diff graphs only). Frames deeper than a skipped depth are
 * dropped. O(1) amortized. */
void svg_frame(struct svg *g, uint32_t depth, const char *name, uint64_t cost, uint64_t base);
/** Write the graph: frames narrower than a tenth of a pixel are not
 * drawn but listed for the search (the note line says how many). Returns 0, or -1 when
 * writing failed (errno set by stdio). O(frames). */
int svg_write(const struct svg *g, FILE *f);

/** The frames of `t` for cost `c` into `g`, depth-first in the tree's
 * current sort: the top-down tree (root's children: outermost frames) or
 * the bottom-up one (allocation sites first). Nodes with a zero inclusive
 * cost are left out. The root is named `root_name`. */
void svg_add_tree(struct svg *g, const struct calltree *t, enum calltree_orient o, enum cost_type c,
                  const char *root_name);

#endif
