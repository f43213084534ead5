// SPDX-License-Identifier: MIT
/* A thread's lifetime and CPU time in the recording, from its THREAD_TIMES
 * records, and how the tables that show them (memprint --threads,
 * --alloc-time, memtui's allocator time view) print them: one place for
 * the sum over the threads of a reused index and for what "unknown" looks
 * like. */
#ifndef THREADTIMES_H
#define THREADTIMES_H

#include <stdint.h>
#include <stdio.h>

#include "memfmt.h"

struct thread_times {
    int known; /* the file holds a THREAD_TIMES record for the thread */
    uint64_t wall_ns; /* lifetime */
    uint64_t cpu_ns; /* CPU time over it; 0: the recorder could not read it */
};

/** Add a THREAD_TIMES record `r` to `t`: a reused thread index sums its
 * threads, saturated (a bad file must not wrap a sum round to a small
 * figure). */
void thread_times_add(struct thread_times *t, const struct memfmt_record *r);
/** Text: " %12s %12s", the lifetime and the CPU time as util_ns() writes
 * them, "-" for what is not known. */
void thread_times_text(const struct thread_times *t, FILE *f);
/** JSON: the members `, "wall_ns": N, "cpu_ns": N`, null for what is not
 * known. */
void thread_times_json(const struct thread_times *t, FILE *f);

#endif
