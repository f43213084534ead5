// SPDX-License-Identifier: MIT
/* memrec's side of "allocator start-up": decides which traces are the
 * initialization of libraries the user preloaded (MODULE records flagged
 * MEMFMT_MODF_PRELOAD_ONLY), whose allocations merge.c sets apart instead
 * of writing them, and counts them. Runs in memrec; allocates freely. */
#ifndef STARTUP_H
#define STARTUP_H

#include <stddef.h>
#include <stdint.h>

#include "memfmt.h"

struct startup;

/** Empty state: no module known, nothing set apart. */
struct startup *startup_new(void);
/** Release; accepts NULL. */
void startup_free(struct startup *st);
/** Learn a MODULE or UNMODULE record (others are ignored), in file order. */
void startup_module(struct startup *st, const struct memfmt_record *r);
/** Whether the trace ending at node `trace` is allocator start-up: its
 * outermost frames lie in ld.so, and the first frame after them lies in a
 * preload-only module (a preloaded library's initializer, called by the
 * loader; whatever it calls works on its behalf). `ip` and `parent` are the
 * file's node table (node 0 is the root), of `nnodes` entries. Uses the
 * modules learnt so far and caches its answer per node until a module is
 * unloaded. */
int startup_marked(struct startup *st, uint32_t trace, const uint64_t *ip, const uint32_t *parent, size_t nnodes);
/** Count one allocation set apart. */
void startup_count(struct startup *st, uint64_t size);
/** The allocations set apart so far. */
uint64_t startup_calls(const struct startup *st);
uint64_t startup_bytes(const struct startup *st);

#endif
