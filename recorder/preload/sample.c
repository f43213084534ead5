// SPDX-License-Identifier: MIT
/* Sampling mode (memrec --sample-rate): which allocations get a stack, and
 * the set of sampled blocks still live, so that only their frees are sent.
 * Allocations are sampled as a Poisson process over allocated bytes (mean
 * one sample per `rate` bytes, as tcmalloc and Go do): a block of s bytes
 * is sampled with probability 1 - exp(-s/rate), which memprint undoes.
 * Runs inside the target: no malloc, no lock; the set is lock-free. */
#include "sample.h"

#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "guard.h"
#include "mem.h"
#include "options.h"

#define SET_BUCKETS (1u << 16)
#define SET_WAYS 8 /* one cache line per bucket */

static _Atomic uint64_t (*set)[SET_WAYS];

/* Most frees are of blocks never sampled. A 32 KiB table of counters (how
 * many live sampled blocks hash to each entry) stays in the L1 cache and
 * answers "certainly not sampled" without touching the 4 MiB set. A counter
 * that reaches 255 stays there: its entry just always says "maybe". */
HIDDEN _Atomic uint8_t *sample_filter;

int sample_setup(void)
{
    set = mem_map(sizeof(*set) * SET_BUCKETS);
    sample_filter = mem_map(SAMPLE_FILTER_SIZE);
    return set && sample_filter ? 0 : -1;
}

void sample_forget(void)
{
    /* Fresh zero pages: cheaper in a fork child than writing zeros over
     * pages still shared with the parent. */
    if (set) {
        mem_unmap(set, sizeof(*set) * SET_BUCKETS);
    }
    if (sample_filter) {
        mem_unmap((void *)sample_filter, SAMPLE_FILTER_SIZE);
    }
    sample_setup();
}

static void filter_add(const void *p)
{
    _Atomic uint8_t *c = &sample_filter[sample_filter_index(p)];
    uint8_t v = atomic_load_explicit(c, memory_order_relaxed);
    while (v < 255 && !atomic_compare_exchange_weak(c, &v, (uint8_t)(v + 1))) {
    }
}

static void filter_remove(const void *p)
{
    _Atomic uint8_t *c = &sample_filter[sample_filter_index(p)];
    uint8_t v = atomic_load_explicit(c, memory_order_relaxed);
    while (v > 0 && v < 255 && !atomic_compare_exchange_weak(c, &v, (uint8_t)(v - 1))) {
    }
}

static uint64_t next_random(void)
{
    /* xorshift64*, one state per thread */
    uint64_t x = tstate.rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    tstate.rng = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* Bytes until the next sample: exponential with mean `rate`. */
static int64_t next_gap(void)
{
    double u = (double)((next_random() >> 11) + 1) * (1.0 / 9007199254740993.0);
    double gap = -log(u) * (double)opts.sample_rate;
    return gap < 1.0 ? 1 : (int64_t)gap;
}

int sample_hit_slow(size_t size)
{
    if (tstate.rng == 0) {
        /* First allocation of this thread: seed it, the same way every run
         * when MEMREC_SAMPLE_SEED is set. */
        uint64_t seed = opts.sample_seed ? (uint64_t)opts.sample_seed
                                         : (uint64_t)(uintptr_t)&size ^ ((uint64_t)gettid_cached() << 32);
        tstate.rng = (seed * 0x9E3779B97F4A7C15ull) ^ 0x5DEECE66Dull;
        if (!tstate.rng) {
            tstate.rng = 1;
        }
        tstate.sample_left = next_gap();
        tstate.sample_left -= (int64_t)size;
        if (tstate.sample_left > 0) {
            return 0;
        }
    }
    tstate.sample_left = next_gap();
    return 1;
}

static uint32_t bucket(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 48) & (SET_BUCKETS - 1);
}

int sample_add(void *p)
{
    _Atomic uint64_t *b = set[bucket(p)];
    for (int i = 0; i < SET_WAYS; i++) {
        uint64_t expected = 0;
        if (atomic_compare_exchange_strong(&b[i], &expected, (uint64_t)(uintptr_t)p)) {
            filter_add(p);
            return 1;
        }
        if (expected == (uint64_t)(uintptr_t)p) {
            return 1; /* already there */
        }
    }
    return 0; /* bucket full: the caller leaves this block unsampled */
}

int sample_remove(void *p)
{
    if (!sample_maybe(p)) {
        return 0;
    }
    _Atomic uint64_t *b = set[bucket(p)];
    for (int i = 0; i < SET_WAYS; i++) {
        uint64_t v = atomic_load_explicit(&b[i], memory_order_relaxed);
        if (v == (uint64_t)(uintptr_t)p) {
            if (!atomic_compare_exchange_strong(&b[i], &v, 0)) {
                return 0;
            }
            filter_remove(p);
            return 1;
        }
    }
    return 0;
}
