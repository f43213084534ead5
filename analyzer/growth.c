// SPDX-License-Identifier: MIT
/* Live bytes per trace at evenly spaced points (growth.h). Points are
 * filled lazily: a trace writes its value into the points the clock has
 * passed only when it changes (or at the end), so an event costs a compare
 * and an add; when the clock passes the last point, the spacing doubles
 * and each series keeps every other point, also lazily (a generation
 * count per trace). Never prints. */
#include "growth.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Doubling stops there: no run of a recording is 2^40 ms long. */
#define MAX_SPACING_MS ((uint64_t)1 << 40)

/* Per trace, indexed by the trace id: what each event touches, kept
 * small (32 bytes); the points are apart, made at a trace's first event. */
struct series_state {
    double live; /* bytes (weighted when sampling) */
    uint64_t samples; /* allocations stamped in the window */
    uint32_t epoch; /* g->epoch when its points were last brought up to date; 0: never */
    uint32_t filled; /* points written */
    uint32_t gen; /* spacing generation the points are in */
    uint32_t pts; /* 1 + index of its points in g->pool (GROWTH_POINTS each); 0: none yet */
};

struct growth {
    uint64_t from, to; /* window, to inclusive */
    uint64_t spacing; /* ms between points */
    uint32_t gen; /* doublings so far */
    uint32_t passed; /* points the clock has passed: final */
    uint32_t epoch; /* changes with passed or gen: a state of another epoch must catch up */
    uint64_t now;
    int in_window;
    double rate; /* sample rate; 0: complete */
    struct series_state *states; /* by trace */
    size_t states_cap;
    size_t nseries; /* traces with points */
    double *pool; /* GROWTH_POINTS per trace with points */
    size_t pool_cap;
    struct series_state total;
    double total_pts[GROWTH_POINTS];
    uint64_t *costs; /* by trace, after growth_finish(): growth_cost_of_fit() of its series */
    uint64_t costs_total;
    int finished;
};

struct growth *growth_new(uint64_t from_ms, uint64_t to_ms, uint64_t sample_rate)
{
    struct growth *g = xcalloc(1, sizeof *g);
    g->from = from_ms;
    g->to = to_ms;
    g->spacing = 10; /* memrec's clock ticks every 10 ms */
    g->rate = (double)sample_rate;
    g->in_window = from_ms == 0;
    g->epoch = 1;
    return g;
}

void growth_set_sample_rate(struct growth *g, uint64_t sample_rate)
{
    g->rate = (double)sample_rate;
}

void growth_free(struct growth *g)
{
    if (!g) {
        return;
    }
    free(g->states);
    free(g->pool);
    free(g->costs);
    free(g);
}

/* ---- the points ---- */

/* Time of point k at the current spacing, saturated. */
static uint64_t point_ms(const struct growth *g, uint64_t k)
{
    uint64_t d;
    if (__builtin_mul_overflow(k, g->spacing, &d) || d > UINT64_MAX - g->from) {
        return UINT64_MAX;
    }
    return g->from + d;
}

/* Points before `ms` that lie in the window. */
static uint32_t passed_before(const struct growth *g, uint64_t ms)
{
    uint32_t c = 0;
    while (c < GROWTH_POINTS && point_ms(g, c) < ms && point_ms(g, c) <= g->to) {
        c++;
    }
    return c;
}

/* The points of `s`, made when it has none. */
static double *points_of(struct growth *g, struct series_state *s)
{
    if (s->pts == 0) {
        xgrow((void **)&g->pool, &g->pool_cap, (g->nseries + 1) * GROWTH_POINTS, sizeof *g->pool);
        s->pts = (uint32_t)++g->nseries;
        s->gen = g->gen; /* met now: it was at 0 at the points before, none written */
    }
    return g->pool + (size_t)(s->pts - 1) * GROWTH_POINTS;
}

/* Bring `s` (points `pts`) to the current spacing and write its value
 * into the points passed since it last changed. */
static void bring_up(const struct growth *g, struct series_state *s, double *pts)
{
    while (s->gen < g->gen) {
        uint32_t keep = (s->filled + 1) / 2;
        for (uint32_t j = 1; j < keep; j++) {
            pts[j] = pts[2 * j];
        }
        s->filled = keep;
        s->gen++;
    }
    while (s->filled < g->passed) {
        pts[s->filled++] = s->live;
    }
    s->epoch = g->epoch;
}

static __attribute__((noinline)) void catch_up(struct growth *g, struct series_state *s)
{
    bring_up(g, s, points_of(g, s));
}

void growth_time(struct growth *g, uint64_t ms)
{
    if (ms <= g->now || g->finished) {
        return;
    }
    g->now = ms;
    g->in_window = ms >= g->from && ms <= g->to;
    for (;;) {
        uint32_t c = passed_before(g, ms);
        /* Every point passed and the window goes on: twice the spacing. */
        if (c == GROWTH_POINTS && point_ms(g, GROWTH_POINTS) <= g->to && g->spacing < MAX_SPACING_MS) {
            g->spacing *= 2;
            g->gen++;
            g->epoch++;
            continue;
        }
        if (c != g->passed) {
            g->passed = c;
            g->epoch++;
        }
        break;
    }
}

/* ---- events ---- */

/* Room for the state of `trace`. */
static __attribute__((noinline)) void grow_states(struct growth *g, uint32_t trace)
{
    size_t old = g->states_cap;
    xgrow((void **)&g->states, &g->states_cap, (size_t)trace + 1, sizeof *g->states);
    memset(g->states + old, 0, (g->states_cap - old) * sizeof *g->states);
}

