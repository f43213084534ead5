// SPDX-License-Identifier: MIT
/* An open-addressing hash index over records the caller keeps in an array
 * of its own: the map holds only their uint32 indexes, and the caller
 * gives the hash of a key and says whether the record at an index has it.
 * One implementation for every "key -> record" table of the analyses
 * (call-tree children, functions, (size, trace) pairs, exact sizes).
 * The functions are inline so that the equality test of a hot lookup is
 * inlined into it. Memory: two to four slots of 4 bytes per record. */
#ifndef IDMAP_H
#define IDMAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/*
 * How to use (records in `recs`, `n` of them):
 *
 *     idmap_reserve(&map, n + 1, rehash, recs);        // before a lookup that may add
 *     size_t slot;
 *     uint32_t i = idmap_find(&map, h, same, &key, &slot);
 *     if (i == IDMAP_NONE) { i = n++; ...fill recs[i]...; idmap_put(&map, slot, i); }
 */

#define IDMAP_NONE UINT32_MAX

struct idmap {
    uint32_t *slots; /* IDMAP_NONE: empty */
    size_t cap; /* a power of two, or 0 */
};
#define IDMAP_INIT                                                                                                     \
    {                                                                                                                  \
        NULL, 0                                                                                                        \
    }

/* The hash of the record at `index`, for growing. */
typedef uint64_t (*idmap_hash_fn)(const void *ctx, uint32_t index);
/* 1 when the record at `index` has the key `ctx` points to. */
typedef int (*idmap_same_fn)(const void *ctx, uint32_t index);

/** A well-mixed 64-bit hash of an integer key (use it on any key you hash). */
static inline uint64_t idmap_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

/** FNV-1a of a string, mixed. */
static inline uint64_t idmap_hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    }
    return idmap_mix(h);
}

/** Make room for `count` records (grows to twice that, at least 256
 * slots), re-placing the ones held with `hash(ctx, index)` for indexes
 * 0..count-2. Call it before each idmap_find() whose slot may be used by
 * idmap_put(). Dies on out of memory. Amortized O(1). */
static inline void idmap_reserve(struct idmap *m, size_t count, idmap_hash_fn hash, const void *ctx)
{
    if (count * 2 <= m->cap) {
        return;
    }
    size_t cap = m->cap ? m->cap : 256;
    while (count * 2 > cap) {
        cap *= 2;
    }
    uint32_t *slots = xmalloc(cap * sizeof *slots);
    memset(slots, 0xff, cap * sizeof *slots);
    for (size_t i = 0; i < m->cap; i++) {
        uint32_t idx = m->slots[i];
        if (idx == IDMAP_NONE) {
            continue;
        }
        size_t j = (size_t)hash(ctx, idx) & (cap - 1);
        while (slots[j] != IDMAP_NONE) {
            j = (j + 1) & (cap - 1);
        }
        slots[j] = idx;
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
}

/** The index of the record with hash `h` that `same(ctx, index)` accepts,
 * or IDMAP_NONE with *slot the free slot where idmap_put() can place it
 * (valid until the map changes). O(1) expected. */
static inline uint32_t idmap_find(const struct idmap *m, uint64_t h, idmap_same_fn same, const void *ctx, size_t *slot)
{
    *slot = 0;
    if (m->cap == 0) {
        return IDMAP_NONE;
    }
    size_t mask = m->cap - 1;
    size_t j = (size_t)h & mask;
    while (m->slots[j] != IDMAP_NONE) {
        if (same(ctx, m->slots[j])) {
            return m->slots[j];
        }
        j = (j + 1) & mask;
    }
    *slot = j;
    return IDMAP_NONE;
}

/** Place `index` in the slot idmap_find() gave (after idmap_reserve()). */
static inline void idmap_put(struct idmap *m, size_t slot, uint32_t index)
{
    m->slots[slot] = index;
}

/** Release the slots; the map is empty again. */
static inline void idmap_release(struct idmap *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = 0;
}

/**
 * The element of dense id `id` in an array of `elem`-byte elements the
 * caller owns (*arr, *cap elements, *max_id the largest id made so far):
 * for tables indexed by the ids a recording gives in order from 1, such
 * as its (size, trace) pair numbers. With `make`, id may be at most one
 * more than *max_id (anything else is corrupt input and never sizes the
 * array) and the array grows zeroed; without it, an id past the array
 * gives NULL. Id 0 gives NULL.
 */
static inline void *idmap_dense(void **arr, size_t *cap, uint32_t *max_id, uint32_t id, int make, size_t elem)
{
    if (id == 0) {
        return NULL;
    }
    if (id >= *cap) {
        if (!make || id > *max_id + 1) {
            return NULL;
        }
        size_t old = *cap;
        xgrow(arr, cap, (size_t)id + 1, elem);
        memset((char *)*arr + old * elem, 0, (*cap - old) * elem);
    }
    if (make && id > *max_id) {
        if (id > *max_id + 1) {
            return NULL;
        }
        *max_id = id;
    }
    return (char *)*arr + (size_t)id * elem;
}

#endif
