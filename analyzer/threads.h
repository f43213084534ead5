// SPDX-License-Identifier: MIT
/* Costs per thread (memprint --threads): each thread's calls, bytes
 * allocated, temporaries, its blocks' bytes live at the moment of the heap
 * peak (its contribution to the peak) and what of them leaked. One pass
 * over the file, record by record (the event batches carry no thread).
 * Events name no addresses: a free is charged to a block of its own
 * thread when that thread has one of the same size and stack, else to the
 * lowest-numbered thread that has one. Never prints. */
#ifndef THREADS_H
#define THREADS_H

#include <stdint.h>

#include "costs.h"
#include "model.h"

struct thread_costs {
    uint32_t index; /* the recording's thread index (1: the first thread) */
    uint32_t tid; /* kernel thread id, 0 when the file does not say */
    struct cost_vec c; /* calls, temporary, peak (live at the heap peak), leaked, allocated; mapped stays 0 */
    uint64_t leaked_blocks;
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
 * the threads' peak contributions sum to it and their leaks to the total
 * leaked. Memory: the distinct threads, 16 bytes per (size, stack) pair
 * id of the file, and one entry per thread holding live blocks of a pair. */
int threads_run(const char *path, const struct model *m, struct threads **out, int *err_errno);
/** Release; accepts NULL. */
void threads_free(struct threads *t);

#endif
