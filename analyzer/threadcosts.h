// SPDX-License-Identifier: MIT
/* Costs per thread (memprint --threads): each thread's calls, bytes
 * allocated, temporaries, its blocks' bytes live at the moment of the heap
 * peak (its contribution to the peak) and what of them leaked. One pass
 * over the file, record by record (the event batches carry no thread).
 * Events name no addresses: a free is charged to a block of its own
 * thread when that thread has one of the same size and stack, else to the
 * lowest-numbered thread that has one. In a timed recording (memrec
 * --time) each thread also has its allocator time, charged as the other
 * costs are: its allocations' time and the time of the frees charged to
 * its blocks (a realloc's whole time with its new block), so a thread's
 * time is --alloc-time's for that thread (the calls it made) when every
 * block is freed by the thread that allocated it. Never prints. */
#ifndef THREADCOSTS_H
#define THREADCOSTS_H

#include <stdint.h>
#include <stdio.h>

#include "costs.h"
#include "model.h"
#include "threadtimes.h"

struct thread_costs {
    uint32_t index; /* the recording's thread index (1: the first thread) */
    uint32_t tid; /* kernel thread id, 0 when the file does not say */
    /* calls, temporary, peak (live at the heap peak), leaked, allocated,
     * time (nanoseconds in the allocator; 0 when not timed); mapped stays 0 */
    struct cost_vec c;
    uint64_t leaked_blocks;
    struct thread_times times; /* its lifetime and CPU time (THREAD_TIMES) */
};

struct threads {
    struct thread_costs *v; /* by index, ascending; only threads that allocated */
    uint32_t n;
    int stop_rc; /* 0, or the memfmt status where the data stopped */
};

/** Read the recording at `path` (the file `m` was loaded from) and count
 * per thread. Returns 0 with *out set (free with threads_free()), or a
 * negative memfmt status when the file cannot be opened (*err_errno =
 * errno for MEMFMT_E_IO). The peak is the same moment as the summary's;
 * the threads' peak contributions sum to it, their leaks to the total
 * leaked and their times to the summary's time in the allocator (sampled:
 * each an estimate, rounded on its own). Memory: the distinct threads, 16 bytes per (size, stack) pair
 * id of the file, and one entry per thread holding live blocks of a pair. */
int threads_run(const char *path, const struct model *m, struct threads **out, int *err_errno);
/** Release; accepts NULL. */
void threads_free(struct threads *t);

/** memprint's THREADS section (text): one row per thread. `timed`: the
 * file has allocator time (memrec --time), a column before the thread's
 * lifetime and CPU time ('-' when the file does not say). */
void threads_print_text(const struct threads *th, int timed, FILE *f);
/** The same as a JSON array (the report's "threads_section"). `timed`:
 * allocator_time_ns per thread, null when the file has none. */
void threads_print_json(const struct threads *th, int timed, FILE *f);

#endif
