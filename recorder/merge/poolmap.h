// SPDX-License-Identifier: MIT
/* memrec's table of the live blocks of programs' own pools (memrec.h).
 * Pool blocks live in an address space of their own: a block is known by
 * (pool, address), never in the map of malloc'ed blocks, because a pool's
 * first block often has the address of the malloc'ed chunk that holds it.
 * Each pool keeps its blocks in a list, newest first, so that a reset can
 * free them all. Runs in memrec, not in the target: it may allocate. */
#ifndef POOLMAP_H
#define POOLMAP_H

#include <stdint.h>

struct poolmap;

/** New empty table; dies on out-of-memory like the rest of memrec. */
struct poolmap *poolmap_new(void);
/** Release; accepts NULL. */
void poolmap_free(struct poolmap *pm);

/** The id (from 1) of the pool at address `pool`, given on first sight and
 * kept for the whole recording, so the id can travel in 32 bits. */
uint32_t poolmap_pool(struct poolmap *pm, uint64_t pool);
/** Remember that block `addr` of pool `pool` has the caller's value
 * `block`. The caller first removes any live block at the same (pool, addr). */
void poolmap_add(struct poolmap *pm, uint32_t pool, uint64_t addr, uint64_t block);
/** Forget block `addr` of pool `pool`: returns 1 with its `block`, or 0 when
 * no such block is live. */
int poolmap_del(struct poolmap *pm, uint32_t pool, uint64_t addr, uint64_t *block);
/** Forget the newest live block of `pool`: returns 1 with its `addr` and
 * `block`, or 0 when the pool has none left. A reset calls it until it
 * returns 0. */
int poolmap_pop(struct poolmap *pm, uint32_t pool, uint64_t *addr, uint64_t *block);
/** Live blocks in all pools. */
uint64_t poolmap_count(const struct poolmap *pm);

#endif
