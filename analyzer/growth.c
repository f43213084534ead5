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

struct series_state {
    double live; /* bytes (weighted when sampling) */
    uint32_t filled; /* points written */
    uint32_t gen; /* spacing generation the points are in */
    uint64_t samples; /* allocations stamped in the window */
    double pts[GROWTH_POINTS];
};

struct growth {
    uint64_t from, to; /* window, to inclusive */
    uint64_t spacing; /* ms between points */
    uint32_t gen; /* doublings so far */
    uint32_t passed; /* points the clock has passed: final */
    uint64_t now;
    int in_window;
    double rate; /* sample rate; 0: complete */
    uint32_t *slot; /* per trace: index + 1 into states, 0 = none */
    size_t slot_cap;
    struct series_state *states;
    size_t nstates, states_cap;
    struct series_state total;
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
    free(g->slot);
    free(g->states);
    free(g);
}

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

/* Bring `s` to the current spacing and write its value into the points
 * passed since it last changed. */
static void catch_up(const struct growth *g, struct series_state *s)
{
    while (s->gen < g->gen) {
        uint32_t keep = (s->filled + 1) / 2;
        for (uint32_t j = 1; j < keep; j++) {
            s->pts[j] = s->pts[2 * j];
        }
        s->filled = keep;
        s->gen++;
    }
    while (s->filled < g->passed) {
        s->pts[s->filled++] = s->live;
    }
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
            continue;
        }
        g->passed = c;
        break;
    }
}

static struct series_state *state_of(struct growth *g, uint32_t trace)
{
    if (trace >= g->slot_cap) {
        size_t old = g->slot_cap;
        xgrow((void **)&g->slot, &g->slot_cap, (size_t)trace + 1, sizeof *g->slot);
        memset(g->slot + old, 0, (g->slot_cap - old) * sizeof *g->slot);
    }
    if (g->slot[trace] == 0) {
        xgrow((void **)&g->states, &g->states_cap, g->nstates + 1, sizeof *g->states);
        memset(&g->states[g->nstates], 0, sizeof *g->states);
        g->states[g->nstates].gen = g->gen;
        /* A trace met now was at 0 at the points before. */
        g->nstates++;
        g->slot[trace] = (uint32_t)g->nstates;
    }
    return &g->states[g->slot[trace] - 1];
}

void growth_event(struct growth *g, uint32_t trace, uint64_t size, int freed)
{
    double v = (double)size;
    if (g->rate > 0) {
        double p = -expm1(-v / g->rate);
        v = p > 0 ? v / p : 0;
    }
    struct series_state *s = state_of(g, trace);
    if (s->filled < g->passed || s->gen < g->gen) {
        catch_up(g, s);
    }
    if (g->total.filled < g->passed || g->total.gen < g->gen) {
        catch_up(g, &g->total);
    }
    if (freed) {
        s->live = s->live > v ? s->live - v : 0;
        g->total.live = g->total.live > v ? g->total.live - v : 0;
    } else {
        s->live += v;
        g->total.live += v;
        s->samples += (uint64_t)g->in_window;
    }
}

void growth_finish(struct growth *g, uint64_t end_ms)
{
    if (g->finished) {
        return;
    }
    growth_time(g, end_ms < UINT64_MAX ? end_ms + 1 : end_ms);
    g->finished = 1;
    for (size_t i = 0; i < g->nstates; i++) {
        catch_up(g, &g->states[i]);
    }
    catch_up(g, &g->total);
}

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
    if (trace >= g->slot_cap || g->slot[trace] == 0) {
        *samples = 0;
        return NULL;
    }
    const struct series_state *s = &g->states[g->slot[trace] - 1];
    *samples = s->samples;
    return s->pts;
}

const double *growth_total(const struct growth *g)
{
    return g->total.pts;
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
