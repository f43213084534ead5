// SPDX-License-Identifier: MIT
/* The allocator's own view of the heap (heapinfo.c): glibc's mallinfo2(),
 * read once at attach (BASELINE) and sampled by the service thread
 * (HEAPINFO records). Sits beside modules.c: it sends records through the
 * buffers below it and is called by attach.c and service.c above it. */
#ifndef RECORDER_HEAPINFO_H
#define RECORDER_HEAPINFO_H

#include <stdint.h>

#include "hidden.h"
#include "memfmt.h"

/* CPU time spent in mallinfo2() is kept below 1/HEAPINFO_BUDGET of the
 * time that passes (0.5%): after a call that took c ns of CPU time, the
 * next comes no sooner than HEAPINFO_BUDGET * c ns after it. */
#define HEAPINFO_BUDGET 200

/** Ask the allocator for its figures. Returns 0 with `out` filled in (its
 * cost_ns the CPU time the call took, wall_ns its wall time), or -1 when the allocator in use has no
 * mallinfo2 (another allocator preloaded, or a glibc older than 2.33).
 * The first call looks the function up with dlsym and dladdr (they may
 * allocate: call it with the thread's reentrancy flag set, never from a
 * hook or a signal handler). mallinfo2 takes each arena's lock in turn and
 * walks its free lists: its cost grows with the free chunks. */
HIDDEN int heapinfo_read(struct memfmt_record *out);
/** The service thread's tick: read and send a HEAPINFO record when the
 * budget allows it (HEAPINFO_BUDGET) and MEMREC_HEAPINFO is 1. Must be
 * called with no buffer lock held (mallinfo2 waits for arena locks, which
 * a program thread may hold while it waits for its buffer). */
HIDDEN void heapinfo_tick(void);

#endif
