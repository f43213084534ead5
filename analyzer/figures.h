// SPDX-License-Identifier: MIT
/* The numeric figures of memprint's summary, by their JSON names, computed
 * in one place: json.c prints them and checks.c tests conditions on them, so
 * a condition always sees the value the JSON shows. Pure: no I/O. */
#ifndef FIGURES_H
#define FIGURES_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* Leaks matched by a suppression (suppress.h): taken out of leaked_bytes
 * and leaked_allocations and shown as suppressed_leaked_*. */
struct figures_suppressed {
    uint64_t bytes, blocks;
    uint64_t unreachable_bytes, unreachable_blocks; /* of those, unreachable (the recording classified them) */
};

struct figure {
    const char *name; /* the JSON member name */
    int64_t value; /* exact; counts never reach 2^63 (sizes are capped at 128 TiB) */
    int measured; /* 0: not measured in this recording (JSON null): temporary when sampling, times when untimed */
};

/* How many figures there are: the same list for every recording. */
#define FIGURES_COUNT 41

/** Fill `out` (FIGURES_COUNT entries) with the figures of `m` as counted by
 * `a` (m->acct for the whole run, or an analysis's accounting for a window
 * or filter), leaks less `supp` (NULL: none suppressed). */
void figures_collect(const struct model *m, const struct accounting *a, const struct figures_suppressed *supp,
                     struct figure out[FIGURES_COUNT]);
/** The name of figure `i` (< FIGURES_COUNT), for lookups before any
 * recording is read. */
const char *figures_name(size_t i);
/** Index of the figure called `name`, or -1. */
int figures_find(const char *name);

#endif
