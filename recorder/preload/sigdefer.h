// SPDX-License-Identifier: MIT
/* Calls made by signal handlers while their thread is inside the recorder (sigdefer.c):
 * queued lock-free, sent later by the thread. */
#ifndef RECORDER_SIGDEFER_H
#define RECORDER_SIGDEFER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "hidden.h"

/* Calls queued per thread during one recorded call. A recorded call can
 * wait for a second or more when memrec drains the pipe slowly (a loaded
 * machine, a sanitized memrec), while a fast timer's handler keeps
 * allocating: 2,048 slots overflowed in 100 ms of a 50 us timer. The queue
 * is 2.5 MiB of address space per thread that ever queued, of which only
 * the pages used are touched. */
#define SIGDEFER_MAX 65536

enum sigdefer_op { SIGDEFER_ALLOC, SIGDEFER_FREE, SIGDEFER_REALLOC };

struct sigdefer_event {
    uint8_t op, kind; /* enum sigdefer_op, MEMFMT_K_* */
    void *old, *p; /* free and realloc: old; alloc and realloc: p */
    size_t size;
    uint64_t site; /* return address of the call */
};

/* Filled by handlers (any nesting: slots are taken with an atomic add),
 * emptied by the thread itself when no handler runs in between. Mapped
 * lazily: only the pages used are ever touched. */
struct sigdefer_queue {
    atomic_uint reserved; /* slots taken, may exceed SIGDEFER_MAX */
    struct sigdefer_event ev[SIGDEFER_MAX];
};

/** A hook entered while its thread is inside the recorder, with `frame`
 * its own frame and tstate.frame the recorded call's: 1 when a signal
 * handler interrupted the recorder (a signal frame lies between them, or
 * this runs on another stack), 0 for the recorder's own nested calls
 * (which pass through). Async-signal-safe. */
HIDDEN int sigdefer_classify(const void *frame);
/** In a handler that interrupted the recorder: queue one call made (its
 * real function already called) for the thread to send later, with its
 * call site `site`; it is recorded with the stack [site, gap marker]. When
 * the queue is full the call is counted as lost, said once on stderr.
 * Async-signal-safe. */
HIDDEN void sigdefer_add(unsigned op, unsigned kind, void *old, void *p, size_t size, const void *site);
/** The thread ends: unmap its queue. */
HIDDEN void sigdefer_release(void);

#endif
