// SPDX-License-Identifier: MIT
/* The call stacks with the most of a cost, and each one's share of the
 * heap over time: memtui's stacked chart (heap in use, allocations or
 * temporary allocations, split by the top stacks) and its list of the
 * stacks live at a moment. Stacks are memprint's: traces whose frames
 * read the same are one (report.h), so each figure is that of a memprint
 * entry. The figures are the analysis pass's (analysis.h); this only
 * chooses the stacks and asks for their groups. Never prints. */
#ifndef TOPSERIES_H
#define TOPSERIES_H

#include <stdint.h>

#include "accounting.h"
#include "analysis.h"
#include "costs.h"
#include "model.h"
#include "report.h"

/* The most stacks a chart splits off (the rest is one "other"). */
#define TOPSERIES_MAX 16

/* One ranked stack. */
struct topseries_stack {
    uint32_t stack; /* index into r->stacks */
    uint32_t trace; /* its first trace (a model node): what names it */
    uint64_t cost; /* the sum of its traces' cost */
    uint64_t blocks; /* the sum of its traces' live blocks in the accounting */
};

/** The (at most) `n` stacks of report `r` with the largest cost `c` in
 * accounting `a` (r's model's, or a query's on the same model: its traces
 * are the model's nodes), counting only the traces `keep` keeps (NULL:
 * all), largest first (ties: the first stack of r first), into out[] (n
 * entries); stacks whose cost is 0 are left out. Returns how many;
 * *nonzero (may be NULL): how many stacks have some. O(traces + stacks × n). */
uint32_t topseries_rank(const struct report *r, const struct accounting *a, const uint8_t *keep, enum cost_type c,
                        uint32_t n, struct topseries_stack *out, uint32_t *nonzero);

struct topseries {
    enum cost_type rank; /* what chose the stacks */
    uint32_t n; /* stacks split off, 0..TOPSERIES_MAX */
    struct topseries_stack top[TOPSERIES_MAX]; /* the largest first; cost: over the whole run */
    struct analysis *a; /* a->series: the whole run's, with group i = top[i]'s traces */
};

/* What a stacked series is of. */
struct topseries_query {
    const struct accounting *ranked; /* whose costs choose the stacks (with keep): m->acct, or a query's on m */
    const uint8_t *keep; /* analysis_query.keep for the series (NULL: every stack) */
    uint32_t thread; /* analysis_query.thread (0: every thread) */
    enum cost_type rank; /* the cost that chooses them */
    uint32_t n; /* how many stacks, at most TOPSERIES_MAX */
    uint32_t points; /* analysis_query.series_points */
};

/** The whole run's series (analysis.h) of the recording at `path` (loaded
 * as `m`, of which `r` is the report), of the blocks q->keep and q->thread
 * keep, with the q->n stacks with the largest cost q->rank in q->ranked
 * as its groups. One pass over the file. Returns 0 with *out (free with
 * topseries_free()), or analysis_run()'s negative status. */
int topseries_run(const char *path, const struct model *m, const struct report *r, const struct topseries_query *q,
                  struct topseries **out, int *err_errno);
/** Release; accepts NULL. */
void topseries_free(struct topseries *t);

#endif
