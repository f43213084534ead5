// SPDX-License-Identifier: MIT
/* Heap in use, mapped memory and RSS over a run, as evenly spaced points,
 * each with its exact value at that time and the largest value since the
 * point before. Filled by the analysis pass (analysis.h) as it reads the
 * recording; read by memprint --timeline and memtui's over-time view. */
#ifndef TIMESERIES_H
#define TIMESERIES_H

#include <stddef.h>
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
 * after each. Returns how many points it filled; no-op (0) without
 * groups. */
uint32_t timeseries_reach_groups(struct timeseries *s, uint64_t ms, const struct ts_group_values *now,
                                 struct ts_group_values *hi);
/** Release; accepts NULL. */
void timeseries_free(struct timeseries *s);
/*
 * The builder's log: the points are spaced over the run's length, which a
 * pass that reads the file while the model loads learns only at its end.
 * So the pass logs every clock tick instead (memrec writes one about every
 * 10 ms): the values then and the largest of each since the tick before,
 * delta-coded in a few bytes a tick; at the end the log becomes the
 * evenly spaced points, each exactly what it would have been had its time
 * been known from the start (timeseries_fill()).
 *
 *     struct ts_log log = TS_LOG_INIT;
 *     ... at each tick: timeseries_log_tick(&log, ms, &now, &hi); hi = now; ...
 *     struct timeseries *s = timeseries_new(npoints, end_ms);
 *     timeseries_fill(s, &log, &now, &hi);
 *     timeseries_log_release(&log);
 */
struct ts_log {
    uint8_t *buf; /* the ticks, varints */
    size_t len, cap;
    uint64_t ticks;
    uint64_t ms; /* the latest tick's time */
    struct ts_values last; /* and its values */
    /* Set once the log would pass max_bytes (0: TS_LOG_MAX_BYTES): the
     * ticks are dropped, and the series must come from a pass that knows
     * the run's length (timeseries_reach()). */
    int overflow;
    size_t max_bytes;
};
/* Over 3 million ticks, some 9 hours of a run at memrec's 100 a second: a
 * file with more (a hostile one) costs a second pass, not unbounded memory. */
#ifndef TS_LOG_MAX_BYTES /* a test build may set a smaller one */
#define TS_LOG_MAX_BYTES ((size_t)64 << 20)
#endif
#define TS_LOG_INIT                                                                                                    \
    {                                                                                                                  \
        NULL, 0, 0, 0, 0, {0, 0, 0, 0, 0}, 0, 0                                                                        \
    }
/** For the builder: time moves on to `ms` (greater than the previous
 * tick's): `now` holds the values after every event stamped before `ms`,
 * `hi` the largest heap, mapped and rss since the previous tick (its
 * values included; the first tick: since the start, from 0). Calls and
 * temporary never decrease: `now`'s are taken. O(1), a few bytes; past the
 * log's bound, none (overflow set, the log emptied). */
void timeseries_log_tick(struct ts_log *l, uint64_t ms, const struct ts_values *now, const struct ts_values *hi);
/** Fill every point of `s` not filled yet from the log (not overflowed): each point takes
 * the values after every event stamped at or before its time and the
 * largest since the point before (timeseries.h, struct ts_point); `now`
 * and `hi` are the values at the end of the data and the largest since
 * the last tick, as a last tick at UINT64_MAX (it reaches every point).
 * O(ticks + points). */
void timeseries_fill(struct timeseries *s, const struct ts_log *l, const struct ts_values *now,
                     const struct ts_values *hi);
/** For a builder that knows the run's length (the series made at its
 * start): time moves on to `ms` (events from now on are stamped `ms` or
 * later): every point before `ms` not filled yet takes `now` as its value
 * and `hi` as its maximum, `hi` being reset to `now` after each.
 * O(points filled). Pass UINT64_MAX at the end of the data. The same
 * points as the log's. */
void timeseries_reach(struct timeseries *s, uint64_t ms, const struct ts_values *now, struct ts_values *hi);
/** Release the log's bytes (the struct may be reused after TS_LOG_INIT). */
void timeseries_log_release(struct ts_log *l);

#endif
