// SPDX-License-Identifier: MIT
/* Choosing the top stacks of a cost and running the pass with them as
 * the series' groups (topseries.h). */
#include "topseries.h"

#include <stdlib.h>

#include "util.h"

uint32_t topseries_rank(const struct accounting *a, enum cost_type c, uint32_t n, uint32_t *traces, uint64_t *costs)
{
    uint32_t have = 0;
    uint32_t nt = accounting_ntraces(a);
    for (uint32_t t = 0; t < nt && n > 0; t++) {
        struct cost_vec v;
        cost_of_trace(a, t, &v);
        uint64_t x = v.v[c];
        if (x == 0 || (have == n && x <= costs[have - 1])) {
            continue;
        }
        /* Insert after every entry at least as large: ties keep id order;
         * when full, the smallest falls off. */
        uint32_t at = have < n ? have : n - 1;
        while (at > 0 && costs[at - 1] < x) {
            costs[at] = costs[at - 1];
            traces[at] = traces[at - 1];
            at--;
        }
        costs[at] = x;
        traces[at] = t;
        have += have < n;
    }
    return have;
}

int topseries_run(const char *path, const struct model *m, enum cost_type rank, uint32_t n, uint32_t points,
                  struct topseries **out, int *err_errno)
{
    *out = NULL;
    struct topseries *t = xcalloc(1, sizeof *t);
    t->rank = rank;
    t->n = topseries_rank(m->acct, rank, n, t->traces, t->costs);
    uint32_t *group = NULL;
    struct analysis_query q = ANALYSIS_QUERY_INIT;
    q.series_points = points;
    if (t->n > 0) {
        group = xcalloc(m->nnodes ? m->nnodes : 1, sizeof *group);
        for (uint32_t i = 0; i < t->n; i++) {
            if (t->traces[i] < m->nnodes) {
                group[t->traces[i]] = i + 1;
            }
        }
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
