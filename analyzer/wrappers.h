// SPDX-License-Identifier: MIT
/* Folding allocator wrappers: a stack whose innermost frames are a
 * wrapper of malloc (xmalloc, g_malloc, Perl_safesysmalloc, operator new,
 * std::allocator<T>::allocate...) is counted at the first caller that is
 * not one, so that the caller is the allocation site. This makes the map
 * of trace-tree nodes the analysis pass charges instead (analysis_query.remap);
 * memtui's W. Never prints. */
#ifndef WRAPPERS_H
#define WRAPPERS_H

#include <stddef.h>
#include <stdint.h>

#include "frames.h"

/** The wrappers folded when no expression is given: a POSIX extended
 * regular expression matched against each frame's name (frames_name_dup()). */
extern const char wrappers_known[];

/** For every node of frames_model(fr), the node its blocks are counted
 * at: itself, or for a node whose every frame's name matches `re` (NULL:
 * wrappers_known), the nearest ancestor that has a frame that does not,
 * stopping at main() and below the root. Into *remap (malloc'd, nnodes
 * entries; the caller frees it); *folded: how many traces (nodes with an
 * allocation or a mapping in the whole run) moved. Returns 0, or
 * MEMFMT_E_INVALID for a bad expression (message in err). O(nodes ×
 * inlined frames) regex matches, each node once. */
int wrappers_remap(struct frames *fr, const char *re, uint32_t **remap, uint32_t *folded, char *err, size_t cap);

#endif
