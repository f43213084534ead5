// SPDX-License-Identifier: MIT
/* The cost types every analysis is computed for (calls, temporary, peak,
 * leaked, allocated, mapped, allocator time, growth), as one vector per
 * trace, read from an accounting (growth: from the same pass's growth
 * fit, growth.h). Shared by the call tree, the exports and the front ends, so
 * that "peak" means the same everywhere (docs/definitions.md). */
#ifndef COSTS_H
#define COSTS_H

#include <stdint.h>

#include "accounting.h"
#include "growth.h"

enum cost_type {
    COST_CALLS, /* calls to allocation functions */
    COST_TEMPORARY, /* temporary allocations */
    COST_PEAK, /* bytes live at the moment of the heap peak */
    COST_LEAKED, /* bytes live at the end */
    COST_ALLOCATED, /* requested bytes, summed */
    COST_MAPPED, /* bytes directly mapped at the moment of the mapped peak */
    COST_TIME, /* nanoseconds in the allocator (memrec --time; 0 when not timed) */
    COST_GROWTH, /* bytes per second of steady growth (growth_trace_cost(); 0 without a growth fit) */
    COST_UNREACHABLE, /* bytes leaked with no pointer left to them (memrec's scan at the end; 0 without one) */
    COST_NTYPES,
};

/* One value per cost type. */
struct cost_vec {
    uint64_t v[COST_NTYPES];
};

/** The costs of `trace` in `a` (an accounting kept per trace), all zero
 * when it has none. Summed over every trace of `a` (0 included), each
 * equals the matching total of accounting_totals(a): allocations,
 * temporary, peak_bytes, live_bytes, allocated_bytes, mapped_peak, time_ns (for a
 * sampled recording, up to the rounding of each estimate; memprint's
 * summary then prints exact call and byte counts instead, model.h). O(1). */
void cost_of_trace(const struct accounting *a, uint32_t trace, struct cost_vec *out);
/** cost_of_trace() with COST_GROWTH set from `g`, the growth fit of the
 * same pass (growth_trace_cost(); NULL: 0). Summed over every trace, the
 * growth equals growth_costs_total(g). O(1). */
void cost_of_trace_in(const struct accounting *a, const struct growth *g, uint32_t trace, struct cost_vec *out);
/** The total of `c` in `a`'s totals: what the summary prints for it (0
 * for COST_GROWTH, which is no accounting figure: growth_costs_total()). */
uint64_t cost_total(const struct accounting *a, enum cost_type c);
/** Name of a cost type as on the command line ("calls", "temporary",
 * "peak", "leaked", "allocated", "mapped", "time", "growth", "unreachable"); "" for a
 * bad value. */
const char *cost_name(enum cost_type c);
/** Parse a name given by cost_name(). Returns 0 with *out set, or -1. */
int cost_parse(const char *s, enum cost_type *out);
/** The unit of a cost type's figures: "calls", "bytes", "ns" or "bytes/s". */
const char *cost_unit(enum cost_type c);
/** 1 when the recording `m` holds the figures of cost type `c`: all but
 * COST_TIME always; COST_TIME only in a timed recording (memrec --time,
 * header flag MEMFMT_HF_TIMED). */
int cost_recorded(const struct memfmt_header *h, enum cost_type c);
/** 1 when some cost of `v` is not zero. */
int cost_any(const struct cost_vec *v);
/** dst += src, every type. */
void cost_add(struct cost_vec *dst, const struct cost_vec *src);

#endif
