// SPDX-License-Identifier: MIT
/* Histogram of requested sizes: power-of-two buckets with their calls,
 * bytes and temporary allocations, and the count of every exact size (for
 * the most frequent ones). Filled by the analysis pass (analysis.h) with
 * the allocations it keeps. Memory: the distinct sizes seen. */
#ifndef SIZES_H
#define SIZES_H

#include <stddef.h>
#include <stdint.h>

#include "idmap.h"

/* Bucket 0 holds size 0; bucket k (1..64) sizes from 2^(k-1) to 2^k - 1. */
#define SIZES_NBUCKETS 65

struct sizes_bucket {
    uint64_t lo, hi; /* sizes it holds, both included */
    uint64_t calls; /* allocations of such a size */
    uint64_t bytes; /* their requested bytes */
    uint64_t temporary; /* of them, temporary */
};

struct sizes_exact {
    uint64_t size;
    uint64_t calls;
    uint64_t temporary;
};

/* Sizes below this are counted in plain arrays (most allocations are
 * small): one increment instead of a hash look-up. */
#define SIZES_SMALL 4096

struct sizes_site;

struct sizes {
    struct sizes_bucket buckets[SIZES_NBUCKETS];
    uint64_t calls, bytes, temporary; /* over every bucket */
    /* Exact sizes below SIZES_SMALL: calls and temporaries by size (NULL
     * until the first); read them through sizes_top(). */
    uint64_t *small_calls, *small_temporary;
    /* Exact sizes from SIZES_SMALL up: the entries, indexed by size. */
    struct idmap map;
    struct sizes_exact *exact;
    size_t nexact, exact_cap;
    uint32_t last; /* index of the latest exact size looked up (IDMAP_NONE: none): sizes repeat */
    /* Calls per (trace, size), for the sizes of each call stack: an
     * open-addressing table of sites_cap slots (sizes.c). */
    struct sizes_site *sites;
    size_t nsites, sites_cap;
};

/* The calls of one size from one call stack (trace). */
struct sizes_site {
    uint32_t trace;
    uint64_t size;
    uint64_t calls;
};

/** An empty histogram (buckets' lo/hi set). Free with sizes_free(). */
struct sizes *sizes_new(void);
/** Release; accepts NULL. */
void sizes_free(struct sizes *s);
/** Bucket index of a size (0..64). */
unsigned sizes_bucket_of(uint64_t size);
/** Count one allocation of `size` bytes. Amortized O(1). */
void sizes_add(struct sizes *s, uint64_t size);
/** Count one allocation of `size` bytes by call stack `trace` for the
 * per-stack lists (sizes_of_traces()); sizes_add() counts it in the
 * histogram. Amortized O(1); memory: the distinct (trace, size) pairs. */
void sizes_add_site(struct sizes *s, uint32_t trace, uint64_t size);
/** For each of the `n` call stacks `traces` (distinct), the `max` sizes it
 * allocated most often (most calls first; ties: smaller size first) into
 * out[i * max ...], their count into counts[i]. `ntraces` bounds the trace
 * ids. One pass over the table: O(table slots + ntraces + matches × max). */
void sizes_of_traces(const struct sizes *s, const uint32_t *traces, uint32_t n, uint32_t ntraces,
                     struct sizes_site *out, uint32_t *counts, uint32_t max);
/** Count one temporary among the allocations of `size` bytes (its free). */
void sizes_add_temporary(struct sizes *s, uint64_t size);
/** The `max` most frequent exact sizes into `out` (most calls first; ties:
 * smaller size first). Returns how many were written. O((SIZES_SMALL +
 * distinct sizes) × max). */
uint32_t sizes_top(const struct sizes *s, struct sizes_exact *out, uint32_t max);

#endif
