// SPDX-License-Identifier: MIT
/* The buffer core (buffer.c), as the layers above see it: per-thread
 * event buffers and flush rounds, no global lock on the hot path; batches
 * go down to pipe.c. The other entries of the buffers layer: buffer_map.h
 * (direct mappings) and crashflush.h (the flush from a fatal signal). */
#ifndef RECORDER_BUFFER_H
#define RECORDER_BUFFER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "hidden.h"

/** Set up the pipe and start recording. `new_frame` is called (inside the
 * recorder, the thread's buffer held) for every frame a thread's trace tree
 * meets for the first time: modules_note_frame(). Returns 0 or -1
 * (recording off). */
HIDDEN int buffer_setup(int fd, void (*new_frame)(uint64_t ip));
/** A flush round: take a sequence number S, flush every thread's buffer,
 * send SYNC(S) (the service thread, every flush period). */
HIDDEN void buffer_sync(void);
/** Detach: flush everything, stop recording, and close the pipe (the
 * caller stops the service thread first: service_stop()). A later buffer_setup() starts again. Called by the
 * service thread (attach_disarm()), which owns no buffer: the flush waits
 * for every owner to leave its buffer, so a thread that owns one must never
 * call it. */
HIDDEN void buffer_detach(void);
/** From now on every event is written at once, and everything buffered
 * is sent now: once the program's threads are stopped, everything they
 * did is in the pipe (memrec --pid --reachability, before its scan).
 * Service thread only, as buffer_detach(). */
HIDDEN void buffer_go_direct(void);
/** Record an allocation / free / realloc of this thread. With --time
 * (opts.time), the event carries tstate.ticks, which the hook set to the
 * forwarded call's time (callclock.h). */
HIDDEN void buffer_alloc(unsigned kind, void *p, size_t size);
HIDDEN void buffer_free(unsigned kind, void *p);
/** A timed free (opts.time): begin writes the free, numbered before the
 * real free as every free is, and keeps the buffer locked (0: nothing is
 * recorded: not a sampled block, or no buffer); end, after the real call
 * and only when begin returned 1, adds its time in `ticks` and unlocks. */
HIDDEN int buffer_free_begin(unsigned kind, void *p);
HIDDEN void buffer_free_end(uint64_t ticks);
/** A timed free whose real call is `release(p)`: begin, the timed call,
 * end, in one call (for free(); the C++ deletes, with their several
 * signatures, use begin and end). */
HIDDEN void buffer_free_timed(unsigned kind, void *p, void (*release)(void *));
/** Realloc is recorded in two parts around the real call, so that another
 * thread's reuse of the old address is ordered after the free. */
HIDDEN uint64_t buffer_realloc_begin(void);
HIDDEN void buffer_realloc_end(uint64_t seq_free, unsigned kind, void *old, void *p, size_t size);
/** Send an already encoded file record (module list, process) in order.
 * May be called while the thread is recording an event. */
HIDDEN void buffer_record(const uint8_t *rec, size_t len);
/** The service thread: send an encoded file record in the service batch
 * (stream 0), sent with the next flush round's SYNC. Never makes the
 * service thread a thread of the recording. */
HIDDEN void buffer_service_record(const uint8_t *rec, size_t len);
/** Events numbered so far (the sequence counter; a plain load, maybe a
 * little behind), or 0 when events are ordered by the TSC (no count). */
HIDDEN uint64_t buffer_events_taken(void);
/** Modules were unloaded: every thread restarts its trace tree, so that a
 * new module at the same address never inherits old nodes. */
HIDDEN void buffer_modules_gone(void);
/** 1 once after a batch holding a record (a module's) was dropped or a
 * record skipped (pipe_send()'s bound), when the pipe takes writes again:
 * the caller announces the modules again (modules_relearn()). */
HIDDEN int buffer_records_lost(void);
/** Flush every thread's buffer and send everything directly from now on;
 * then tell memrec the image ends normally, with `status` (-1: not known). */
HIDDEN void buffer_finish(int status);
/** Flush every thread's buffer: the process is about to exec. */
HIDDEN void buffer_before_exec(void);
/** In a forked child: drop all state without touching the parent's pipe
 * or its buffer area. */
HIDDEN void buffer_forget(void);
/** The atfork prepare and parent handlers: from prepare until the child
 * handler's buffer_forget() (or the parent handler), an event of the
 * forking thread first checks that it runs in the parent. */
HIDDEN void buffer_fork_prepare(void);
HIDDEN void buffer_fork_parent(void);
/** Whether this is the child of the fork buffer_fork_prepare() began. */
HIDDEN int buffer_in_fork_child(void);
/** Record a pool event of include/memrec.h (wire tag MEMFMT_W_POOL_ALLOC,
 * _FREE or _RESET; `p` and `size` only where the tag has them). An
 * allocation gets the caller's stack and, when sampling, goes through the
 * same sampling as malloc; frees and resets are always sent, memrec
 * ignores those of blocks it does not know. Called between enter/leave. */
HIDDEN void buffer_pool(unsigned tag, const void *pool, const void *p, size_t size);

/** Send the calls signal handlers queued on this thread (sigdefer.c)
 * while it was inside the recorder. Called between the recorder's entry
 * and exit marks (hook_send_deferred() in init.c sets them). */
HIDDEN void buffer_send_deferred(void);

#endif
