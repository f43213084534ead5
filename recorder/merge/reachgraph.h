// SPDX-License-Identifier: MIT
/* The reachability classifier (reachgraph.c): given the live blocks sorted
 * by address, the roots and a way to read the program's memory, mark each
 * block reachable, possibly reachable, unreachable or indirectly
 * unreachable by a conservative scan (docs/definitions.md,
 * "Reachability"). Knows nothing of processes or files: memrec hands it a
 * reader (process_vm_readv on a stopped program), the unit test a fake
 * memory. Memory: 8 bytes of read-ahead offset and four of work list per
 * block, 1 MiB of read buffer, and the blocks' bytes read ahead when they
 * fit the caller's bound. */
#ifndef REACHGRAPH_H
#define REACHGRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* A block's class once reach_classify() returned 0. */
enum reach_class {
    REACH_UNMARKED = 0, /* only while classifying */
    REACH_REACHABLE = 1, /* a chain of pointers to block starts from a root */
    REACH_POSSIBLE = 2, /* reachable, but every chain has a pointer into some block's middle */
    REACH_DIRECT = 3, /* unreachable, and no other unreachable block points to it */
    REACH_INDIRECT = 4, /* unreachable, pointed to from another unreachable block */
};

/* A live block, sorted by addr; blocks never overlap. */
struct reach_block {
    uint64_t addr;
    uint64_t size; /* requested bytes; a block of 0 bytes is hit by its address alone */
    uint32_t trace;
    uint8_t cls; /* enum reach_class: the result */
    uint8_t hit_inside; /* work: a strong source points into its middle */
};

enum reach_range_flags {
    /* Memory that may hold live blocks (anonymous mappings): the words of
     * the blocks inside are not roots, only the bytes around them. */
    REACH_RANGE_SKIP_BLOCKS = 1 << 0,
    /* Maybe a thread arena's heap (its start aligned as glibc's heaps
     * are): when it holds a live block, or its first word is a heap
     * header's pointer to its arena, it is allocator memory and no root. */
    REACH_RANGE_ARENA = 1 << 1,
};

/* glibc's HEAP_MAX_SIZE on 64-bit systems: a thread arena's heap is
 * reserved at this size and alignment. */
#define REACH_ARENA_ALIGN ((uint64_t)64 << 20)

/* A root range [start, end) of the program's memory. */
struct reach_range {
    uint64_t start, end;
    unsigned flags; /* enum reach_range_flags */
};

/* How to read the program: like process_vm_readv(2) with `n` local and
 * remote iovecs of equal lengths (n <= 1024); returns the bytes read, which
 * stop at the first remote range that cannot be read, or -1. */
struct reach_reader {
    ssize_t (*readv)(void *ctx, const struct iovec *local, const struct iovec *remote, unsigned long n);
    void *ctx;
};

struct reach_stats {
    uint64_t root_bytes; /* bytes of roots read (registers included) */
    uint64_t block_bytes; /* bytes of blocks read */
    uint64_t unreadable_bytes; /* asked for and not readable: taken as holding no pointer */
};

/* reach_classify()'s result besides 0. */
#define REACH_E_TIME (-1) /* the deadline passed: no block's class holds */

/** Classify the `n` blocks of `b` (sorted by address, not overlapping)
 * from the roots: the ranges `roots` and the register values `words`,
 * reading memory through `rd`, giving up when CLOCK_MONOTONIC passes
 * `deadline_ns` (0: never). The blocks are read ahead in a few large reads
 * (runs of nearby blocks, the bytes between them too) when those take at
 * most `read_ahead_max` bytes of memory, else as the scan comes to them,
 * many to a call. Sets every b[i].cls and returns 0, or REACH_E_TIME. Dies
 * (xmalloc) when memory runs out. */
int reach_classify(struct reach_block *b, size_t n, const struct reach_range *roots, size_t nroots,
                   const uint64_t *words, size_t nwords, const struct reach_reader *rd, uint64_t deadline_ns,
                   uint64_t read_ahead_max, struct reach_stats *st);

#endif
