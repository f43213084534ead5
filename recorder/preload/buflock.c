// SPDX-License-Identifier: MIT
/* The locks of the thread buffers: the lock word, the membarrier(2) set-up
 * and the other threads' side of the owner's lock (the owner's side is
 * inline in buflock.h). Runs inside the target: no allocation, no stdio;
 * everything here is async-signal-safe but buflock_setup(). */
#define _GNU_SOURCE
#include "buflock.h"

#include <linux/membarrier.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

HIDDEN int buflock_asym;

/* A thread's buffer lock is contended only by the service thread, for a
 * moment every flush period: the owner's path is one exchange and one
 * store. But the holder may wait in write(2) or poll(2) while the pipe is
 * full, for as long as memrec does not read (it may be stopped), so a
 * waiter spins briefly and then sleeps in naps that grow from 20 us to
 * 10 ms: no CPU taken from memrec, and no thousands of wake-ups a second
 * while it is stopped. */
static void wait_a_little(int *spins)
{
    if (++*spins < 64) {
        __builtin_ia32_pause();
        return;
    }
    int k = *spins - 64;
    long us = 20L << (k < 9 ? k : 9);
    struct timespec nap = {0, us * 1000};
    nanosleep(&nap, NULL);
}

void buflock_take(atomic_int *l)
{
    int spins = 0;
    while (atomic_exchange_explicit(l, 1, memory_order_acquire)) {
        wait_a_little(&spins);
    }
}

int buflock_try(atomic_int *l)
{
    return !atomic_exchange_explicit(l, 1, memory_order_acquire);
}

int buflock_bounded(atomic_int *l, int (*wait_more)(int64_t *))
{
    int64_t deadline = 0;
    while (atomic_exchange_explicit(l, 1, memory_order_acquire)) {
        if (!wait_more(&deadline)) {
            return 0;
        }
    }
    return 1;
}

static int membarrier(int cmd)
{
    return (int)syscall(SYS_membarrier, cmd, 0, 0);
}

void buflock_setup(void)
{
    int cmds = membarrier(MEMBARRIER_CMD_QUERY);
    buflock_asym = cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
                   membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

void buflock_others_want(struct buflock *k)
{
    if (buflock_asym) {
        atomic_store(&k->wants, 1);
    }
}

void buflock_others_barrier(void)
{
    if (buflock_asym) {
        membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
    }
}

void buflock_others_wait(struct buflock *k)
{
    int spins = 0;
    while (buflock_asym && atomic_load_explicit(&k->busy, memory_order_acquire)) {
        wait_a_little(&spins);
    }
}

int buflock_others_wait_bounded(struct buflock *k, int (*wait_more)(int64_t *))
{
    int64_t deadline = 0;
    while (buflock_asym && atomic_load_explicit(&k->busy, memory_order_acquire)) {
        if (!wait_more(&deadline)) {
            return 0;
        }
    }
    return 1;
}

void buflock_others_done(struct buflock *k)
{
    if (buflock_asym) {
        atomic_store_explicit(&k->wants, 0, memory_order_release);
    }
    buflock_release(&k->lock);
}
