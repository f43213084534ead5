// SPDX-License-Identifier: MIT
/* Unit test of the series' log (timeseries.c): random runs of events and
 * clock ticks are logged as the analysis pass logs them, made into evenly
 * spaced points once the end is known, and every point is compared with
 * the points computed here from their definition (timeseries.h, struct
 * ts_point) over the whole list of events: the values after every event
 * stamped at or before the point's time, the largest since the point
 * before; and the points of a series that knew the run's length from the
 * start (timeseries_reach()). Values up to 2^64 - 1 and clocks up to 2^63
 * check that the delta coding is exact at the edges; a small bound, that
 * the log stops past it. */
#include "timeseries.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

/* One moment of the run: the state after an event, stamped with the time
 * of the latest tick before it. */
struct moment {
    uint64_t stamp;
    struct ts_values v;
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    /* xorshift64*: any fixed sequence will do, the seed makes it repeatable. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static uint64_t max2(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* The points of `npoints` over [0, end_ms] from their definition. */
static void reference(const struct moment *mo, size_t n, uint32_t npoints, uint64_t end_ms, struct ts_point *out)
{
    struct timeseries *grid = timeseries_new(npoints, end_ms);
    struct ts_values prev = {0, 0, 0, 0, 0};
    size_t k = 0; /* moments consumed */
    for (uint32_t i = 0; i < npoints; i++) {
        uint64_t t = grid->points[i].ms;
        struct ts_values at = prev, mx = prev;
        /* The last point takes everything: its time is the run's end. */
        while (k < n && (mo[k].stamp <= t || i == npoints - 1)) {
            at = mo[k].v;
            mx.heap = max2(mx.heap, at.heap);
            mx.mapped = max2(mx.mapped, at.mapped);
            mx.rss = max2(mx.rss, at.rss);
            k++;
        }
        mx.calls = at.calls;
        mx.temporary = at.temporary;
        out[i].ms = t;
        out[i].at = at;
        out[i].max = mx;
        prev = at;
    }
    timeseries_free(grid);
}

/* The events and ticks of one run (from the generator's state now), fed
 * to the log when `direct` is NULL, else to `direct`, a series made with
 * the run's length known (timeseries_reach()). Returns the moments in
 * `mo`, their count, the clock and the values at the end. */
static size_t drive(size_t nev, int big, struct ts_log *log, struct timeseries *direct, struct moment *mo,
                    uint64_t *now_out, struct ts_values *cur_out, struct ts_values *hi_out)
{
    struct ts_values cur = {0, 0, 0, 0, 0}, hi = cur;
    uint64_t now = 0;
    size_t n = 0;
    for (size_t e = 0; e < nev; e++) {
        uint64_t r = rnd();
        uint64_t amount = big ? rnd() >> (r % 3) : (rnd() % 5000);
        switch (r % 8) {
        case 0: { /* a tick: the clock moves on */
            uint64_t step = big ? (rnd() >> 2) + 1 : 1 + rnd() % 30;
            if (now + step < now || now + step == UINT64_MAX) {
                continue;
            }
            now += step;
            if (direct) {
                timeseries_reach(direct, now, &cur, &hi);
            } else {
                timeseries_log_tick(log, now, &cur, &hi);
                hi = cur;
            }
            continue;
        }
        case 1:
        case 2: /* an allocation */
            cur.heap += amount <= UINT64_MAX - cur.heap ? amount : 0;
            cur.calls++;
            break;
        case 3: /* a free, temporary or not */
            cur.heap -= amount <= cur.heap ? amount : cur.heap;
            cur.temporary += r >> 63;
            break;
        case 4: cur.mapped = amount; break;
        case 5: cur.mapped = 0; break;
        case 6: cur.rss = amount; break;
        default: cur.heap = 0; break;
        }
        hi.heap = max2(hi.heap, cur.heap);
        hi.mapped = max2(hi.mapped, cur.mapped);
        hi.rss = max2(hi.rss, cur.rss);
        hi.calls = cur.calls;
        hi.temporary = cur.temporary;
        mo[n].stamp = now;
        mo[n].v = cur;
        n++;
    }
    if (direct) {
        timeseries_reach(direct, UINT64_MAX, &cur, &hi);
    }
    *now_out = now;
    *cur_out = cur;
    *hi_out = hi;
    return n;
}

/* A run of `nev` events and ticks, `big`: values near 2^64 and clock
 * steps near 2^62. The log's points, and those of a series that knew the
 * run's length, against the definition. */
static void one_run(size_t nev, int big, uint32_t npoints, int end_after)
{
    struct moment *mo = calloc(nev + 1, sizeof *mo);
    struct ts_log log = TS_LOG_INIT;
    struct ts_values cur, hi;
    uint64_t now;
    uint64_t start = rng_state;
    size_t n = drive(nev, big, &log, NULL, mo, &now, &cur, &hi);
    /* The run's end: the last tick, or a while after it. */
    uint64_t end_ms = now + (end_after && now < UINT64_MAX / 2 ? 1 + rnd() % 100 : 0);
    uint64_t after = rng_state;
    struct timeseries *s = timeseries_new(npoints, end_ms);
    timeseries_fill(s, &log, &cur, &hi);
    struct ts_point *want = calloc(npoints, sizeof *want);
    reference(mo, n, npoints, end_ms, want);
    CHECK_EQ(s->filled, npoints);
    CHECK(!log.overflow);
    uint32_t bad = 0;
    for (uint32_t i = 0; i < npoints; i++) {
        bad += memcmp(&s->points[i], &want[i], sizeof want[i]) != 0;
    }
    CHECK_EQ(bad, 0);
    /* A few bytes a tick, not a point's 88. */
    CHECK(log.len <= (size_t)(log.ticks + 1) * (big ? 90 : 24));
    /* The same run again, its length known from the start. */
    rng_state = start;
    struct timeseries *d = timeseries_new(npoints, end_ms);
    drive(nev, big, NULL, d, mo, &now, &cur, &hi);
    rng_state = after;
    CHECK_EQ(d->filled, npoints);
    bad = 0;
    for (uint32_t i = 0; i < npoints; i++) {
        bad += memcmp(&d->points[i], &want[i], sizeof want[i]) != 0;
    }
    CHECK_EQ(bad, 0);
    timeseries_free(d);
    free(want);
    timeseries_free(s);
    timeseries_log_release(&log);
    free(mo);
}

/* Past its bound the log drops its ticks and says so. */
static void test_overflow(void)
{
    struct ts_log log = TS_LOG_INIT;
    log.max_bytes = 1000;
    struct ts_values v = {0, 0, 0, 0, 0};
    uint64_t k;
    for (k = 1; k < 1000 && !log.overflow; k++) {
        v.heap = k * 100000;
        v.calls = k;
        timeseries_log_tick(&log, k, &v, &v);
    }
    CHECK(log.overflow);
    CHECK(log.buf == NULL && log.len == 0);
    CHECK(k > 20 && k < 1000);
    timeseries_log_tick(&log, k + 1, &v, &v);
    CHECK(log.overflow && log.len == 0);
    timeseries_log_release(&log);
}

/* No tick at all: every point takes the end's values. */
static void test_no_tick(void)
{
    struct ts_log log = TS_LOG_INIT;
    struct ts_values now = {100, 4096, 7, 3, 1}, hi = {500, 8192, 9, 3, 1};
    struct timeseries *s = timeseries_new(3, 0);
    timeseries_fill(s, &log, &now, &hi);
    CHECK_EQ(s->points[0].at.heap, 100);
    CHECK_EQ(s->points[0].max.heap, 500);
    CHECK_EQ(s->points[0].max.mapped, 8192);
    CHECK_EQ(s->points[1].max.heap, 100); /* since the point before: the end's own */
    CHECK_EQ(s->points[2].at.calls, 3);
    CHECK_EQ(log.len, 0);
    timeseries_free(s);
}

/* Ticks at 0..40 ms and points every 10 ms: events stamped at a point's
 * own time are its, the next tick's the next point's. */
static void test_by_hand(void)
{
    struct ts_log log = TS_LOG_INIT;
    struct ts_values cur = {0, 0, 0, 0, 0}, hi = cur;
    /* stamp 0: +100, +10, -10 */
    cur.heap = 110;
    hi.heap = 110;
    cur.heap = 100;
    cur.calls = 2;
    hi.calls = 2;
    timeseries_log_tick(&log, 10, &cur, &hi);
    hi = cur;
    /* stamp 10: +1000 */
    cur.heap = 1100;
    cur.calls = 3;
    hi = cur;
    timeseries_log_tick(&log, 25, &cur, &hi);
    hi = cur;
    /* stamp 25: -1100, mapped 4096 */
    cur.heap = 0;
    cur.mapped = 4096;
    hi.mapped = 4096;
    timeseries_log_tick(&log, 26, &cur, &hi);
    hi = cur;
    struct timeseries *s = timeseries_new(5, 40);
    timeseries_fill(s, &log, &cur, &hi);
    static const uint64_t heap[5] = {100, 1100, 1100, 0, 0};
    static const uint64_t heap_max[5] = {110, 1100, 1100, 1100, 0};
    static const uint64_t mapped[5] = {0, 0, 0, 4096, 4096};
    for (int i = 0; i < 5; i++) {
        CHECK_EQ(s->points[i].ms, 10 * i);
        CHECK_EQ(s->points[i].at.heap, heap[i]);
        CHECK_EQ(s->points[i].max.heap, heap_max[i]);
        CHECK_EQ(s->points[i].at.mapped, mapped[i]);
    }
    timeseries_free(s);
    timeseries_log_release(&log);
}

int main(void)
{
    test_no_tick();
    test_by_hand();
    test_overflow();
    static const uint32_t npoints[] = {1, 2, 3, 7, 50, 333, 2000};
    for (int round = 0; round < 40; round++) {
        for (size_t k = 0; k < sizeof npoints / sizeof npoints[0]; k++) {
            one_run(1 + rnd() % 3000, round % 4 == 3, npoints[k], round % 2);
        }
    }
    return check_summary("test_timeseries");
}
