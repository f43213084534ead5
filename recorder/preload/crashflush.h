// SPDX-License-Identifier: MIT
/* The flush from a fatal signal's handler (crashflush.c): every thread's
 * pending events, then the news that the process dies. */
#ifndef RECORDER_CRASHFLUSH_H
#define RECORDER_CRASHFLUSH_H

#include <stdint.h>

#include "hidden.h"

/** From a fatal signal's handler: send every thread's pending events.
 * Async-signal-safe; waits for each lock only as `wait_more` allows (it
 * naps and returns 1, or returns 0 when this lock's wait or the whole
 * flush's time is over; its *deadline starts at 0 for each lock), so a
 * lock held by the interrupted code or a stuck thread costs that buffer,
 * never a deadlock. The interrupted thread's own buffer, when that thread
 * was holding it, is sent up to its last complete event. */
HIDDEN void crashflush_all(int (*wait_more)(int64_t *deadline));
/** From a fatal signal's handler, after the flush: tell memrec the process
 * dies of `sig`. Async-signal-safe. */
HIDDEN void crashflush_say_signaled(int sig);

#endif
