// SPDX-License-Identifier: MIT
/* The buffer area (shmbuf.c): the slots the threads' buffers live in, in
 * one memfd mapping that memrec holds too, so that what a process killed
 * outright had written is not lost with it (memwire.h, "the buffer area").
 * In the base layer; buffer.c takes and gives back slots. */
#ifndef RECORDER_SHMBUF_H
#define RECORDER_SHMBUF_H

#include <stddef.h>

#include "hidden.h"

/* Threads beyond this many at once get private buffers, which a SIGKILL
 * loses as before. The file is sparse: only the slots of live threads
 * take memory. */
#define SHMBUF_SLOTS 1024u

/** Make this image's area, with slots of `obj_size` bytes (rounded up to
 * pages) whose batch-end integer lies at `done_at` (`done_size` bytes, as
 * is the in-flight length at `inflight_at`), whose batch at `data_at`, and,
 * when sampling, the thread's exact counters at `calls_at` and
 * `bytes_at` (0: none); memwire.h says what each means to memrec. Returns the memfd for memrec (the caller sends
 * it and closes it; the mapping stays), or -1 when there is no area (no
 * memfd_create, no memory, or an area exists already: a second attach to
 * the same process). Not async-signal-safe; once per image. */
HIDDEN int shmbuf_setup(size_t obj_size, size_t done_at, size_t done_size, size_t data_at, size_t calls_at,
                        size_t bytes_at, size_t inflight_at);
/** A zeroed slot of the area, or NULL (no area, or all slots taken: the
 * caller maps private memory instead). Lock-free; any thread. */
HIDDEN void *shmbuf_take(void);
/** Give back `p` if it is a slot of the area: 1 done (the slot is zeroed:
 * memrec sees no thread there), 0 not a slot (the caller unmaps it
 * itself). The slot must hold no events (done at the batch header), and
 * its last counts must have been sent. Lock-free; any thread. */
HIDDEN int shmbuf_give(void *p);
/** In a fork child: the area is the parent's (a shared mapping, no copy on
 * write), so no slot of it is ever handed out here again; a recording of
 * the child's own makes a new area. */
HIDDEN void shmbuf_forget(void);

#endif
