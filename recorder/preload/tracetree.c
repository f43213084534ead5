// SPDX-License-Identifier: MIT
/* Maps a stack to a trace-tree leaf id, one tree per thread so insertion
 * needs no lock. Each distinct (parent, ip) becomes a node once and is
 * reported to the caller, which writes it before the first event using it.
 * Memory comes from mmap. */
#include "tracetree.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mem.h"

static uint32_t hash(uint32_t parent, uint64_t ip)
{
    uint64_t h = (ip ^ ((uint64_t)parent << 40) ^ parent) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 32);
}

static int grow(struct tracetree *t)
{
    uint32_t ncap = t->cap ? t->cap * 2 : 1024;
    size_t bytes = (size_t)ncap * (sizeof(uint64_t) + 2 * sizeof(uint32_t));
    unsigned char *m = mem_map(bytes);
    if (!m) {
        return -1;
    }
    uint64_t *kip = (uint64_t *)m;
    uint32_t *kpar = (uint32_t *)(m + (size_t)ncap * sizeof(uint64_t));
    uint32_t *ids = kpar + ncap;
    for (uint32_t i = 0; i < t->cap; i++) {
        if (!t->ids[i]) {
            continue;
        }
        uint32_t j = hash(t->keys_parent[i], t->keys_ip[i]) & (ncap - 1);
        while (ids[j]) {
            j = (j + 1) & (ncap - 1);
        }
        kip[j] = t->keys_ip[i];
        kpar[j] = t->keys_parent[i];
        ids[j] = t->ids[i];
    }
    mem_unmap(t->keys_ip, t->map_bytes);
    t->keys_ip = kip;
    t->keys_parent = kpar;
    t->ids = ids;
    t->cap = ncap;
    t->map_bytes = bytes;
    return 0;
}

static uint32_t insert_path(struct tracetree *t, const uint64_t *ips, int n, tracetree_emit_fn emit, void *ctx);

uint32_t tracetree_lookup(struct tracetree *t, int n, uint64_t hash)
{
    if (!t->cache) {
        return 0;
    }
    uint64_t h = (hash ^ (uint64_t)n) | 1;
    const struct tracetree_hit *e = &t->cache[h & (TRACETREE_CACHE - 1)];
    return e->hash == h ? e->leaf : 0;
}

uint32_t tracetree_insert(struct tracetree *t, const uint64_t *ips, int n, uint64_t hash, tracetree_emit_fn emit,
                          void *ctx)
{
    /* Most stacks repeat: one probe of the whole-stack cache instead of
     * one per frame. */
    if (!t->cache) {
        t->cache = mem_map(TRACETREE_CACHE * sizeof *t->cache);
    }
    uint64_t h = (hash ^ (uint64_t)n) | 1; /* 0 marks an empty cache entry */
    struct tracetree_hit *e = t->cache ? &t->cache[h & (TRACETREE_CACHE - 1)] : NULL;
    if (e && e->hash == h) {
        return e->leaf;
    }
    uint32_t leaf = insert_path(t, ips, n, emit, ctx);
    if (e && leaf) {
        e->hash = h;
        e->leaf = leaf;
    }
    return leaf;
}

static uint32_t insert_path(struct tracetree *t, const uint64_t *ips, int n, tracetree_emit_fn emit, void *ctx)
{
    uint32_t parent = 0;
    /* Walk from the outermost frame so each node's parent exists first. */
    for (int i = n - 1; i >= 0; i--) {
        uint64_t ip = ips[i];
        if ((t->count + 1) * 2 > t->cap && grow(t) < 0) {
            return 0;
        }
        uint32_t mask = t->cap - 1;
        uint32_t j = hash(parent, ip) & mask;
        for (;;) {
            uint32_t id = t->ids[j];
            if (!id) {
                id = ++t->count;
                t->ids[j] = id;
                t->keys_ip[j] = ip;
                t->keys_parent[j] = parent;
                emit(ctx, parent, ip);
                parent = id;
                break;
            }
            if (t->keys_ip[j] == ip && t->keys_parent[j] == parent) {
                parent = id;
                break;
            }
            j = (j + 1) & mask;
        }
    }
    return parent;
}

void tracetree_release(struct tracetree *t)
{
    mem_unmap(t->cache, TRACETREE_CACHE * sizeof *t->cache);
    mem_unmap(t->keys_ip, t->map_bytes);
    memset(t, 0, sizeof *t);
}
