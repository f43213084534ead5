// SPDX-License-Identifier: MIT
/* The modules of a recording as the symbolizer sees them: each file (path
 * and build-id) registered once, however many modules at different
 * addresses name it, and only regular files (or missing ones, whose debug
 * file may be found by build-id). A recording is untrusted input: 3,000
 * modules of libc made libdw load its debug information 3,000 times
 * (190 s, 32 GB), and a module path naming a FIFO blocked for ever. Used by
 * report.c and frames.c, each with its own symbolizer. */
#ifndef SYMFILES_H
#define SYMFILES_H

#include <stdint.h>

#include "model.h"
#include "symbolize.h"

struct symfiles;

/** For the modules of `m` and the symbolizer `sym` (both must outlive
 * it). Nothing is registered yet. Dies on out of memory (xmalloc). */
struct symfiles *symfiles_new(const struct model *m, struct symbolizer *sym);
/** Release; accepts NULL. */
void symfiles_free(struct symfiles *s);
/** The frames of model node `node` (ip != 0) into `out` (room for `max`
 * >= 1): its function and the functions inlined at its address,
 * innermost first, as symbolize_lookup() gives them; or, when its module
 * is unknown or cannot be symbolized, one frame with no function and the
 * module's path and offset (or no module and the raw address). Returns
 * the number of frames, at least 1. The first lookup in a module registers
 * its file; strings belong to the symbolizer. */
int symfiles_lookup(struct symfiles *s, uint32_t node, struct sym_frame *out, int max);

#endif
