// SPDX-License-Identifier: MIT
/* The MEMREC_* options (options.c), read once from the environment at start-up into one
 * static table. */
#ifndef RECORDER_OPTIONS_H
#define RECORDER_OPTIONS_H

#include "hidden.h"

struct rec_options {
    int max_depth; /* frames kept per stack */
    int verbose; /* MEMREC_VERBOSE */
    int freeres; /* free the C++ runtime's one-time pool at exit */
    int flush_ms; /* service thread period */
    int fast_unwind; /* use cfi.c before libunwind */
    int check_unwind; /* compare cfi.c with libunwind on every stack */
    int sample_rate; /* 0: record everything; else mean bytes between sampled allocations */
    int sample_seed; /* 0: a different sample every run */
    int tsc_order; /* order events by the TSC where the kernel trusts it */
    int heapinfo; /* sample the allocator's own figures (mallinfo2) in the service thread */
    int max_wait_ms; /* memrec --max-wait: -1 wait for memrec as long as it takes; else drop batches past it */
    int reachability; /* ask memrec to classify the live blocks at the normal end */
    int time; /* memrec --time: enum alloctime_clock (callclock.h); 0: calls are not timed */
};

HIDDEN extern struct rec_options opts;

/** Read MEMREC_* from `envp` (no getenv: it must work before libc is
 * fully set up, and never allocates). */
HIDDEN void options_init(char **envp);
/** Find `name`'s value in `envp`, or NULL. */
HIDDEN const char *options_env(char **envp, const char *name);

#endif
