// SPDX-License-Identifier: MIT
/* The recorder's own memory (mem.c): page-granular mappings straight from mmap, never the
 * hooked malloc. */
#ifndef RECORDER_MEM_H
#define RECORDER_MEM_H

#include <stddef.h>

#include "hidden.h"

/** Zeroed, page-granular memory straight from mmap; NULL on failure. */
HIDDEN void *mem_map(size_t bytes);
HIDDEN void mem_unmap(void *p, size_t bytes);

#endif
