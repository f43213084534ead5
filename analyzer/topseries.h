// SPDX-License-Identifier: MIT
/* The allocation stacks with the most of a cost, and each one's share of
 * the heap over time: memtui's stacked chart (heap in use, allocations or
 * temporary allocations, split by the top stacks) and its list of the
 * stacks live at a moment. The figures are the analysis pass's
 * (analysis.h); this only chooses the stacks and asks for their groups.
 * Never prints. */
#ifndef TOPSERIES_H
#define TOPSERIES_H

#include <stdint.h>

#include "accounting.h"
#include "analysis.h"
#include "costs.h"
#include "model.h"

/* The most stacks a chart splits off (the rest is one "other"). */
#define TOPSERIES_MAX 16

/** The (at most) `n` traces of `a` with the largest cost `c`, largest
 * first (ties: the smaller trace id first), into traces[] and their cost
 * into costs[] (both of n entries); traces whose cost is 0 are left out.
 * Returns how many. O(traces × n). */
uint32_t topseries_rank(const struct accounting *a, enum cost_type c, uint32_t n, uint32_t *traces, uint64_t *costs);

struct topseries {
    enum cost_type rank; /* what chose the stacks */
    uint32_t n; /* stacks split off, 0..TOPSERIES_MAX */
    uint32_t traces[TOPSERIES_MAX]; /* model nodes, the largest first */
    uint64_t costs[TOPSERIES_MAX]; /* their `rank` cost over the whole run */
    struct analysis *a; /* a->series: the whole run's, with group i = traces[i] */
};

/** The whole run's series of `points` points (analysis.h) of the recording
 * at `path` (loaded as `m`), with the `n` (<= TOPSERIES_MAX) stacks of
 * m->acct with the largest cost `rank` as its groups. One pass over the
 * file. Returns 0 with *out (free with topseries_free()), or analysis_run()'s
 * negative status. */
int topseries_run(const char *path, const struct model *m, enum cost_type rank, uint32_t n, uint32_t points,
                  struct topseries **out, int *err_errno);
/** Release; accepts NULL. */
void topseries_free(struct topseries *t);

#endif
