// SPDX-License-Identifier: MIT
/* The Summary's top entries, from memprint's report (report.h): the same
 * merged call stacks in the same order, so that the two tools agree on
 * "the first peak consumer". Only the figures and the innermost frame of
 * each are kept; the report itself is freed at once. */
#define _GNU_SOURCE
#include "sites.h"

#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "report.h"
#include "util.h"

/* The report's section of each cost type; -1: none. */
static int section_of(enum cost_type c)
{
    switch (c) {
    case COST_CALLS: return REPORT_CALLS;
    case COST_TEMPORARY: return REPORT_TEMPORARY;
    case COST_PEAK: return REPORT_PEAK;
    case COST_LEAKED: return REPORT_LEAKED;
    case COST_ALLOCATED: return REPORT_ALLOCATED;
    case COST_MAPPED: return REPORT_MAPPED;
    case COST_TIME: return REPORT_TIME;
    case COST_GROWTH: return REPORT_GROWTH;
    default: return -1;
    }
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

static void keep_entry(struct site *out, const struct report *r, const struct report_stack *st, uint64_t value,
                       uint64_t total)
{
    out->value = value;
    out->share = total ? 100.0 * (double)value / (double)total : 0.0;
    struct sym_frame f;
    memset(&f, 0, sizeof f);
    if (report_frames(r, st, &f, 1) == 0) {
        memset(&f, 0, sizeof f);
    }
    out->name = frames_name_dup(&f);
    out->frame = f;
    out->frame.function = dup_or_null(f.function);
    out->frame.file = dup_or_null(f.file);
    out->frame.module = dup_or_null(f.module);
}

struct sites *sites_new(const struct model *m, const struct accounting *a, int windowed, const struct growth *growth)
{
    /* memprint's view of a window: the model with the window's costs
     * (memprint/sources.c). */
    struct model view = *m;
    view.acct = (struct accounting *)a;
    view.growth = growth;
    if (windowed) {
        view.has_counts = 0; /* the exact per-thread counts are the whole run's */
    }
    struct report *r = report_new(&view);
    if (!r) {
        return NULL;
    }
    struct sites *s = xcalloc(1, sizeof *s);
    for (int c = 0; c < COST_NTYPES; c++) {
        int sec = section_of((enum cost_type)c);
        if (sec < 0) {
            continue;
        }
        uint64_t total = cost_total(a, (enum cost_type)c);
        for (uint32_t i = 0; i < r->nranked[sec] && s->n[c] < SITES_TOP; i++) {
            const struct report_stack *st = &r->stacks[r->ranked[sec][i]];
            uint64_t v = report_cost(st, (enum report_section)sec);
            if (v == 0) {
                break; /* ranked: the rest are 0 too */
            }
            keep_entry(&s->top[c][s->n[c]++], r, st, v, total);
        }
    }
    /* The unreachable cost: MOST MEMORY LEAKED ranked as memprint
     * --unreachable ranks it, once the other costs have their entries. */
    if (!windowed && report_has_reach(m)) {
        report_rank_unreachable(r);
        uint64_t total = cost_total(a, COST_UNREACHABLE);
        for (uint32_t i = 0; i < r->nranked[REPORT_LEAKED] && s->n[COST_UNREACHABLE] < SITES_TOP; i++) {
            const struct report_stack *st = &r->stacks[r->ranked[REPORT_LEAKED][i]];
            keep_entry(&s->top[COST_UNREACHABLE][s->n[COST_UNREACHABLE]++], r, st, st->unreachable, total);
        }
    }
    report_free(r);
    return s;
}

void sites_free(struct sites *s)
{
    if (!s) {
        return;
    }
    for (int c = 0; c < COST_NTYPES; c++) {
        for (uint32_t i = 0; i < s->n[c]; i++) {
            struct site *e = &s->top[c][i];
            free(e->name);
            free((char *)e->frame.function);
            free((char *)e->frame.file);
            free((char *)e->frame.module);
        }
    }
    free(s);
}
