// SPDX-License-Identifier: MIT
/* Size histogram (sizes.h). */
#include "sizes.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

struct sizes *sizes_new(void)
{
    struct sizes *s = xcalloc(1, sizeof *s);
    s->last = IDMAP_NONE;
    for (unsigned k = 1; k < (unsigned)SIZES_NBUCKETS; k++) {
        s->buckets[k].lo = (uint64_t)1 << (k - 1);
        s->buckets[k].hi = k == 64 ? UINT64_MAX : ((uint64_t)1 << k) - 1;
    }
    return s;
}

void sizes_free(struct sizes *s)
{
    if (!s) {
        return;
    }
    idmap_release(&s->map);
    free(s->exact);
    free(s->small_calls);
    free(s->small_temporary);
    free(s->sites);
    free(s);
}

unsigned sizes_bucket_of(uint64_t size)
{
    return size == 0 ? 0 : 64u - (unsigned)__builtin_clzll(size);
}

static uint64_t exact_hash(const void *ctx, uint32_t i)
{
    return idmap_mix(((const struct sizes *)ctx)->exact[i].size);
}

struct size_key {
    const struct sizes *s;
    uint64_t size;
};

static int exact_same(const void *ctx, uint32_t i)
{
    const struct size_key *k = ctx;
    return k->s->exact[i].size == k->size;
}

/* The entry of an exact size, made when `make` and missing; NULL else. */
static struct sizes_exact *exact_of(struct sizes *s, uint64_t size, int make)
{
    if (s->last != IDMAP_NONE && s->exact[s->last].size == size) {
        return &s->exact[s->last];
    }
    if (make) {
        idmap_reserve(&s->map, s->nexact + 1, exact_hash, s);
    }
    struct size_key k = {s, size};
    size_t slot;
    uint32_t i = idmap_find(&s->map, idmap_mix(size), exact_same, &k, &slot);
    if (i != IDMAP_NONE) {
        s->last = i;
        return &s->exact[i];
    }
    if (!make) {
        return NULL;
    }
    xgrow((void **)&s->exact, &s->exact_cap, s->nexact + 1, sizeof *s->exact);
    idmap_put(&s->map, slot, (uint32_t)s->nexact);
    s->last = (uint32_t)s->nexact;
    struct sizes_exact *e = &s->exact[s->nexact++];
    memset(e, 0, sizeof *e);
    e->size = size;
    return e;
}

void sizes_add(struct sizes *s, uint64_t size)
{
    struct sizes_bucket *b = &s->buckets[sizes_bucket_of(size)];
    b->calls++;
    b->bytes += size;
    s->calls++;
    s->bytes += size;
    if (size < SIZES_SMALL) {
        if (!s->small_calls) {
            s->small_calls = xcalloc(SIZES_SMALL, sizeof *s->small_calls);
            s->small_temporary = xcalloc(SIZES_SMALL, sizeof *s->small_temporary);
        }
        s->small_calls[size]++;
        return;
    }
    exact_of(s, size, 1)->calls++;
}

void sizes_add_temporary(struct sizes *s, uint64_t size)
{
    s->buckets[sizes_bucket_of(size)].temporary++;
    s->temporary++;
    if (size < SIZES_SMALL) {
        if (s->small_temporary) {
            s->small_temporary[size]++;
        }
        return;
    }
    struct sizes_exact *e = exact_of(s, size, 0);
    if (e) {
        e->temporary++;
    }
}

static int better(const struct sizes_exact *a, const struct sizes_exact *b)
{
    return a->calls > b->calls || (a->calls == b->calls && a->size < b->size);
}

/* Insertion of `e` into the best `max` so far (*n of them). */
static void offer(const struct sizes_exact *e, struct sizes_exact *out, uint32_t max, uint32_t *n)
{
    if (*n == max && (max == 0 || !better(e, &out[*n - 1]))) {
        return;
    }
    uint32_t at = *n < max ? (*n)++ : *n - 1; /* the last one drops out */
    while (at > 0 && better(e, &out[at - 1])) {
        out[at] = out[at - 1];
        at--;
    }
    out[at] = *e;
}

