// SPDX-License-Identifier: MIT
/* Evenly spaced series (timeseries.h): the builder logs each clock tick
 * in a few bytes and the points are made from the log once the run's
 * length is known, so a pass can build the series while the model loads;
 * memory is the points and the ticks (about 100 a second of the run). */
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

/* ---- the log ---- */

static void put(struct ts_log *l, uint64_t v)
{
    /* 10 bytes at most per varint. */
    if (l->len + 10 > l->cap) {
        xgrow((void **)&l->buf, &l->cap, l->len + 10, 1);
    }
    while (v >= 0x80) {
        l->buf[l->len++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    l->buf[l->len++] = (uint8_t)v;
}

/* Only this file writes the log: it is read back as written, never from
 * outside, so a varint cannot run past the end. */
static uint64_t get(const uint8_t *b, size_t *pos)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        uint8_t c = b[(*pos)++];
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            return v;
        }
    }
}

/* A change that may go down, as an unsigned number with its sign in bit 0
 * (two's complement arithmetic: exact for any pair of 64-bit values). */
static uint64_t zig(uint64_t now, uint64_t before)
{
    uint64_t d = now - before;
    return (d << 1) ^ ((uint64_t)0 - (d >> 63));
}

static uint64_t unzig(uint64_t before, uint64_t z)
{
    return before + ((z >> 1) ^ ((uint64_t)0 - (z & 1)));
}

static uint64_t max2(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* What a maximum adds above the larger of the values at the two ends of
 * its span (never below them, by the builder's contract). */
static uint64_t above(uint64_t hi, uint64_t a, uint64_t b)
{
    uint64_t base = max2(a, b);
    return hi > base ? hi - base : 0;
}

void timeseries_log_tick(struct ts_log *l, uint64_t ms, const struct ts_values *now, const struct ts_values *hi)
{
    if (l->overflow) {
        return;
    }
    /* A tick takes 90 bytes at most (9 varints). */
    if (l->len + 90 > (l->max_bytes ? l->max_bytes : TS_LOG_MAX_BYTES)) {
        free(l->buf);
        l->buf = NULL;
        l->len = l->cap = 0;
        l->overflow = 1;
        return;
    }
    const struct ts_values *w = &l->last;
    put(l, ms - l->ms);
    put(l, zig(now->heap, w->heap));
    put(l, zig(now->mapped, w->mapped));
    put(l, zig(now->rss, w->rss));
    put(l, now->calls - w->calls);
    put(l, now->temporary - w->temporary);
    put(l, above(hi->heap, now->heap, w->heap));
    put(l, above(hi->mapped, now->mapped, w->mapped));
    put(l, above(hi->rss, now->rss, w->rss));
    l->ms = ms;
    l->last = *now;
    l->ticks++;
}

/* Time moves on to `ms` with values `at`, the largest since the tick
 * before `seg`: every point before `ms` takes `at` and the largest since
 * the point before (`acc`, which then starts again from `at`). Events
 * carry the time of the TIME record before them: all of them belong to
 * the first point they reach, none to the next. */
static void reach(struct timeseries *s, uint64_t ms, const struct ts_values *at, const struct ts_values *seg,
                  struct ts_values *acc)
{
    acc->heap = max2(acc->heap, seg->heap);
    acc->mapped = max2(acc->mapped, seg->mapped);
    acc->rss = max2(acc->rss, seg->rss);
    acc->calls = at->calls;
    acc->temporary = at->temporary;
    /* UINT64_MAX is the end of the run: it reaches every point, even one
     * at UINT64_MAX (a file whose clock ends there). */
    while (s->filled < s->npoints && (s->points[s->filled].ms < ms || ms == UINT64_MAX)) {
        struct ts_point *p = &s->points[s->filled++];
        p->at = *at;
        p->max = *acc;
        *acc = *at;
    }
}

void timeseries_fill(struct timeseries *s, const struct ts_log *l, const struct ts_values *now,
                     const struct ts_values *hi)
{
    struct ts_values at = {0, 0, 0, 0, 0}, acc = at;
    uint64_t ms = 0;
    size_t pos = 0;
    for (uint64_t k = 0; k < l->ticks; k++) {
        struct ts_values was = at, seg;
        ms += get(l->buf, &pos);
        at.heap = unzig(was.heap, get(l->buf, &pos));
        at.mapped = unzig(was.mapped, get(l->buf, &pos));
        at.rss = unzig(was.rss, get(l->buf, &pos));
        at.calls = was.calls + get(l->buf, &pos);
        at.temporary = was.temporary + get(l->buf, &pos);
        seg.heap = max2(at.heap, was.heap) + get(l->buf, &pos);
        seg.mapped = max2(at.mapped, was.mapped) + get(l->buf, &pos);
        seg.rss = max2(at.rss, was.rss) + get(l->buf, &pos);
        reach(s, ms, &at, &seg, &acc);
    }
    struct ts_values seg = *hi;
    seg.heap = max2(seg.heap, max2(now->heap, at.heap));
    seg.mapped = max2(seg.mapped, max2(now->mapped, at.mapped));
    seg.rss = max2(seg.rss, max2(now->rss, at.rss));
    reach(s, UINT64_MAX, now, &seg, &acc);
}

void timeseries_reach(struct timeseries *s, uint64_t ms, const struct ts_values *now, struct ts_values *hi)
{
    /* `hi` is already the largest since the point before: no segment to add. */
    reach(s, ms, now, hi, hi);
}

void timeseries_log_release(struct ts_log *l)
{
    free(l->buf);
    memset(l, 0, sizeof *l);
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

uint32_t timeseries_reach_groups(struct timeseries *s, uint64_t ms, const struct ts_group_values *now,
                                 struct ts_group_values *hi)
{
    if (!s->groups) {
        return 0;
    }
    uint32_t was = s->groups_filled;
    /* The same points the log fills for this `ms` (reach()). */
    while (s->groups_filled < s->npoints && (s->points[s->groups_filled].ms < ms || ms == UINT64_MAX)) {
        memcpy(&s->groups[(size_t)s->groups_filled * s->ngroups], now, s->ngroups * sizeof *now);
        memcpy(&s->groups_max[(size_t)s->groups_filled * s->ngroups], hi, s->ngroups * sizeof *hi);
        memcpy(hi, now, s->ngroups * sizeof *now);
        s->groups_filled++;
    }
    return s->groups_filled - was;
}
