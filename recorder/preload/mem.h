// SPDX-License-Identifier: MIT
/* The recorder's own memory (mem.c): page-granular mappings straight from mmap, never the
 * hooked malloc. */
#ifndef RECORDER_MEM_H
#define RECORDER_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "hidden.h"
#include "memwire.h"

/** Zeroed, page-granular memory straight from mmap; NULL on failure. */
HIDDEN void *mem_map(size_t bytes);
HIDDEN void mem_unmap(void *p, size_t bytes);

/* The recorder's own mappings, for memrec's reachability scan: they hold
 * copies of block addresses (events on their way) that are no pointers of
 * the program's, so memrec must not take them for roots. */
struct mem_range {
    uint64_t start, len;
};

#define MEM_MAX_RANGES MEMFMT_CONN_MAX_RANGES

/** Count a mapping the recorder made another way (shmbuf.c's buffer area,
 * shared with memrec) among its own; never given back. */
HIDDEN void mem_note_own(void *p, size_t bytes);

/** Copy the recorder's live mappings into `out` (at most MEM_MAX_RANGES).
 * Returns how many, or -1 when more were made than the table holds (the
 * list is then incomplete). Async-signal-safe. */
HIDDEN int mem_own_ranges(struct mem_range *out);

#endif
