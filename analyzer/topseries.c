// SPDX-License-Identifier: MIT
/* Choosing the top stacks of a cost and running the pass with them as
 * the series' groups (topseries.h). */
#include "topseries.h"

#include <stdlib.h>

#include "util.h"

uint32_t topseries_rank(const struct report *r, const struct accounting *a, const uint8_t *keep, enum cost_type c,
                        uint32_t n, struct topseries_stack *out, uint32_t *nonzero)
{
    uint32_t ns = r->nstacks;
    struct topseries_stack *sum = xcalloc(ns ? ns : 1, sizeof *sum);
    for (uint32_t s = 0; s < ns; s++) {
        sum[s].stack = s;
        sum[s].trace = UINT32_MAX;
    }
    uint32_t nt = accounting_ntraces(a);
    for (uint32_t t = 0; t < nt; t++) {
        uint32_t s = report_stack_of(r, t);
        const struct acct_cost *ac = accounting_cost(a, t);
        if (s == UINT32_MAX || !ac || (keep && (t >= r->model->nnodes || !keep[t]))) {
            continue;
        }
        struct cost_vec v;
        cost_of_trace(a, t, &v);
        sum[s].cost += v.v[c];
        sum[s].blocks += ac->live_blocks;
        if (sum[s].trace == UINT32_MAX) {
            sum[s].trace = t;
        }
    }
    uint32_t have = 0, any = 0;
    for (uint32_t s = 0; s < ns && n > 0; s++) {
        uint64_t x = sum[s].cost;
        any += x > 0;
        if (x == 0 || (have == n && x <= out[have - 1].cost)) {
            continue;
        }
        /* Insert after every entry at least as large: ties keep the
         * report's order; when full, the smallest falls off. */
        uint32_t at = have < n ? have : n - 1;
        while (at > 0 && out[at - 1].cost < x) {
            out[at] = out[at - 1];
            at--;
        }
        out[at] = sum[s];
        have += have < n;
    }
    free(sum);
    if (nonzero) {
        *nonzero = any;
    }
    return have;
}

int topseries_run(const char *path, const struct model *m, const struct report *r, const struct topseries_query *tq,
                  struct topseries **out, int *err_errno)
{
    *out = NULL;
    struct topseries *t = xcalloc(1, sizeof *t);
    t->rank = tq->rank;
    t->n =
        topseries_rank(r, tq->ranked, tq->keep, tq->rank, tq->n < TOPSERIES_MAX ? tq->n : TOPSERIES_MAX, t->top, NULL);
    uint32_t *group = NULL;
    struct analysis_query q = ANALYSIS_QUERY_INIT;
    q.series_points = tq->points;
    q.keep = tq->keep;
    q.thread = tq->thread;
    if (t->n > 0) {
        /* Group of each trace: 1 + the rank of its stack among the top. */
        uint32_t *rank_of = xcalloc(r->nstacks ? r->nstacks : 1, sizeof *rank_of);
        for (uint32_t i = 0; i < t->n; i++) {
            rank_of[t->top[i].stack] = i + 1;
        }
        group = xcalloc(m->nnodes ? m->nnodes : 1, sizeof *group);
        for (uint32_t x = 0; x < m->nnodes; x++) {
            uint32_t s = report_stack_of(r, x);
            group[x] = s == UINT32_MAX || (tq->keep && !tq->keep[x]) ? 0 : rank_of[s];
        }
        free(rank_of);
        q.series_group = group;
        q.series_groups = t->n;
    }
    int rc = analysis_run(path, m, &q, &t->a, err_errno);
    free(group);
    if (rc < 0) {
        free(t);
        return rc;
    }
    *out = t;
    return 0;
}

void topseries_free(struct topseries *t)
{
    if (!t) {
        return;
    }
    analysis_free(t->a);
    free(t);
}
