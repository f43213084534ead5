// SPDX-License-Identifier: MIT
/* Address ranges -> owner (a module's index), for finding the module of
 * each trace node in O(log n) instead of scanning every module: a file
 * may hold tens of thousands of modules and millions of nodes. Ranges
 * never overlap inside the map: a range added over others takes their
 * place where they overlap (the newest module wins, as the scan from the
 * newest did). */
#ifndef ADDRMAP_H
#define ADDRMAP_H

#include <stdint.h>

struct addrmap_node;

struct addrmap {
    struct addrmap_node *pool; /* [0] unused: index 0 is "none" */
    uint32_t npool, pool_cap;
    uint32_t free_list;
    uint32_t root;
    uint32_t *head; /* per owner: its first range, 0 = none */
    uint32_t head_cap;
    uint64_t rng;
};

#define ADDRMAP_INIT                                                                                                   \
    {                                                                                                                  \
        NULL, 0, 0, 0, 0, NULL, 0, 0x9e3779b97f4a7c15ull                                                               \
    }

/** Release the map's memory; the map is empty (ADDRMAP_INIT) afterwards. */
void addrmap_release(struct addrmap *m);
/** Map [lo, hi) to `owner` (below 2^31), replacing what was there. An empty
 * range is ignored. O(log n) expected, plus the ranges it replaces. Dies
 * (xmalloc) when memory runs out; memory grows with the ranges kept, at
 * most two per range ever added. */
void addrmap_insert(struct addrmap *m, uint64_t lo, uint64_t hi, uint32_t owner);
/** Remove every range still mapped to `owner`: O(k log n) for its k ranges. */
void addrmap_remove_owner(struct addrmap *m, uint32_t owner);
/** The owner of address `a`, or -1. O(log n) expected. */
int32_t addrmap_find(const struct addrmap *m, uint64_t a);

#endif
