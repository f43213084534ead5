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
