// SPDX-License-Identifier: MIT
/* Unit tests of the growth fit (growth.c) on series made here, whose
 * points and fits are derived below: a steady ramp, a step, a sawtooth, a
 * window that starts after the step, sampled weights and the minimum of
 * samples; the growth cost of each trace (costs.h COST_GROWTH). */
#include "growth.h"

#include <math.h>
#include <stdint.h>

#include "check.h"
#include "costs.h"

#define NEAR(a, b, eps) CHECK(fabs((double)(a) - (double)(b)) <= (eps))

/* Every 10 ms from 0 to 990 ms: trace 1 allocates 1,000 bytes (a ramp of
 * 100,000 bytes/s); trace 2 allocates 1,000,000 bytes once, at 250 ms (a
 * step); trace 3 allocates 10,000 bytes and frees what it holds every 10th
 * tick (a sawtooth back to 10,000 every 100 ms). */
static void feed(struct growth *g)
{
    uint64_t saw = 0;
    for (uint64_t t = 0; t <= 990; t += 10) {
        growth_time(g, t);
        growth_event(g, 1, 1000, 0);
        if (t == 250) {
            growth_event(g, 2, 1000000, 0);
        }
        if (t % 100 == 0 && saw) {
            growth_event(g, 3, saw, 1);
            saw = 0;
        }
        growth_event(g, 3, 10000, 0);
        saw += 10000;
    }
    growth_finish(g, 990);
}

static void whole_run(void)
{
    struct growth *g = growth_new(0, UINT64_MAX, 0);
    feed(g);
    /* 64 points at 10 ms reach 630 ms: the spacing doubled to 20 ms, whose
     * points up to 990 ms are 0, 20, ..., 980. */
    CHECK_EQ(growth_npoints(g), 50);
    CHECK_EQ(growth_spacing_ms(g), 20);
    uint64_t samples;
    const double *y = growth_series(g, 1, &samples);
    CHECK(y != NULL);
    CHECK_EQ(samples, 100);
    /* Point k (20k ms) holds the allocations stamped up to 20k: 2k + 1. */
    for (uint32_t k = 0; k < 50; k++) {
        NEAR(y[k], (2.0 * k + 1) * 1000, 1e-9);
    }
    struct growth_fit ramp, step, saw, total;
    growth_fit_series(g, y, &ramp);
    NEAR(ramp.rate, 100000, 1e-6);
    NEAR(ramp.r2, 1, 1e-12);
    NEAR(ramp.growing, 1, 1e-12);
    NEAR(ramp.start, 1000, 1e-9);
    NEAR(ramp.end, 99000, 1e-9);
    CHECK(growth_is_growth(g, &ramp, samples));

    /* The step at 250 ms: 0 at points 0..12 (up to 240 ms), then 1e6 at
     * 37 of the 50: R² = 3a(1 - a)-like, below 0.75, so no growth. */
    y = growth_series(g, 2, &samples);
    growth_fit_series(g, y, &step);
    CHECK(step.rate > 0);
    CHECK(step.r2 < 0.75);
    CHECK(!growth_is_growth(g, &step, samples));

    y = growth_series(g, 3, &samples);
    growth_fit_series(g, y, &saw);
    CHECK(saw.r2 < 0.1);
    CHECK(!growth_is_growth(g, &saw, samples));

    /* The whole heap is the sum of the traces: so is its rate. */
    growth_fit_series(g, growth_total(g), &total);
    NEAR(total.rate, ramp.rate + step.rate + saw.rate, 1e-6);
    CHECK(growth_series(g, 4, &samples) == NULL);

    /* The growth cost (COST_GROWTH): the ramp's 100,000 bytes/s, the step
     * and the sawtooth 0 (not growth), so the total is the ramp's; the same
     * through cost_of_trace_in() with an accounting that has no trace. */
    CHECK_EQ(growth_trace_cost(g, 1), 100000);
    CHECK_EQ(growth_trace_cost(g, 2), 0);
    CHECK_EQ(growth_trace_cost(g, 3), 0);
    CHECK_EQ(growth_trace_cost(g, 4), 0);
    CHECK_EQ(growth_trace_cost(g, 1u << 30), 0);
    CHECK_EQ(growth_costs_total(g), 100000);
    CHECK_EQ(growth_cost_of_fit(&ramp, 1), 100000);
    CHECK_EQ(growth_cost_of_fit(&ramp, 0), 0);
    struct accounting *a = accounting_new(1);
    struct cost_vec v;
    cost_of_trace_in(a, g, 1, &v);
    CHECK_EQ(v.v[COST_GROWTH], 100000);
    CHECK_EQ(v.v[COST_CALLS], 0);
    cost_of_trace_in(a, NULL, 1, &v);
    CHECK_EQ(v.v[COST_GROWTH], 0);
    CHECK_EQ(cost_total(a, COST_GROWTH), 0);
    accounting_free(a);
    growth_free(g);
}

static void window_after_step(void)
{
    /* From 500 ms on: the step is before the window, flat in it. */
    struct growth *g = growth_new(500, UINT64_MAX, 0);
    feed(g);
    /* 10 ms apart, 500..990: 50 points, no doubling. */
    CHECK_EQ(growth_npoints(g), 50);
    CHECK_EQ(growth_from_ms(g), 500);
    uint64_t samples;
    struct growth_fit f;
    growth_fit_series(g, growth_series(g, 2, &samples), &f);
    CHECK_EQ(samples, 0);
    NEAR(f.rate, 0, 1e-9);
    NEAR(f.r2, 0, 1e-12);
    NEAR(f.start, 1000000, 1e-9);
    growth_fit_series(g, growth_series(g, 1, &samples), &f);
    CHECK_EQ(samples, 50);
    NEAR(f.rate, 100000, 1e-6);
    NEAR(f.start, 51000, 1e-9); /* allocations at 0..500 ms */
    growth_free(g);
}

static void sampled(void)
{
    /* A sampled block of the rate's size stands for 1 / (1 - e^-1) blocks. */
    struct growth *g = growth_new(0, UINT64_MAX, 0);
    growth_set_sample_rate(g, 1000);
    feed(g);
    uint64_t samples;
    const double *y = growth_series(g, 1, &samples);
    NEAR(y[0], 1000 / (1 - exp(-1.0)), 1e-6);
    struct growth_fit f;
    growth_fit_series(g, y, &f);
    NEAR(f.rate, 100000 / (1 - exp(-1.0)), 1e-3);
    CHECK_EQ(growth_trace_cost(g, 1), (uint64_t)llround(100000 / (1 - exp(-1.0))));
    CHECK(growth_sampled(g));
    CHECK(growth_is_growth(g, &f, GROWTH_MIN_SAMPLES));
    CHECK(!growth_is_growth(g, &f, GROWTH_MIN_SAMPLES - 1));
    growth_free(g);
}

static void too_short(void)
{
    struct growth *g = growth_new(0, UINT64_MAX, 0);
    growth_time(g, 5);
    growth_event(g, 1, 100, 0);
    growth_finish(g, 15);
    /* Points at 0 and 10 ms only. */
    CHECK_EQ(growth_npoints(g), 2);
    uint64_t samples;
    struct growth_fit f;
    growth_fit_series(g, growth_series(g, 1, &samples), &f);
    CHECK(!growth_is_growth(g, &f, samples));
    growth_free(g);
}

int main(void)
{
    whole_run();
    window_after_step();
    sampled();
    too_short();
    return check_summary("test_growthfit");
}
