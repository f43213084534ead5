// SPDX-License-Identifier: MIT
/* The symbolized frames of every trace-tree node of a loaded recording,
 * computed once per node and kept for the life of the object, with the
 * names memprint prints for them. The call tree, the function filter and
 * the exports read frames through here so that a frame is named one way.
 * It has its own symbolizer: it never touches the model's sym_index. */
#ifndef FRAMES_H
#define FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "symbolize.h"

struct frames;

/** Frames for the nodes of `m` (which must outlive it). Nothing is
 * symbolized yet. Returns NULL only when the symbolizer cannot start
 * (libdw). Free with frames_free(). */
struct frames *frames_new(const struct model *m);
/** Release, with every frame and string handed out; accepts NULL. */
void frames_free(struct frames *f);

/** The frames of model node `node` (< m->nnodes), innermost first: the
 * functions inlined at its address, then the real function (symbolize.h).
 * The root (0) has none (*n = 0). A gap node (ip 0: frames the recorder
 * cut) has one frame with function, file and module NULL and offset 0; an
 * address in no module one frame with module NULL and module_offset = ip;
 * one in a module that cannot be symbolized, the module and the offset
 * in it (symfiles.h).
 * The array stays valid until frames_free(). The first call for a node
 * may open files and allocate; later calls are O(1). A node id out of
 * range gives *n = 0. */
const struct sym_frame *frames_of_node(struct frames *f, uint32_t node, uint32_t *n);

/** The model given to frames_new(). */
const struct model *frames_model(const struct frames *f);

/** 1 when `node`'s outermost frame is the real function main(): reports
 * and trees start a stack there, dropping the C library's frames above. */
int frames_node_is_main(struct frames *f, uint32_t node);

/** The name of a frame as memprint prints it, in a new string (xmalloc:
 * dies on out of memory) that the caller frees: the function; "?? in
 * MODULE+0xOFFSET" (module's file name) when it is not known; "[frames
 * omitted]" for a gap. Names are escaped as util/escape.h's text form
 * (\xHH for control characters and bytes that are not UTF-8), so a hostile
 * name cannot reach a terminal raw and the name is valid UTF-8. */
char *frames_name_dup(const struct sym_frame *fr);

#endif
