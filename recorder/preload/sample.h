// SPDX-License-Identifier: MIT
/* Sampling mode (sample.c): which allocations are sampled and the set of live sampled blocks.
 * The inline tests run on every allocation and must stay inline. */
#ifndef RECORDER_SAMPLE_H
#define RECORDER_SAMPLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "pipe.h"
#include "guard.h"
#include "hidden.h"

/** Map the set of live sampled blocks. Returns 0 or -1. */
HIDDEN int sample_setup(void);
/** The slow part of sample_hit(): first use on a thread, or a sample. */
HIDDEN int sample_hit_slow(size_t size);

/** Whether an allocation of `size` bytes is sampled (Poisson over bytes).
 * Inline: it runs for every allocation in sampling mode. */
static inline int sample_hit(size_t size)
{
    int64_t left = tstate.sample_left - (int64_t)size;
    if (left > 0 && tstate.rng) {
        tstate.sample_left = left;
        return 0;
    }
    return sample_hit_slow(size);
}

/** Sampling: whether an allocation of `size` bytes, if it succeeds, is
 * only to be counted, which the caller may then do inline with
 * sample_count(): no sample is due and this thread's counters are known.
 * buffer.c notes them (tstate.counted) for the buffer the thread has now,
 * and only once sample_hit() seeded the thread's random state: rng is
 * never 0 here, so this says just what sample_hit() would. Never true
 * when sampling is off: then nothing notes counters. Otherwise the
 * allocation goes to buffer_alloc(), which counts it and decides as
 * always: the same allocations are sampled. Changes nothing. Inline: every
 * allocation asks. */
static inline int sample_skips(size_t size)
{
    struct tbuf *b = tstate.buf;
    return tstate.sample_left - (int64_t)size > 0 && b && b == tstate.counted;
}

/** After sample_skips(size) and a successful allocation, with nothing
 * recorded on this thread in between: count it (one call, `size` bytes)
 * and count the bytes down to the next sample. */
static inline void sample_count(size_t size)
{
    atomic_uint_fast64_t *calls = tstate.calls_at, *bytes = tstate.bytes_at;
    atomic_store_explicit(calls, atomic_load_explicit(calls, memory_order_relaxed) + 1, memory_order_relaxed);
    atomic_store_explicit(bytes, atomic_load_explicit(bytes, memory_order_relaxed) + size, memory_order_relaxed);
    tstate.sample_left -= (int64_t)size;
}

/** Whether a hook may enter the recorder the short way, setting in_hook
 * around the real call and leaving most allocations to sample_count():
 * this thread is not inside the recorder, recording is on, and its
 * counters are known (which implies that start-up is over, the real
 * functions are resolved and sampling is on). Whether the allocation is
 * sampled is still decided after the real call, by sample_skips(). */
static inline int sample_fast(void)
{
    struct tbuf *b = tstate.buf;
    return !tstate.in_hook && atomic_load_explicit(&rec_enabled, memory_order_relaxed) && b && b == tstate.counted;
}

/** Remember a sampled block; 0 when the set has no room for it. */
HIDDEN int sample_add(void *p);
#define SAMPLE_FILTER_SIZE (1u << 15)

/* Counters of live sampled blocks per hash of their address (sample.c). */
HIDDEN extern _Atomic uint8_t *sample_filter;

static inline uint32_t sample_filter_index(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0xC2B2AE3D27D4EB4Full;
    return (uint32_t)(h >> 49) & (SAMPLE_FILTER_SIZE - 1);
}

/** False when p is certainly not a live sampled block (fast, no lock). */
static inline int sample_maybe(const void *p)
{
    return atomic_load_explicit(&sample_filter[sample_filter_index(p)], memory_order_relaxed) != 0;
}

/** True when sampling is set up in this process and p is certainly not a
 * live sampled block: its free has nothing to record. The filter, not
 * opts.sample_rate, says whether sampling is on: a process that inherited
 * MEMREC_SAMPLE_RATE but is not recorded (a program a recorded script
 * runs) has the option and no filter. */
static inline int sample_free_unseen(const void *p)
{
    _Atomic uint8_t *f = sample_filter;
    return f && atomic_load_explicit(&f[sample_filter_index(p)], memory_order_relaxed) == 0;
}

/** Forget p if it was sampled; returns whether it was. */
HIDDEN int sample_remove(void *p);
/** In a fork child that starts its own recording: no block is sampled. */
HIDDEN void sample_forget(void);

#endif
