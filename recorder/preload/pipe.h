// SPDX-License-Identifier: MIT
/* The pipe to memrec (pipe.c), in the base layer: buffer.c and
 * crashflush.c send their batches through it; the close() hooks and an attach tell it
 * what the program does with descriptors and stderr. */
#ifndef PIPE_H
#define PIPE_H

#include "hidden.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/** Recording is on: set by buffer_setup(), cleared when the pipe is lost
 * (here), at detach, in a forked child and by a crash handler. Read on the
 * hot path by every hook. It lives with the pipe, the lowest file that
 * writes it, so that no file below the buffers reaches up for it. */
HIDDEN extern atomic_int rec_enabled;

/** Use descriptor fd (memrec's pipe) from now on. */
HIDDEN void pipe_open(int fd);
/** Write one batch of at most PIPE_BUF bytes with one write(2). SIGPIPE is
 * blocked around it, so a memrec that died cannot kill the target: a
 * failed write turns recording off (rec_enabled) and logs once unless
 * pipe_silent(). A descriptor the program closed (a hook said so, or a raw
 * close shows up as EBADF) is fetched again from memrec first.
 * Async-signal-safe; any thread. */
HIDDEN void pipe_send(const uint8_t *p, size_t n);
/** The program is about to close or replace descriptors lo..hi. If the
 * pipe is one of them, stop using it (waiting for writes in progress); the
 * next write asks memrec for a new descriptor of the same pipe. */
HIDDEN void pipe_fd_closing(int lo, int hi);
/** With `on`, a lost connection to memrec stops recording without a word
 * on the program's stderr (attached: it is not ours to write to). */
HIDDEN void pipe_silent(int on);
/** Detach: wait for writes in progress and close the descriptor, without
 * asking memrec for another. */
HIDDEN void pipe_close(void);
/** In a fork child: close the parent's descriptor and reset the state
 * other threads of the parent may have left behind. */
HIDDEN void pipe_forget(void);

#endif
