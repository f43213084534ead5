// SPDX-License-Identifier: MIT
/* Open-addressing hash map from a 64-bit key to a 64-bit value, for
 * memrec's merge: the address map of live blocks, the node look-up and the
 * thread table. Key and value share a 16-byte cell, so a look-up in a map
 * of millions of live blocks costs one cache miss, not two; linear probing
 * with backward-shift deletion, so no tombstones slow it down after a
 * billion frees. Key 0 is kept aside because it marks empty cells. Runs in
 * memrec (never in the target); allocates through util's xmalloc family
 * and dies when memory runs out. The look-ups are inline: they are on the
 * merge's hot path. */
#ifndef U64MAP_H
#define U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct u64map_cell {
    uint64_t key;
    uint64_t val;
};

struct u64map {
    struct u64map_cell *cells;
    size_t cap, count;
    int has_zero;
    struct u64map_cell zero; /* the cell of key 0, which marks empty cells */
};

/** The 64-bit mixer of every memrec hash table (this map, the pair table,
 * the pool map): spreads aligned and clustered addresses over all bits. */
static inline uint64_t u64map_mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

/** A zeroed table of n elements of `size` bytes. From 4 MiB up it is
 * mapped on its own and asked for huge pages: a large table read at random
 * would otherwise miss the TLB on nearly every look-up. Free it with
 * u64map_table_free() and the same n and size. */
void *u64map_table_alloc(size_t n, size_t size);
/** Release a table from u64map_table_alloc(); accepts NULL. */
void u64map_table_free(void *p, size_t n, size_t size);

/** Double the map's table (1024 cells at first), keeping every entry. */
void u64map_grow(struct u64map *m);
/** Release the table; the map is empty and usable again. */
void u64map_release(struct u64map *m);

/** The cell of `key`, made (with val 0) if the map had none: *existed says
 * which. The cell stays valid until the next change to the map. One probe
 * where a look-up, then an insertion, would take two. */
static inline struct u64map_cell *u64map_claim(struct u64map *m, uint64_t key, int *existed)
{
    if (key == 0) {
        *existed = m->has_zero;
        m->has_zero = 1;
        if (!*existed) {
            m->zero.val = 0;
        }
        return &m->zero;
    }
    if ((m->count + 1) * 2 > m->cap) {
        u64map_grow(m);
    }
    size_t mask = m->cap - 1;
    size_t i = u64map_mix(key) & mask;
    while (m->cells[i].key && m->cells[i].key != key) {
        i = (i + 1) & mask;
    }
    *existed = m->cells[i].key != 0;
    if (!*existed) {
        m->count++;
        m->cells[i].key = key;
        m->cells[i].val = 0;
    }
    return &m->cells[i];
}

/** Set key's value, adding the key if it is new. */
static inline void u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
    int existed;
    u64map_claim(m, key, &existed)->val = val;
}

/** 1 and *val set if the map holds key, else 0. */
static inline int u64map_get(const struct u64map *m, uint64_t key, uint64_t *val)
{
    if (key == 0) {
        *val = m->zero.val;
        return m->has_zero;
    }
    if (!m->cap) {
        return 0;
    }
    size_t mask = m->cap - 1;
    for (size_t i = u64map_mix(key) & mask; m->cells[i].key; i = (i + 1) & mask) {
        if (m->cells[i].key == key) {
            *val = m->cells[i].val;
            return 1;
        }
    }
    return 0;
}

/** Remove key: 1 and *val set to its value if it was there, else 0. */
static inline int u64map_del(struct u64map *m, uint64_t key, uint64_t *val)
{
    if (key == 0) {
        if (!m->has_zero) {
            return 0;
        }
        *val = m->zero.val;
        m->has_zero = 0;
        return 1;
    }
    if (!m->cap) {
        return 0;
    }
    size_t mask = m->cap - 1;
    size_t i = u64map_mix(key) & mask;
    while (m->cells[i].key != key) {
        if (!m->cells[i].key) {
            return 0;
        }
        i = (i + 1) & mask;
    }
    *val = m->cells[i].val;
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!m->cells[j].key) {
            break;
        }
        size_t home = u64map_mix(m->cells[j].key) & mask;
        /* Move j back to i if its home is not within (i, j]. */
        if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
            m->cells[i] = m->cells[j];
            i = j;
        }
    }
    m->cells[i].key = 0;
    m->count--;
    return 1;
}

#endif
