// SPDX-License-Identifier: MIT
/* The clocks the recorder reads outside the timed hooks (callclock.h):
 * flush rounds, drop spans, heap samples, crash deadlines. Header only;
 * clock_gettime() goes through the vDSO, is async-signal-safe and never
 * allocates. */
#ifndef RECORDER_CLOCK_H
#define RECORDER_CLOCK_H

#include <stdint.h>
#include <time.h>

/** Clock `c` in ns, 0 when it cannot be read (a thread's CPU clock
 * after the thread ended). */
static inline uint64_t clock_read_ns(clockid_t c)
{
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0) {
        return 0;
    }
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/** CLOCK_MONOTONIC in ms. */
static inline uint64_t clock_mono_ms(void)
{
    return clock_read_ns(CLOCK_MONOTONIC) / 1000000u;
}

#endif
