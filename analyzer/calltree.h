// SPDX-License-Identifier: MIT
/* The call tree of a recording for one set of per-trace costs: top-down
 * (from the outermost frame), bottom-up (from the allocation site,
 * expanding into its callers) and a flat list of functions, each with
 * inclusive and self costs of every cost type (costs.h). Frames are
 * symbolized frames (frames.h), inlined ones their own entries; frames
 * of one function (same name and source file) under one parent are one
 * node. Built from an accounting: the model's, or an analysis's for a
 * time window or filter (analysis.h). Never prints. */
#ifndef CALLTREE_H
#define CALLTREE_H

#include <stdint.h>

#include "accounting.h"
#include "costs.h"
#include "frames.h"

/*
 * How to use:
 *
 *     struct frames *fr = frames_new(model);             // once per recording
 *     struct calltree *t = calltree_build(fr, model->acct);   // once per cost set
 *     calltree_sort(t, COST_PEAK);                       // children by inclusive peak
 *     const struct calltree_node *root = calltree_node(t, CALLTREE_TOP_DOWN, 0);
 *     uint32_t n; const uint32_t *kids = calltree_children(t, CALLTREE_TOP_DOWN, 0, &n);
 *     ... calltree_node(t, CALLTREE_TOP_DOWN, kids[i])->incl.v[COST_PEAK] ...
 *     calltree_free(t); frames_free(fr);
 *
 * Node 0 of each orientation is the root: its inclusive cost of every type
 * equals the accounting's total for that type (cost_total(); for
 * COST_GROWTH, growth_costs_total()), exactly for
 * a complete recording (sampled: up to each estimate's rounding). Costs of trace 0 (no stack) are the root's self.
 * A stack starts at main() when it has it (the C library's frames above
 * it are dropped, as in memprint's reports).
 */

/** "No node": the root's parent. */
#define CALLTREE_NONE UINT32_MAX
/** Bottom-up paths are cut after this many frames; the cut part's cost
 * stays with the deepest node kept (its self cost). */
#define CALLTREE_MAX_DEPTH 1024

enum calltree_orient {
    CALLTREE_TOP_DOWN, /* root's children: outermost frames */
    CALLTREE_BOTTOM_UP, /* root's children: allocation sites (innermost frames) */
};

/* One function: frames with the same name and source file. */
struct calltree_func {
    const char *name; /* as frames_name_dup() gives it; owned by the tree */
    const struct sym_frame *frame; /* first frame seen (file, line, module, inlined); owned by frames */
    struct cost_vec self; /* stacks whose innermost frame is this function */
    struct cost_vec incl; /* stacks through this function, each counted once (recursion too) */
};

/* One node of a tree. */
struct calltree_node {
    uint32_t parent; /* CALLTREE_NONE for the root */
    uint32_t func; /* index into the function list; CALLTREE_NONE for the root */
    uint32_t depth; /* 0 for the root */
    /* A frame of the node's function on the node's own stacks (NULL for
     * the root): top-down, the first merged here; bottom-up, a site's
     * allocation call or a caller's call towards the node below it, from
     * the first stack merged (its file:line is one those stacks pass
     * through, which memtui's 'd' and massif's trees show). */
    const struct sym_frame *frame;
    /* Top-down: stacks ending here (innermost frame). Bottom-up: stacks
     * whose outermost frame kept is here. incl = self + children's incl. */
    struct cost_vec self;
    struct cost_vec incl;
};

struct calltree;

/** Build the trees and the function list for the costs of `a` (an
 * accounting kept per trace whose trace ids are the model's nodes, e.g.
 * model->acct or analysis->acct); `fr` must be of the same model. Trace
 * ids at or above the model's node count are charged to the root. Nodes
 * are made for traces with some cost only. Memory and time: O(model
 * nodes × inlined frames) for top-down and the functions; symbolizes each
 * node once (cached in `fr`). The bottom-up tree starts as its root only:
 * a node's children are made the first time calltree_children() is asked
 * for them (see there), so that its cost is what is read of it, never
 * allocation sites × depth up front. Children come in creation order
 * until calltree_sort(). Returns the tree (free with calltree_free());
 * dies only on out of memory. COST_GROWTH is 0 everywhere: see
 * calltree_build_growth(). */
struct calltree *calltree_build(struct frames *fr, const struct accounting *a);
/** calltree_build() with each trace's COST_GROWTH from `g`, the growth
 * fit of the pass that made `a` (analysis->growth; NULL: 0), so that a
 * node's growth is the sum of its stacks' (docs/definitions.md, "Memory
 * growth") and the root's is growth_costs_total(g). */
