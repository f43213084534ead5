// SPDX-License-Identifier: MIT
/* sites.c's contract: the Summary's top entries of each cost as
 * memprint's report ranks them (report.h: call stacks whose frames read
 * the same are one entry), so that the Summary's first site of a cost is
 * memprint's first entry of that section, with the same figure. */
#ifndef TUI_SITES_H
#define TUI_SITES_H

#include <stdint.h>

#include "accounting.h"
#include "costs.h"
#include "growth.h"
#include "model.h"
#include "symbolize.h"

/* Entries kept per cost. */
#define SITES_TOP 5

/* One entry: a merged call stack and its cost. */
struct site {
    uint64_t value; /* its cost, as memprint prints it */
    double share; /* percent of the cost's total */
    char *name; /* the innermost frame's name, frames_name_dup()'s form: the tree's function name */
    struct sym_frame frame; /* the innermost frame: the allocation call of this stack (strings owned here) */
};

struct sites {
    struct site top[COST_NTYPES][SITES_TOP];
    uint32_t n[COST_NTYPES];
};

/** The top entries of every cost of model `m` for the costs in `a`
 * (m->acct, or a window's accounting with `windowed` set, memprint's way
 * of restricting a report), growth from the fit `growth` (NULL: none). Builds a report (report.h) and frees it:
 * the report's sort keeps its key in a static, so the caller serializes
 * calls made from several threads. Returns NULL only when the symbolizer
 * cannot start. */
struct sites *sites_new(const struct model *m, const struct accounting *a, int windowed, const struct growth *growth);
/** Release; accepts NULL. */
void sites_free(struct sites *s);

#endif