static inline __attribute__((always_inline)) void feed(struct growth *g, int sampled, const struct memfmt_event *ev,
                                                       size_t n, uint32_t ntraces, const uint8_t *keep)
{
    if (g->total.epoch != g->epoch) {
        bring_up(g, &g->total, g->total_pts);
    }
    /* The clock does not move inside a batch: the total changes once, and
     * the fields read per event stay in registers. */
    double total = g->total.live;
    uint64_t in_window = (uint64_t)g->in_window;
    uint32_t epoch = g->epoch;
    struct series_state *states = g->states;
    size_t cap = g->states_cap;
    for (size_t i = 0; i < n; i++) {
        uint32_t t = ev[i].trace < ntraces ? ev[i].trace : 0;
        if (keep && !keep[t]) {
            continue;
        }
        if (t >= cap) {
            grow_states(g, t);
            states = g->states;
            cap = g->states_cap;
        }
        struct series_state *s = &states[t];
        if (s->epoch != epoch) {
            catch_up(g, s);
        }
        double v = (double)ev[i].size;
        if (sampled) {
            double p = -expm1(-v / g->rate);
            v = p > 0 ? v / p : 0;
        }
        if (ev[i].flags & MEMFMT_EV_FREE) {
            s->live = s->live > v ? s->live - v : 0;
            total = total > v ? total - v : 0;
        } else {
            s->live += v;
            total += v;
            s->samples += in_window;
        }
    }
    g->total.live = total;
}

void growth_feed(struct growth *g, const struct memfmt_event *ev, size_t n, uint32_t ntraces, const uint8_t *keep)
{
    if (g->rate > 0) {
        feed(g, 1, ev, n, ntraces, keep);
    } else {
        feed(g, 0, ev, n, ntraces, keep);
    }
}

void growth_event(struct growth *g, uint32_t trace, uint64_t size, int freed)
{
    struct memfmt_event e = {size, trace, freed ? MEMFMT_EV_FREE : 0, 0, 0};
    growth_feed(g, &e, 1, trace + 1, NULL);
}

void growth_finish(struct growth *g, uint64_t end_ms)
{
    if (g->finished) {
        return;
    }
    growth_time(g, end_ms < UINT64_MAX ? end_ms + 1 : end_ms);
    g->finished = 1;
    for (size_t i = 0; i < g->states_cap; i++) {
        if (g->states[i].pts) {
            catch_up(g, &g->states[i]);
        }
    }
    bring_up(g, &g->total, g->total_pts);
    /* Every trace's fit once: the call tree's cost of each trace, read as
     * often as trees are built. */
    g->costs = xcalloc(g->states_cap ? g->states_cap : 1, sizeof *g->costs);
    for (size_t i = 0; i < g->states_cap; i++) {
        const struct series_state *s = &g->states[i];
        if (s->pts == 0) {
            continue;
        }
        struct growth_fit f;
        growth_fit_series(g, g->pool + (size_t)(s->pts - 1) * GROWTH_POINTS, &f);
        g->costs[i] = growth_cost_of_fit(&f, growth_is_growth(g, &f, s->samples));
        g->costs_total += g->costs[i];
    }
}

/* ---- reading and fitting ---- */

uint32_t growth_npoints(const struct growth *g)
{
    return g->passed;
}

uint64_t growth_spacing_ms(const struct growth *g)
{
    return g->spacing;
}

uint64_t growth_from_ms(const struct growth *g)
{
    return g->from;
}

const double *growth_series(const struct growth *g, uint32_t trace, uint64_t *samples)
{
    if (trace >= g->states_cap || g->states[trace].pts == 0) {
        *samples = 0;
        return NULL;
    }
    const struct series_state *s = &g->states[trace];
    *samples = s->samples;
    return g->pool + (size_t)(s->pts - 1) * GROWTH_POINTS;
}

const double *growth_total(const struct growth *g)
{
    return g->total_pts;
}

int growth_sampled(const struct growth *g)
{
    return g->rate > 0;
}

void growth_fit_series(const struct growth *g, const double *y, struct growth_fit *out)
{
    memset(out, 0, sizeof *out);
    uint32_t n = g->passed;
    out->npoints = n;
    if (n == 0) {
        return;
    }
    out->start = y[0];
    out->mid = y[n / 2];
    out->end = y[n - 1];
    if (n < 2) {
        return;
    }
    /* Times in seconds from the first point; centred sums, for precision. */
    double dt = (double)g->spacing / 1000.0;
    double tm = dt * (double)(n - 1) / 2.0, ym = 0;
    for (uint32_t k = 0; k < n; k++) {
        ym += y[k];
    }
    ym /= (double)n;
    double sxx = 0, sxy = 0, syy = 0;
    uint32_t rose = 0;
    for (uint32_t k = 0; k < n; k++) {
        double dx = dt * (double)k - tm, dy = y[k] - ym;
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
        rose += k > 0 && y[k] > y[k - 1];
    }
    out->rate = sxy / sxx;
    out->r2 = syy > 0 ? sxy * sxy / (sxx * syy) : 0;
    out->growing = (double)rose / (double)(n - 1);
}

int growth_is_growth(const struct growth *g, const struct growth_fit *f, uint64_t samples)
{
    if (f->npoints < 3 || f->rate <= 0 || f->r2 < GROWTH_MIN_R2 || f->end <= f->mid) {
        return 0;
    }
    return g->rate <= 0 || samples >= GROWTH_MIN_SAMPLES;
}

uint64_t growth_cost_of_fit(const struct growth_fit *f, int grows)
{
    if (!grows) {
        return 0;
    }
    return f->rate >= 1 ? (uint64_t)llround(f->rate) : 1;
}

uint64_t growth_trace_cost(const struct growth *g, uint32_t trace)
{
    return g->costs && trace < g->states_cap ? g->costs[trace] : 0;
}

uint64_t growth_costs_total(const struct growth *g)
{
    return g->costs_total;
}
