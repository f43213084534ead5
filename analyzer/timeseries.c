// SPDX-License-Identifier: MIT
/* Evenly spaced series (timeseries.h): points are filled in order as the
 * reader's clock passes them, so memory is the points, whatever the run. */
#include "timeseries.h"

#include <stdlib.h>

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
