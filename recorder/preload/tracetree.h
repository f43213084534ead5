// SPDX-License-Identifier: MIT
/* Stack -> trace id, per thread (tracetree.c): a prefix tree in mmap'd memory that reports
 * each new node once. */
#ifndef RECORDER_TRACETREE_H
#define RECORDER_TRACETREE_H

#include <stddef.h>
#include <stdint.h>

#include "hidden.h"

#define TRACETREE_CACHE 4096

/* Whole stacks seen recently: hash of the ips -> leaf id. */
struct tracetree_hit {
    uint64_t hash;
    uint32_t leaf;
};

struct tracetree {
    uint64_t *keys_ip; /* open addressing; 0 ip = empty */
    uint32_t *keys_parent;
    uint32_t *ids;
    uint32_t cap; /* power of two */
    uint32_t count; /* nodes so far; ids are 1..count */
    size_t map_bytes;
    struct tracetree_hit *cache; /* TRACETREE_CACHE entries, mmap'd on first use */
};

/** Called for each new node so it can be written out before its first use. */
typedef void (*tracetree_emit_fn)(void *ctx, uint32_t parent, uint64_t ip);

/** The leaf id of a stack of n frames with stack hash `hash` if the tree
 * knows it from a recent insertion, else 0 (then insert it). */
HIDDEN uint32_t tracetree_lookup(struct tracetree *t, int n, uint64_t hash);
/** Insert the path of `ips` (innermost first), whose stack hash is `hash`,
 * and return the leaf id. New nodes are reported through `emit`, parents
 * first. Returns 0 if the tree cannot grow (mmap failed). */
HIDDEN uint32_t tracetree_insert(struct tracetree *t, const uint64_t *ips, int n, uint64_t hash, tracetree_emit_fn emit,
                                 void *ctx);
/** Unmap the tree's memory and reset it to empty. */
HIDDEN void tracetree_release(struct tracetree *t);

#endif
