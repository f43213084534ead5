// SPDX-License-Identifier: MIT
/* Size histogram (sizes.h). */
#include "sizes.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

#define NONE UINT32_MAX

struct sizes *sizes_new(void)
{
    struct sizes *s = xcalloc(1, sizeof *s);
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
    free(s->slots);
    free(s->exact);
    free(s);
}

unsigned sizes_bucket_of(uint64_t size)
{
    return size == 0 ? 0 : 64u - (unsigned)__builtin_clzll(size);
}

static size_t slot_of(uint64_t size, size_t mask)
{
    uint64_t x = size * 0x9e3779b97f4a7c15ull;
    return (size_t)(x >> 20) & mask;
}

static void grow_slots(struct sizes *s)
{
    size_t n = s->nslots ? s->nslots * 2 : 256;
    free(s->slots);
    s->slots = xmalloc(n * sizeof *s->slots);
    memset(s->slots, 0xff, n * sizeof *s->slots);
    s->nslots = n;
    for (size_t i = 0; i < s->nexact; i++) {
        size_t j = slot_of(s->exact[i].size, n - 1);
        while (s->slots[j] != NONE) {
            j = (j + 1) & (n - 1);
        }
        s->slots[j] = (uint32_t)i;
    }
}

/* The entry of an exact size, made when `make` and missing; NULL else. */
static struct sizes_exact *exact_of(struct sizes *s, uint64_t size, int make)
{
    if (make && (s->nexact + 1) * 2 > s->nslots) {
        grow_slots(s);
    }
    if (s->nslots == 0) {
        return NULL;
    }
    size_t mask = s->nslots - 1;
    size_t j = slot_of(size, mask);
    while (s->slots[j] != NONE) {
        if (s->exact[s->slots[j]].size == size) {
            return &s->exact[s->slots[j]];
        }
        j = (j + 1) & mask;
    }
    if (!make) {
        return NULL;
    }
    xgrow((void **)&s->exact, &s->exact_cap, s->nexact + 1, sizeof *s->exact);
    s->slots[j] = (uint32_t)s->nexact;
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
    exact_of(s, size, 1)->calls++;
}

void sizes_add_temporary(struct sizes *s, uint64_t size)
{
    s->buckets[sizes_bucket_of(size)].temporary++;
    s->temporary++;
    struct sizes_exact *e = exact_of(s, size, 0);
    if (e) {
        e->temporary++;
    }
}

static int better(const struct sizes_exact *a, const struct sizes_exact *b)
{
    return a->calls > b->calls || (a->calls == b->calls && a->size < b->size);
}

uint32_t sizes_top(const struct sizes *s, struct sizes_exact *out, uint32_t max)
{
    uint32_t n = 0;
    for (size_t i = 0; i < s->nexact; i++) {
        const struct sizes_exact *e = &s->exact[i];
        if (n == max && (max == 0 || !better(e, &out[n - 1]))) {
            continue;
        }
        uint32_t at = n < max ? n++ : n - 1; /* insertion: the last one drops out */
        while (at > 0 && better(e, &out[at - 1])) {
            out[at] = out[at - 1];
            at--;
        }
        out[at] = *e;
    }
    return n;
}
