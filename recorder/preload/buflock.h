// SPDX-License-Identifier: MIT
/* The locks of the thread buffers (buflock.c): a spin-then-nap lock word,
 * and the owner's side that costs no atomic read-modify-write where
 * membarrier(2) works. No global lock; async-signal-safe except where said. */
#ifndef RECORDER_BUFLOCK_H
#define RECORDER_BUFLOCK_H

#include <stdatomic.h>
#include <stdint.h>

#include "hidden.h"

/* One buffer's lock. Its owner (the thread the buffer belongs to) takes it
 * on every allocation and free with buflock_owner_take(); the service thread,
 * a crash handler and the exit of the thread about every 10 ms with
 * buflock_take() followed by the buflock_others_* steps. */
struct buflock {
    atomic_int lock; /* the lock word: buflock_take() */
    atomic_int busy; /* the owner holds the buffer without `lock` (see buflock_owner_take()) */
    atomic_int wants; /* another thread holds `lock` and waits for busy == 0 */
    int owner_slow; /* the owner holds `lock` */
};

/** Non-zero when the owner's side runs without `lock` (membarrier(2)
 * private expedited is registered): set by buflock_setup(), read inline. */
HIDDEN extern int buflock_asym;

/** Register with membarrier(2) where the kernel offers it; call once at
 * set-up and again in a forked child (a new address space). */
HIDDEN void buflock_setup(void);
/** Take a lock word. A waiter spins briefly and then naps, since the
 * holder may be blocked in write(2) on a full pipe. */
HIDDEN void buflock_take(atomic_int *l);
/** Take a lock word if it is free: 1 taken, 0 not. */
HIDDEN int buflock_try(atomic_int *l);
/** Take a lock word, waiting only as long as `wait_more` allows (see
 * crashflush_all()): 1 taken, 0 given up. Async-signal-safe. */
HIDDEN int buflock_bounded(atomic_int *l, int (*wait_more)(int64_t *));

/** Another thread's side, once it holds `lock` of the buffers it wants:
 * buflock_others_want() on each, one buflock_others_barrier() for all of
 * them (membarrier() costs a few microseconds), buflock_others_wait() on
 * each (its owner has left the buffer), work, buflock_others_done() on each
 * (which releases `lock`). */
HIDDEN void buflock_others_want(struct buflock *k);
HIDDEN void buflock_others_barrier(void);
HIDDEN void buflock_others_wait(struct buflock *k);
HIDDEN void buflock_others_done(struct buflock *k);
/** buflock_others_wait() for a signal handler: waits only as `wait_more`
 * allows; 1 the owner left, 0 given up. Async-signal-safe. */
HIDDEN int buflock_others_wait_bounded(struct buflock *k, int (*wait_more)(int64_t *));

/** Release a lock word: one store, inline on the allocation path. */
static inline void buflock_release(atomic_int *l)
{
    atomic_store_explicit(l, 0, memory_order_release);
}

/* The owner's side, inlined into the allocation path. Where membarrier(2)
 * works, the owner stores busy = 1, then reads `wants`; another thread
 * takes `lock`, stores wants = 1, calls membarrier(), which runs a full
 * barrier on every CPU that runs a thread of the process, and then waits
 * for busy == 0. Either the owner sees wants = 1 (and takes `lock` like
 * anyone else), or the other side sees busy = 1 and waits: the owner's
 * store cannot still hide in its CPU's store buffer once the barrier ran
 * there. Elsewhere both sides take `lock`. */
static inline __attribute__((always_inline)) void buflock_owner_take(struct buflock *k)
{
    if (buflock_asym) {
        atomic_store_explicit(&k->busy, 1, memory_order_relaxed);
        atomic_signal_fence(memory_order_seq_cst);
        if (__builtin_expect(!atomic_load_explicit(&k->wants, memory_order_acquire), 1)) {
            k->owner_slow = 0;
            return;
        }
        atomic_store_explicit(&k->busy, 0, memory_order_release);
    }
    buflock_take(&k->lock);
    k->owner_slow = 1;
}

static inline __attribute__((always_inline)) void buflock_owner_release(struct buflock *k)
{
    if (k->owner_slow) {
        buflock_release(&k->lock);
    } else {
        atomic_store_explicit(&k->busy, 0, memory_order_release);
    }
}

#endif
