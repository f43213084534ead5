// SPDX-License-Identifier: MIT
/* memrec --time: the clock the hooks read just before and just after the
 * forwarded call to the allocator. Header only: it is read twice per timed
 * call and must stay inline. Never allocates. */
#ifndef RECORDER_CALLCLOCK_H
#define RECORDER_CALLCLOCK_H

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
 * RDTSC, not RDTSCP or LFENCE;RDTSC: those wait for every earlier
 * instruction and cost twice as much (33 against 12-16 ns on the reference
 * machine, a virtual AMD EPYC), which alone would double what --time adds.
 * Unordered, a read may move by the few instructions the CPU runs out of
 * order around it (a call and a return lie on each side of the timed
 * call): a few ns on each call, either way. Async-signal-safe. */
static inline __attribute__((always_inline)) uint64_t alloctime_now(void)
{
#if defined(__x86_64__)
    if (opts.time == ALLOCTIME_TSC) {
        uint32_t lo, hi;
        __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
        return (uint64_t)hi << 32 | lo;
    }
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
