// SPDX-License-Identifier: MIT
/* What keeps RSS up (docs/definitions.md, "What keeps RSS up"): the layout
 * of glibc's main heap that memrec wrote from the live blocks' addresses
 * (LAYOUT records, docs/format.md "Heap layout"), kept as read for the
 * RSS VERSUS HEAP section (rssgap.h keeps it per moment, pinned.h prints
 * it): the block at the top of the heap and the free memory below it, and
 * the call stacks ranked by the free pages their blocks hold, with the
 * pages that hold only their blocks. Fixed memory: one record's worth
 * (MEMFMT_MAX_LAYOUT stacks) per copy. */
#ifndef HEAPLAYOUT_H
#define HEAPLAYOUT_H

#include <stdint.h>
#include <stdio.h>

#include "memfmt.h"

/* One LAYOUT record as the analyzer keeps it. */
struct heaplayout {
    int known; /* a LAYOUT record was read */
    uint64_t ms; /* the time of the latest TIME record before it */
    uint64_t events; /* the reader's: allocations and frees before it (rssgap.c), the state it describes */
    uint64_t page, heap_bytes, live_bytes, live_blocks, free_pages, top_end, top_size, top_held_pages, ntraces;
    uint64_t cost_ns; /* memrec's time to make it */
    uint32_t heap; /* enum memfmt_layout_heap: the main heap, or the thread arenas' heaps together */
    uint64_t heaps; /* heaps laid out */
    uint32_t top_trace;
    uint32_t n;
    struct memfmt_layout_entry e[MEMFMT_MAX_LAYOUT];
    uint32_t ntops; /* the heaps' tops (thread arenas' record), ranked */
    struct memfmt_layout_top tops[MEMFMT_MAX_LAYOUT];
};

/* Why no layout is shown (JSON: heap_layout.unknown_why). */
enum heaplayout_why {
    HEAPLAYOUT_KNOWN,
    HEAPLAYOUT_ALLOCATOR, /* no allocator samples: another allocator, MEMREC_HEAPINFO=0, or before version 3 */
    HEAPLAYOUT_SAMPLED, /* a sampled recording: memrec saw the addresses of the sampled blocks only */
    HEAPLAYOUT_NOT_RECORDED, /* samples but no layout: an older memrec, or the heap's range or size out of reach */
    HEAPLAYOUT_NOT_YET, /* --at before the first layout of the recording */
};

/** Keep LAYOUT record `r`, read at time `ms`; a trace at or above
 * `nnodes` (not defined yet) becomes 0 (no stack). Returns 1 when a trace
 * was so replaced (the caller counts the record as refused), else 0. */
uint32_t heaplayout_take(struct heaplayout *l, const struct memfmt_record *r, uint64_t ms, uint32_t nnodes);

/** The reason's name in JSON ("allocator", "sampled", "not_recorded", "not_yet"); NULL when known. */
const char *heaplayout_why_name(enum heaplayout_why why);

#endif
