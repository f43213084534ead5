// SPDX-License-Identifier: MIT
/* The events of direct mappings (buffer_map.c), for maphooks.c; recorded
 * in full even when sampling. */
#ifndef RECORDER_BUFFER_MAP_H
#define RECORDER_BUFFER_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "hidden.h"

/** buffer_map: an anonymous range was mapped; the stack is captured.
 * Calls that unmap take a number before the real call (the buffer stays
 * locked) and end with exactly one of buffer_map_end (success: tag is
 * MEMFMT_W_UNMAP with kind, old, old_len; MEMFMT_W_MREMAP with all four;
 * MEMFMT_W_BRK with old and new break in old and p) or buffer_map_cancel
 * (the call failed). Called between the recorder's entry and exit marks. */
HIDDEN void buffer_map(uintptr_t addr, size_t len);
HIDDEN uint64_t buffer_map_begin(void);
HIDDEN void buffer_map_end(uint64_t seq, unsigned tag, unsigned kind, uintptr_t old, size_t old_len, uintptr_t p,
                           size_t len);
HIDDEN void buffer_map_cancel(uint64_t seq);

#endif
