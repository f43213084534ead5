// SPDX-License-Identifier: MIT
/* Sequence numbers (seq.c): the number every event takes, which orders the
 * events of all threads; RDTSCP where the kernel trusts the TSC, else one
 * counter, plain while a single thread records. */
#ifndef RECORDER_SEQ_H
#define RECORDER_SEQ_H

#include <stdatomic.h>
#include <stdint.h>

#include "hidden.h"

/* The state seq_take() reads (seq.c says what each is for). */
HIDDEN extern atomic_uint_fast64_t seq_counter;
HIDDEN extern int seq_use_tsc;
HIDDEN extern atomic_int seq_shared;

/** Choose the source: the TSC when `tsc_order` (MEMREC_TSC_ORDER) is set
 * and the kernel keeps time with it, else the counter. Call once. */
HIDDEN void seq_setup(int tsc_order);
/** A new number. The caller holds the buffer lock of the event it numbers
 * (buffer.c, "Ordering across threads"). Async-signal-safe.
 * In the header, and not inlined: the allocation path calls it as before
 * the split, and the compiler, seeing its body, knows which registers it
 * leaves alone (a call into another file would make the realloc path
 * save a register around it). */
static __attribute__((noinline, unused)) uint64_t seq_take(void)
{
#if defined(__x86_64__)
    if (seq_use_tsc) {
        unsigned aux;
        return __builtin_ia32_rdtscp(&aux);
    }
#endif
    if (!atomic_load_explicit(&seq_shared, memory_order_relaxed)) {
        uint64_t s = atomic_load_explicit(&seq_counter, memory_order_relaxed);
        atomic_store_explicit(&seq_counter, s + 1, memory_order_relaxed);
        return s;
    }
    return atomic_fetch_add(&seq_counter, 1);
}
/** Whether the counter is shared yet (see seq_go_shared()). */
HIDDEN int seq_is_shared(void);
/** Switch the counter to atomic increments for good: called, registry
 * held, before a second thread's buffer joins; the caller then waits once
 * for every owner to be outside its buffer, so that no plain increment is
 * in flight afterwards. */
HIDDEN void seq_go_shared(void);
/** The number a flush round announces in SYNC: every event numbered below
 * it that is not in a buffer yet is being written under its buffer's lock. */
HIDDEN uint64_t seq_sync_point(void);

#endif
