// SPDX-License-Identifier: MIT
/* Cost vectors read from an accounting (costs.h). */
#include "costs.h"

#include <string.h>

static const char *const names[COST_NTYPES] = {"calls",  "temporary", "peak",   "leaked",     "allocated",
                                               "mapped", "time",      "growth", "unreachable"};

void cost_of_trace(const struct accounting *a, uint32_t trace, struct cost_vec *out)
{
    memset(out, 0, sizeof *out);
    const struct acct_cost *c = accounting_cost(a, trace);
    if (!c) {
        return;
    }
    out->v[COST_CALLS] = c->calls;
    out->v[COST_TEMPORARY] = c->temporary;
    out->v[COST_PEAK] = accounting_at_peak(a, trace);
    out->v[COST_LEAKED] = c->live;
    out->v[COST_ALLOCATED] = c->allocated;
    out->v[COST_MAPPED] = accounting_mapped_at_peak(a, trace);
    out->v[COST_TIME] = c->time_ns;
    out->v[COST_UNREACHABLE] = c->unreachable;
}

void cost_of_trace_in(const struct accounting *a, const struct growth *g, uint32_t trace, struct cost_vec *out)
{
    cost_of_trace(a, trace, out);
    if (g) {
        out->v[COST_GROWTH] = growth_trace_cost(g, trace);
    }
}

uint64_t cost_total(const struct accounting *a, enum cost_type c)
{
    const struct acct_totals *t = accounting_totals(a);
    switch (c) {
    case COST_CALLS: return t->allocations;
    case COST_TEMPORARY: return t->temporary;
    case COST_PEAK: return t->peak_bytes;
    case COST_LEAKED: return t->live_bytes;
    case COST_ALLOCATED: return t->allocated_bytes;
    case COST_MAPPED: return t->mapped_peak;
    case COST_TIME: return t->time_ns;
    case COST_UNREACHABLE: return t->unreachable_bytes;
    default: return 0;
    }
}

const char *cost_name(enum cost_type c)
{
    return (unsigned)c < COST_NTYPES ? names[c] : "";
}

int cost_parse(const char *s, enum cost_type *out)
{
    for (int i = 0; i < COST_NTYPES; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = (enum cost_type)i;
            return 0;
        }
    }
    return -1;
}

const char *cost_unit(enum cost_type c)
{
    switch (c) {
    case COST_CALLS:
    case COST_TEMPORARY: return "calls";
    case COST_TIME: return "ns";
    case COST_GROWTH: return "bytes/s";
    default: return "bytes";
    }
}

int cost_recorded(const struct memfmt_header *h, enum cost_type c)
{
    return c != COST_TIME || (h->flags & MEMFMT_HF_TIMED) != 0;
}

int cost_any(const struct cost_vec *v)
{
    for (int i = 0; i < COST_NTYPES; i++) {
        if (v->v[i]) {
            return 1;
        }
    }
    return 0;
}

void cost_add(struct cost_vec *dst, const struct cost_vec *src)
{
    for (int i = 0; i < COST_NTYPES; i++) {
        dst->v[i] += src->v[i];
    }
}
