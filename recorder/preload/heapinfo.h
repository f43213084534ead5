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

/* What bounds the cost of the samples (docs/capture.md, "The allocator's
 * own figures"). One call walks every free chunk of the arenas, holding
 * each arena's lock meanwhile: measured 150-250 ns a chunk when they are
 * cold (400,000 free chunks: 60 ms).
 * - CPU time spent in mallinfo2() stays below 1/HEAPINFO_BUDGET of the
 *   time that passes (0.5%): after a call that took c ns of CPU time, the
 *   next comes no sooner than HEAPINFO_BUDGET * c ns after it;
 * - a call that took more than HEAPINFO_STOP_NS of CPU time ends the
 *   samples for the rest of the run: the heap is fragmented enough that
 *   walking it holds the program's allocations up;
 * - a free makes at most one more free chunk, so the previous sample's
 *   free chunks plus the events numbered since bound the next walk: no
 *   sample is taken while that bound exceeds HEAPINFO_MAX_CHUNKS (the
 *   bound only grows: in effect the samples end). This caps a single walk
 *   at about 250 ms even when a long pause between samples let the heap
 *   fall apart (one call of 335 ms was seen on the tree benchmark without
 *   it); without a count (events ordered by the TSC) only the stop rule
 *   holds. */
#define HEAPINFO_BUDGET 200
#define HEAPINFO_MAX_CHUNKS 1000000u
#define HEAPINFO_STOP_NS 20000000u

/** Ask the allocator for its figures. Returns 0 with `out` filled in (its
 * cost_ns the CPU time the call took, wall_ns its wall time), -1 when the allocator in use has no
 * mallinfo2 (another allocator preloaded, or a glibc older than 2.33), or
 * -2 while the malloc in use is not known yet (no allocation so far).
 * The first call looks the function up with dlsym and dladdr (they may
 * allocate: call it with the thread's reentrancy flag set, never from a
 * hook or a signal handler). mallinfo2 takes each arena's lock in turn and
 * walks its free lists: its cost grows with the free chunks. */
HIDDEN int heapinfo_read(struct memfmt_record *out);
/** The service thread's tick: read and send a HEAPINFO record when
 * MEMREC_HEAPINFO is 1 and the bounds above allow it. Must be
 * called with no buffer lock held (mallinfo2 waits for arena locks, which
 * a program thread may hold while it waits for its buffer). */
HIDDEN void heapinfo_tick(void);

#endif
