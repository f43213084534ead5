// SPDX-License-Identifier: MIT
/* Growth of live bytes over time (docs/definitions.md, "Memory growth"):
 * each trace's live bytes sampled at evenly spaced points of a window, and
 * a least-squares line fitted through them. Memory is 32 bytes per trace
 * id and GROWTH_POINTS doubles per trace with an event, whatever the number
 * of events (and 8 bytes per trace id for the fitted costs); each event
 * costs O(1) amortized. Fed by the analysis pass (analysis.c). Pure: no I/O. */
#ifndef GROWTH_H
#define GROWTH_H

#include <stddef.h>
#include <stdint.h>

#include "memfmt.h"

/* Points per series: the spacing doubles as the window grows, so a series
 * holds between GROWTH_POINTS / 2 and GROWTH_POINTS points. */
#define GROWTH_POINTS 64
/* An entry is shown when its fit explains this share of its variance. */
#define GROWTH_MIN_R2 0.8
/* Sampled recordings: a stack needs this many sampled allocations in the
 * window for its rate to be estimated. */
#define GROWTH_MIN_SAMPLES 20

struct growth;

/* A line fitted through a series. */
struct growth_fit {
    double rate; /* bytes per second, least squares; negative when shrinking */
    double r2; /* share of the variance the line explains, 0 to 1 (0 for a flat series) */
    double growing; /* share of the intervals between points where the value rose */
    double start, mid, end; /* live bytes at the first, middle and last point */
    uint32_t npoints;
};

/** A tracker for the window [from_ms, to_ms] (to_ms UINT64_MAX: to the
 * end); `sample_rate` 0 for a complete recording, else memrec's rate, by
 * which each event is weighted as the accounting weighs it. */
struct growth *growth_new(uint64_t from_ms, uint64_t to_ms, uint64_t sample_rate);
/** The sample rate, when the recording says it after the tracker was made
 * (before the first event). */
void growth_set_sample_rate(struct growth *g, uint64_t sample_rate);
/** Release; accepts NULL. */
void growth_free(struct growth *g);
/** The clock moved on to `ms`: events from now on are stamped `ms`. */
void growth_time(struct growth *g, uint64_t ms);
/** An allocation (`freed` 0) or a free of `size` bytes charged to `trace`. */
void growth_event(struct growth *g, uint32_t trace, uint64_t size, int freed);
/** A batch of events (memfmt_read_batch()), each as growth_event() with
 * its trace, or trace 0 for one of `ntraces` or above; events whose trace
 * `keep` (NULL: all) marks 0 are skipped. */
void growth_feed(struct growth *g, const struct memfmt_event *ev, size_t n, uint32_t ntraces, const uint8_t *keep);
/** After the last event; `end_ms` is the time the data stops. */
void growth_finish(struct growth *g, uint64_t end_ms);

/** Points after growth_finish() (0 or 1: the window is too short to fit). */
uint32_t growth_npoints(const struct growth *g);
/** Milliseconds between points (after growth_finish()). */
uint64_t growth_spacing_ms(const struct growth *g);
/** First point's time. */
uint64_t growth_from_ms(const struct growth *g);
/** The series of `trace` (growth_npoints() values), NULL when it had no
 * event; `samples` gets the allocations it made in the window. */
const double *growth_series(const struct growth *g, uint32_t trace, uint64_t *samples);
/** The whole heap's series (the sum of every trace's). */
const double *growth_total(const struct growth *g);
/** 1 when the recording was sampled. */
int growth_sampled(const struct growth *g);
/** Fit a line through `y` (growth_npoints() values spaced as g's points). */
void growth_fit_series(const struct growth *g, const double *y, struct growth_fit *out);
/** 1 when a fit counts as growth: rate > 0, r2 >= GROWTH_MIN_R2, the end
 * above the middle, and (sampled) at least GROWTH_MIN_SAMPLES samples. */
int growth_is_growth(const struct growth *g, const struct growth_fit *f, uint64_t samples);
/** A fit's growth as a cost (costs.h COST_GROWTH and the MOST MEMORY
 * GROWTH ranking): its rate in bytes per second, rounded, at least 1, for
 * a fit that counts as growth (`grows`: growth_is_growth()); else 0. */
uint64_t growth_cost_of_fit(const struct growth_fit *f, int grows);
/** The growth cost of `trace` (growth_cost_of_fit() of its own series),
 * fitted once for every trace at growth_finish(); 0 for a trace with no
 * event or before growth_finish(). O(1). */
uint64_t growth_trace_cost(const struct growth *g, uint32_t trace);
/** Sum of growth_trace_cost() over every trace: the call tree's root. */
uint64_t growth_costs_total(const struct growth *g);

#endif
