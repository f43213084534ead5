// SPDX-License-Identifier: MIT
/* Evenly spaced series (timeseries.h): points are filled in order as the
 * reader's clock passes them, so memory is the points, whatever the run. */
#include "timeseries.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

struct timeseries *timeseries_new(uint32_t npoints, uint64_t end_ms)
{
    if (npoints < 1 || npoints > TIMESERIES_MAX_POINTS) {
        return NULL;
    }
    struct timeseries *s = xcalloc(1, sizeof *s);
    s->points = xcalloc(npoints, sizeof *s->points);
    s->npoints = npoints;
    s->end_ms = end_ms;
    for (uint32_t i = 0; i < npoints; i++) {
        /* 128 bits: end_ms * i must not wrap for any run length. */
        s->points[i].ms =
            npoints == 1 ? end_ms : (uint64_t)((unsigned __int128)end_ms * i / (unsigned __int128)(npoints - 1));
    }
    return s;
}

void timeseries_free(struct timeseries *s)
{
    if (!s) {
        return;
    }
    free(s->points);
    free(s->groups);
    free(s->groups_max);
    free(s);
}

void timeseries_reach(struct timeseries *s, uint64_t ms, const struct ts_values *now, struct ts_values *hi)
{
    /* UINT64_MAX is the end of the run: it reaches every point, even one
     * at UINT64_MAX (a file whose clock ends there). */
    while (s->filled < s->npoints && (s->points[s->filled].ms < ms || ms == UINT64_MAX)) {
        struct ts_point *p = &s->points[s->filled++];
        p->at = *now;
        p->max = *hi;
        /* Events carry the time of the TIME record before them: all of
         * them belong to the first point they reach, none to the next. */
        *hi = *now;
    }
}

int timeseries_set_groups(struct timeseries *s, uint32_t ngroups)
{
    if (ngroups < 1 || ngroups > TIMESERIES_MAX_GROUPS || s->groups) {
        return -1;
    }
    s->groups = xcalloc((size_t)s->npoints * ngroups, sizeof *s->groups);
    s->groups_max = xcalloc((size_t)s->npoints * ngroups, sizeof *s->groups_max);
    s->ngroups = ngroups;
    return 0;
}

void timeseries_reach_groups(struct timeseries *s, uint64_t ms, const struct ts_group_values *now,
                             struct ts_group_values *hi)
{
    if (!s->groups) {
        return;
    }
    /* The same points timeseries_reach() fills for this `ms`. */
    while (s->groups_filled < s->npoints && (s->points[s->groups_filled].ms < ms || ms == UINT64_MAX)) {
        memcpy(&s->groups[(size_t)s->groups_filled * s->ngroups], now, s->ngroups * sizeof *now);
        memcpy(&s->groups_max[(size_t)s->groups_filled * s->ngroups], hi, s->ngroups * sizeof *hi);
        memcpy(hi, now, s->ngroups * sizeof *now);
        s->groups_filled++;
    }
}