uint32_t sizes_top(const struct sizes *s, struct sizes_exact *out, uint32_t max)
{
    uint32_t n = 0;
    for (uint64_t size = 0; s->small_calls && size < SIZES_SMALL; size++) {
        if (s->small_calls[size]) {
            struct sizes_exact e = {size, s->small_calls[size], s->small_temporary[size]};
            offer(&e, out, max, &n);
        }
    }
    for (size_t i = 0; i < s->nexact; i++) {
        offer(&s->exact[i], out, max, &n);
    }
    return n;
}

/* ---- per call stack ---- */

static uint64_t site_hash(uint32_t trace, uint64_t size)
{
    return idmap_mix(size * 0x9e3779b97f4a7c15ull ^ trace);
}

/* The (trace, size) entries live in the slots of an open-addressing table
 * (trace SITE_EMPTY: free), one memory access per allocation: this runs
 * for every allocation of a --sizes pass. */
#define SITE_EMPTY UINT32_MAX

static void sites_grow(struct sizes *s)
{
    size_t cap = s->sites_cap ? s->sites_cap * 2 : 1024;
    struct sizes_site *t = xmalloc(cap * sizeof *t);
    for (size_t i = 0; i < cap; i++) {
        t[i].trace = SITE_EMPTY;
    }
    for (size_t i = 0; i < s->sites_cap; i++) {
        if (s->sites[i].trace == SITE_EMPTY) {
            continue;
        }
        size_t j = (size_t)site_hash(s->sites[i].trace, s->sites[i].size) & (cap - 1);
        while (t[j].trace != SITE_EMPTY) {
            j = (j + 1) & (cap - 1);
        }
        t[j] = s->sites[i];
    }
    free(s->sites);
    s->sites = t;
    s->sites_cap = cap;
}

void sizes_add_site(struct sizes *s, uint32_t trace, uint64_t size)
{
    if ((s->nsites + 1) * 4 > s->sites_cap * 3) {
        sites_grow(s);
    }
    size_t mask = s->sites_cap - 1;
    for (size_t j = (size_t)site_hash(trace, size) & mask;; j = (j + 1) & mask) {
        struct sizes_site *e = &s->sites[j];
        if (e->trace == trace && e->size == size) {
            e->calls++;
            return;
        }
        if (e->trace == SITE_EMPTY) {
            e->trace = trace;
            e->size = size;
            e->calls = 1;
            s->nsites++;
            return;
        }
    }
}

static int site_better(const struct sizes_site *a, const struct sizes_site *b)
{
    return a->calls > b->calls || (a->calls == b->calls && a->size < b->size);
}

void sizes_of_traces(const struct sizes *s, const uint32_t *traces, uint32_t n, uint32_t ntraces,
                     struct sizes_site *out, uint32_t *counts, uint32_t max)
{
    uint32_t *pos = xcalloc((size_t)ntraces + 1, sizeof *pos); /* trace -> its index + 1 */
    for (uint32_t i = 0; i < n; i++) {
        counts[i] = 0;
        if (traces[i] < ntraces) {
            pos[traces[i]] = i + 1;
        }
    }
    for (size_t i = 0; i < s->sites_cap && max > 0; i++) {
        const struct sizes_site *e = &s->sites[i];
        if (e->trace == SITE_EMPTY || e->trace >= ntraces || pos[e->trace] == 0) {
            continue;
        }
        uint32_t k = pos[e->trace] - 1;
        struct sizes_site *o = out + (size_t)k * max;
        if (counts[k] == max && !site_better(e, &o[max - 1])) {
            continue;
        }
        uint32_t at = counts[k] < max ? counts[k]++ : max - 1;
        while (at > 0 && site_better(e, &o[at - 1])) {
            o[at] = o[at - 1];
            at--;
        }
        o[at] = *e;
    }
    free(pos);
}
