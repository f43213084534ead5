// SPDX-License-Identifier: MIT
/* Per-thread reentrancy state (guard.c): the initial-exec TLS block every hook reads to tell
 * the recorder's own nested calls from the program's. */
#ifndef RECORDER_GUARD_H
#define RECORDER_GUARD_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "hidden.h"

struct tbuf;

struct thread_state {
    int in_hook; /* inside the recorder on this thread: nested calls pass through */
    struct tbuf *buf; /* this thread's event buffer, NULL until its first event */
    int exited; /* thread-exit destructor ran */
    void *frame; /* frame of the interposed function being recorded */
    int64_t sample_left; /* sampling: bytes until the next sample */
    uint64_t rng; /* sampling: random state, 0 until first used */
    struct tbuf *counted; /* sampling: the buffer calls_at and bytes_at point into */
    atomic_uint_fast64_t *calls_at, *bytes_at; /* sampling: its exact counters */
    pid_t tid; /* gettid(), 0 until first asked */
    int deferred; /* a signal handler queued calls in sigq (sigdefer.c) */
    int in_unwind; /* inside libunwind: a handler must not walk */
    struct sigdefer_queue *sigq; /* mapped at a handler's first queued call */
    int forking; /* inside fork(), between the atfork handlers: buffer_fork_prepare() */
    uint64_t ticks; /* memrec --time: the latest timed allocation's time in the allocator (callclock.h ticks) */
};

/** This thread's kernel id, asked once. */
HIDDEN pid_t gettid_cached(void);

HIDDEN extern __thread struct thread_state tstate __attribute__((tls_model("initial-exec")));

#endif
