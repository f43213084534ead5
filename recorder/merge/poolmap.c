// SPDX-License-Identifier: MIT
/* The live blocks of programs' pools (poolmap.h): entries in one array,
 * linked per pool newest first, found through an open-addressing table
 * keyed by (pool id, address). Runs in memrec; allocates freely. */
#include "poolmap.h"

#include <stdlib.h>

#include "u64map.h"
#include "util.h"

struct entry {
    uint64_t addr;
    uint64_t block; /* the caller's value for the block */
    uint32_t pool;
    uint32_t prev, next; /* the pool's list: prev is newer, next older; 0 = none */
};

struct pool_cell {
    uint64_t pool; /* the pool's address */
    uint32_t id; /* 0 = empty cell */
};

struct poolmap {
    struct entry *entries; /* index 0 unused: 0 means "none" everywhere */
    size_t nentries, entries_cap;
    uint32_t *spare; /* entries freed, for reuse */
    size_t nspare, spare_cap;
    uint32_t *cells; /* (pool, addr) -> entry, 0 = empty; linear probing */
    size_t cap, count;
    struct pool_cell *pools; /* pool address -> id */
    size_t pools_cap;
    uint32_t npools;
    uint32_t *newest; /* per pool id: its newest live entry */
    size_t newest_cap;
};

static size_t home(const struct poolmap *pm, uint32_t pool, uint64_t addr)
{
    return u64map_mix(addr ^ ((uint64_t)pool * 0x9E3779B97F4A7C15ull)) & (pm->cap - 1);
}

struct poolmap *poolmap_new(void)
{
    struct poolmap *pm = xcalloc(1, sizeof *pm);
    pm->nentries = 1;
    return pm;
}

void poolmap_free(struct poolmap *pm)
{
    if (!pm) {
        return;
    }
    free(pm->entries);
    free(pm->spare);
    free(pm->cells);
    free(pm->pools);
    free(pm->newest);
    free(pm);
}

uint64_t poolmap_count(const struct poolmap *pm)
{
    return pm->count;
}

/* ---- pool ids ---- */

static void pools_grow(struct poolmap *pm)
{
    size_t ncap = pm->pools_cap ? pm->pools_cap * 2 : 64;
    struct pool_cell *t = xcalloc(ncap, sizeof *t);
    for (size_t i = 0; i < pm->pools_cap; i++) {
        if (pm->pools[i].id) {
            size_t j = u64map_mix(pm->pools[i].pool) & (ncap - 1);
            while (t[j].id) {
                j = (j + 1) & (ncap - 1);
            }
            t[j] = pm->pools[i];
        }
    }
    free(pm->pools);
    pm->pools = t;
    pm->pools_cap = ncap;
}

uint32_t poolmap_pool(struct poolmap *pm, uint64_t pool)
{
    if (((size_t)pm->npools + 1) * 2 > pm->pools_cap) {
        pools_grow(pm);
    }
    size_t mask = pm->pools_cap - 1;
    size_t j = u64map_mix(pool) & mask;
    while (pm->pools[j].id) {
        if (pm->pools[j].pool == pool) {
            return pm->pools[j].id;
        }
        j = (j + 1) & mask;
    }
    uint32_t id = ++pm->npools;
    pm->pools[j] = (struct pool_cell){pool, id};
    xgrow((void **)&pm->newest, &pm->newest_cap, (size_t)id + 1, sizeof *pm->newest);
    return id;
}

/* ---- blocks ---- */

static void cells_put(struct poolmap *pm, uint32_t e)
{
    size_t mask = pm->cap - 1;
    size_t i = home(pm, pm->entries[e].pool, pm->entries[e].addr);
    while (pm->cells[i]) {
        i = (i + 1) & mask;
    }
    pm->cells[i] = e;
}

static void cells_grow(struct poolmap *pm)
{
    uint32_t *old = pm->cells;
    size_t old_cap = pm->cap;
    pm->cap = old_cap ? old_cap * 2 : 1024;
    pm->cells = xcalloc(pm->cap, sizeof *pm->cells);
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i]) {
            cells_put(pm, old[i]);
        }
    }
    free(old);
}

/* The cell holding (pool, addr), or the capacity when there is none. */
static size_t cells_find(const struct poolmap *pm, uint32_t pool, uint64_t addr)
{
    if (!pm->cap) {
        return 0;
    }
    size_t mask = pm->cap - 1;
    for (size_t i = home(pm, pool, addr); pm->cells[i]; i = (i + 1) & mask) {
        const struct entry *e = &pm->entries[pm->cells[i]];
        if (e->addr == addr && e->pool == pool) {
            return i;
        }
    }
    return pm->cap;
}

/* Empty cell i by shifting later cells of the probe run back: no
 * tombstones, so lookups stay short however many blocks came and went. */
static void cells_remove(struct poolmap *pm, size_t i)
{
    size_t mask = pm->cap - 1;
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!pm->cells[j]) {
            break;
        }
        const struct entry *e = &pm->entries[pm->cells[j]];
        size_t h = home(pm, e->pool, e->addr);
        /* Cell j may move to i unless its home lies cyclically in (i, j]. */
        int stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
        if (!stays) {
            pm->cells[i] = pm->cells[j];
            i = j;
        }
    }
    pm->cells[i] = 0;
    pm->count--;
}

void poolmap_add(struct poolmap *pm, uint32_t pool, uint64_t addr, uint64_t block)
{
    if ((pm->count + 1) * 2 > pm->cap) {
        cells_grow(pm);
    }
    uint32_t e;
    if (pm->nspare) {
        e = pm->spare[--pm->nspare];
    } else {
        xgrow((void **)&pm->entries, &pm->entries_cap, pm->nentries + 1, sizeof *pm->entries);
        e = (uint32_t)pm->nentries++;
    }
    uint32_t old_newest = pm->newest[pool];
    pm->entries[e] = (struct entry){.addr = addr, .pool = pool, .block = block, .prev = 0, .next = old_newest};
    if (old_newest) {
        pm->entries[old_newest].prev = e;
    }
    pm->newest[pool] = e;
    cells_put(pm, e);
    pm->count++;
}

/* Unlink entry e from its pool's list and put it aside for reuse. */
static uint64_t entry_drop(struct poolmap *pm, uint32_t e)
{
    struct entry *x = &pm->entries[e];
    if (x->prev) {
        pm->entries[x->prev].next = x->next;
    } else {
        pm->newest[x->pool] = x->next;
    }
    if (x->next) {
        pm->entries[x->next].prev = x->prev;
    }
    xgrow((void **)&pm->spare, &pm->spare_cap, pm->nspare + 1, sizeof *pm->spare);
    pm->spare[pm->nspare++] = e;
    return x->block;
}

int poolmap_del(struct poolmap *pm, uint32_t pool, uint64_t addr, uint64_t *block)
{
    size_t i = cells_find(pm, pool, addr);
    if (i >= pm->cap) {
        return 0;
    }
    uint32_t e = pm->cells[i];
    cells_remove(pm, i);
    *block = entry_drop(pm, e);
    return 1;
}

int poolmap_pop(struct poolmap *pm, uint32_t pool, uint64_t *addr, uint64_t *block)
{
    if (pool >= pm->newest_cap || !pm->newest[pool]) {
        return 0;
    }
    *addr = pm->entries[pm->newest[pool]].addr;
    return poolmap_del(pm, pool, *addr, block);
}