struct calltree *calltree_build_growth(struct frames *fr, const struct accounting *a, const struct growth *g);
/** Release; accepts NULL. */
void calltree_free(struct calltree *t);

/*
 * Bottom-up on demand. Every bottom-up node not yet expanded keeps the
 * top-down nodes it stands for (merged: stacks that meet in one top-down
 * node go on together), and expanding it moves each one frame up and
 * groups them by function. The first calltree_children() of the root
 * costs O(top-down nodes), of another node O(e log e) for the e top-down
 * nodes it stands for (at most the allocation sites below it). Reading a
 * node, its parent, its costs, or whether it has children is O(1) and
 * builds nothing. Nodes are never moved or freed before calltree_free(),
 * so pointers from calltree_node() and calltree_children() stay valid
 * while more nodes are built. The figures and the order of every node
 * are those the whole tree built at once gives. Not thread-safe, even
 * through a const tree.
 */

/** Number of nodes of the whole tree of one orientation (>= 1: the root).
 * For bottom-up this builds every node: O(allocation sites × depth,
 * depth <= CALLTREE_MAX_DEPTH), for front ends that walk the whole tree
 * anyway; calltree_built() is the cheap count. */
uint32_t calltree_size(const struct calltree *t, enum calltree_orient o);
/** Number of nodes built so far (ids in use are below it): the whole tree
 * for top-down, and for bottom-up what calltree_children() has expanded.
 * O(1). */
uint32_t calltree_built(const struct calltree *t, enum calltree_orient o);
/** Node `id` (< calltree_built()) of one orientation; NULL when out of
 * range. O(1), builds nothing. */
const struct calltree_node *calltree_node(const struct calltree *t, enum calltree_orient o, uint32_t id);
/** The children of node `id`: *n ids, in the order of the latest
 * calltree_sort(). The array belongs to the tree; its order is valid
 * until the next calltree_sort(), the array until calltree_free(). NULL
 * with *n = 0 for a leaf or a bad id. Bottom-up: the first call for a node
 * builds its children (see above); later calls are O(1). */
const uint32_t *calltree_children(const struct calltree *t, enum calltree_orient o, uint32_t id, uint32_t *n);
/** 1 when node `id` has children, without building them. O(1). */
int calltree_has_children(const struct calltree *t, enum calltree_orient o, uint32_t id);
/** 1 when node `id`'s children are built (always for top-down), so that
 * calltree_children() costs nothing: walks over what is built use it. */
int calltree_expanded(const struct calltree *t, enum calltree_orient o, uint32_t id);
/** Sort every children list of both orientations by inclusive cost `c`,
 * largest first (ties: by name, then by creation order, so the order is
 * stable across runs), and the function list by inclusive `c`, or by self
 * `c` with `by_self`. O(n log n) for the nodes built; bottom-up children
 * built later come sorted the same way. */
void calltree_sort(struct calltree *t, enum cost_type c, int by_self);

/** Number of functions. */
uint32_t calltree_nfuncs(const struct calltree *t);
/** Function `i` (an index from calltree_node()->func or from
 * calltree_func_order()); NULL when out of range. */
const struct calltree_func *calltree_func(const struct calltree *t, uint32_t i);
/** Function indexes in the order of the latest calltree_sort() (creation
 * order before). The array belongs to the tree. */
const uint32_t *calltree_func_order(const struct calltree *t, uint32_t *n);
enum calltree_link_kind {
    CALLTREE_CALLERS, /* the functions that call it */
    CALLTREE_CALLEES, /* the functions it calls */
};

/* A neighbour of a function and the cost of the stacks through the call
 * between them. */
struct calltree_link {
    uint32_t func; /* the neighbour's index */
    struct cost_vec incl; /* stacks with this call in them, each counted once (recursion too) */
};

/** The callers or the callees of function `f`, from the top-down tree:
 * *out gets a malloc'd array (the caller frees it; NULL when none) of one
 * entry per neighbour, in the order first met. A function that is the
 * outermost frame of a stack has no caller there. Returns the count; 0 for
 * a bad `f`. O(top-down nodes + functions) per call: for views, on demand. */
uint32_t calltree_func_links(const struct calltree *t, uint32_t f, enum calltree_link_kind kind,
                             struct calltree_link **out);

/** The name of node `id` (frames_name_dup() of its frame; "[root]" for the root). */
const char *calltree_name(const struct calltree *t, enum calltree_orient o, uint32_t id);

#endif
