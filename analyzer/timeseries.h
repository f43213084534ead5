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
    /* Counted from the start of the run (never decrease): the kept
     * allocation events and, of them, the temporary ones (their free). In
     * a sampled recording these count the sampled events, not estimates. */
    uint64_t calls;
    uint64_t temporary;
};

/* What each group of traces has at one point (timeseries_set_groups()):
 * the same figures as ts_values' heap, calls and temporary, for the kept
 * blocks of the group's traces only. */
struct ts_group_values {
    uint64_t live; /* live requested bytes */
    uint64_t calls; /* allocations since the start */
    uint64_t temporary; /* temporary allocations since the start */
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
    /* Groups of traces (analysis_query.series_group): ngroups values per
     * point, groups[point * ngroups + group], each at the point's moment
     * (as `at`); groups_max[...] the same at the moment `max.heap` was
     * reached (the heap's largest since the point before). NULL and 0
     * without groups. */
    struct ts_group_values *groups, *groups_max;
    uint32_t ngroups;
    /* Builder state. */
    uint32_t filled, groups_filled;
};

/** A series of `npoints` points (1 to TIMESERIES_MAX_POINTS) evenly
 * spaced over [0, end_ms]: point i at end_ms * i / (npoints - 1) (one
 * point: at end_ms). Returns NULL for a bad count. Free with
 * timeseries_free(). */
struct timeseries *timeseries_new(uint32_t npoints, uint64_t end_ms);
#define TIMESERIES_MAX_POINTS 100000
/** Give the series `ngroups` groups of traces (1 to TIMESERIES_MAX_GROUPS),
 * all zero; before the first timeseries_reach_groups(). Returns 0, or -1
 * for a bad count. */
int timeseries_set_groups(struct timeseries *s, uint32_t ngroups);
#define TIMESERIES_MAX_GROUPS 64
/** For the builder, before timeseries_reach() with the same `ms`: every
 * point before `ms` (all of them for UINT64_MAX) whose groups are not
 * filled yet takes `now` and `hi` (ngroups values each: the groups now,
 * and when the heap was last at its largest), `hi` being reset to `now`
 * after each, as timeseries_reach() resets its own. No-op without groups. */
void timeseries_reach_groups(struct timeseries *s, uint64_t ms, const struct ts_group_values *now,
                             struct ts_group_values *hi);
/** Release; accepts NULL. */
void timeseries_free(struct timeseries *s);
/** For the builder: time moves on to `ms` (events from now on are stamped
 * `ms` or later): every point before `ms` not filled yet takes `now` as its
 * value and `hi` as its maximum, `hi` being reset to `now` after each.
 * O(points filled). Pass UINT64_MAX at the end of the data. */
void timeseries_reach(struct timeseries *s, uint64_t ms, const struct ts_values *now, struct ts_values *hi);

#endif
