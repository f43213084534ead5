// SPDX-License-Identifier: MIT
/* memrec --time: the clock the hooks read just before and just after the
 * forwarded call to the allocator. Header only: it is read twice per timed
 * call and must stay inline. Never allocates. */
#ifndef RECORDER_ALLOCTIME_H
#define RECORDER_ALLOCTIME_H

#include <stdint.h>
#include <time.h>

#include "options.h"

/* MEMREC_TIME's values. memrec chooses the clock (it converts ticks to ns
 * in its merge, so both sides must agree): the TSC where the CPU says it
 * runs at a constant rate through frequency changes and sleep states
 * (constant_tsc, nonstop_tsc) and the kernel keeps time with it (it has
 * then checked that the counters of all CPUs agree), else CLOCK_MONOTONIC
 * through the vDSO, in ns. docs/capture.md, "Allocator time". */
enum alloctime_clock {
    ALLOCTIME_OFF = 0,
    ALLOCTIME_TSC = 1,
    ALLOCTIME_MONOTONIC = 2,
};

/** Now, in the chosen clock's ticks. Only called when opts.time is on.
 * RDTSCP waits until every earlier instruction has executed, so the
 * first read is not taken before the recorder's own work is done and the
 * second not before the allocator's call has returned. Async-signal-safe. */
static inline __attribute__((always_inline)) uint64_t alloctime_now(void)
{
#if defined(__x86_64__)
    if (opts.time == ALLOCTIME_TSC) {
        uint32_t lo, hi;
        __asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi)::"rcx");
        return (uint64_t)hi << 32 | lo;
    }
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
