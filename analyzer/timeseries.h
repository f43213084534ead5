// SPDX-License-Identifier: MIT
/* Heap in use, mapped memory and RSS over a run, as evenly spaced points,
 * each with its exact value at that time and the largest value since the
 * point before. Filled by the analysis pass (analysis.h) as it reads the
 * recording; read by memprint --timeline and memtui's over-time view. */
#ifndef TIMESERIES_H
#define TIMESERIES_H

#include <stdint.h>

/* Values at one moment. */
struct ts_values {
    uint64_t heap; /* live requested bytes (of the blocks the analysis keeps) */
    uint64_t mapped; /* bytes directly mapped (mmap, brk; docs/definitions.md) */
    uint64_t rss; /* latest RSS sample of the process; 0 before the first */
};

struct ts_point {
    uint64_t ms; /* since the start of the run */
    struct ts_values at; /* after every event stamped at or before `ms` */
    struct ts_values max; /* largest since the previous point (its time excluded); the first: since the start */
};

struct timeseries {
    struct ts_point *points; /* npoints, ms increasing */
    uint32_t npoints;
    uint64_t end_ms; /* time of the last point */
    /* Filled by the analysis from its accounting: equal to the summary's
     * figures when nothing is filtered. */
    uint64_t peak_bytes, peak_ms; /* heap peak and when it was first reached */
    uint64_t mapped_peak, mapped_peak_ms;
    uint64_t rss_peak;
    /* Builder state. */
    uint32_t filled;
};

/** A series of `npoints` points (1 to TIMESERIES_MAX_POINTS) evenly
 * spaced over [0, end_ms]: point i at end_ms * i / (npoints - 1) (one
 * point: at end_ms). Returns NULL for a bad count. Free with
 * timeseries_free(). */
struct timeseries *timeseries_new(uint32_t npoints, uint64_t end_ms);
#define TIMESERIES_MAX_POINTS 100000
/** Release; accepts NULL. */
void timeseries_free(struct timeseries *s);
/** For the builder: time moves on to `ms` (events from now on are stamped
 * `ms` or later): every point before `ms` not filled yet takes `now` as its
 * value and `hi` as its maximum, `hi` being reset to `now` after each.
 * O(points filled). Pass UINT64_MAX at the end of the data. */
void timeseries_reach(struct timeseries *s, uint64_t ms, const struct ts_values *now, struct ts_values *hi);

#endif
