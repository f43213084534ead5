// SPDX-License-Identifier: MIT
/* The comparison of two recordings (memprint --diff): their top-down call
 * trees merged into one, frames matched by function name and source file,
 * never by address, so that two builds of one program compare. Each node
 * has the base's and the new recording's costs of every type. Read by
 * memprint's diff report, its differential folded stacks and flame graph,
 * and by memtui. Never prints but to the stream it is given. */
#ifndef DIFF_H
#define DIFF_H

#include <stdint.h>
#include <stdio.h>

#include "calltree.h"
#include "costs.h"
#include "svg.h"

struct diff_node {
    uint32_t parent; /* CALLTREE_NONE for the root */
    uint32_t depth;
    char *name; /* frames_name_dup() of the frame; "[root]" for the root */
    char *file; /* source file, or NULL */
    struct cost_vec base_self, base_incl; /* in the base recording */
    struct cost_vec new_self, new_incl; /* in the new one */
    uint32_t *kids; /* children, sorted by name then file */
    uint32_t nkids, kids_cap;
};

struct difftree {
    struct diff_node *nodes; /* [0] is the root */
    uint32_t n;
    uint32_t cap;
    /* Set by the caller: whether each recording holds allocator time
     * (cost_recorded()); the reports print COST_TIME only when both do. */
    int base_timed, new_timed;
};

/** Merge the top-down trees of `base` and `newer` (calltree_build() of
 * each recording): nodes with the same name and file under the same
 * merged parent are one. The root's costs are the two trees' roots' (the
 * two summaries' figures). Memory and time: O(nodes of both trees). Dies
 * only on out of memory; free with diff_free(). */
struct difftree *diff_build(const struct calltree *base, const struct calltree *newer);
/** Release; accepts NULL. */
void diff_free(struct difftree *d);

/** Differential folded stacks for cost `c`: "outer;...;inner BASE NEW",
 * one line per node with a self cost in either recording (the input of
 * flamegraph.pl's differential mode). Returns 0 or -1 (errno by stdio). */
int diff_write_folded(const struct difftree *d, enum cost_type c, FILE *f);
/** The merged tree's frames into a diff flame graph (svg_options.diff set):
 * widths by the new recording's cost, colour by the change. */
void diff_add_svg(const struct difftree *d, enum cost_type c, struct svg *g);

/** The comparison as text: the six figures of both recordings (roots of
 * the merged tree) with their changes, then for each cost type the `top`
 * call stacks whose cost changed most (innermost frame first, function
 * and source file). `base_name`/`new_name` head the columns. */
void diff_print_text(const struct difftree *d, const char *base_name, const char *new_name, uint32_t top, FILE *f);
/** The same as one JSON object. */
void diff_print_json(const struct difftree *d, const char *base_name, const char *new_name, uint32_t top, FILE *f);
#endif
