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

/** Set while batches are being dropped (pipe_send()'s bound passed and
 * no batch fitted since): the buffers then skip events without building
 * them. Cleared by the next batch that fits. Read on the hot path. */
HIDDEN extern atomic_int pipe_stalled;

/** Use descriptor fd (memrec's pipe) from now on. */
HIDDEN void pipe_open(int fd);
/** What pipe_send() did with a batch. */
enum pipe_sent {
    PIPE_SENT = 0, /* in the pipe */
    PIPE_DROPPED = 1, /* memrec did not read within opts.max_wait_ms: dropped and counted */
    PIPE_LOST = 2, /* no memrec: recording is off (or it was already) */
};
/** Write one batch of at most PIPE_BUF bytes, holding `events` numbered
 * events, with one write(2). SIGPIPE is blocked around it, so a memrec that
 * died cannot kill the target: a failed write turns recording off
 * (rec_enabled) and logs once unless pipe_silent(). A descriptor the
 * program closed (a hook said so, or a raw close shows up as EBADF) is
 * fetched again from memrec first. With opts.max_wait_ms >= 0 the wait for
 * room in the pipe is bounded: past the bound the batch is dropped and
 * counted (pipe_lost()), and later batches that do not fit are dropped at
 * once until one fits again; the wait sleeps in poll(2), it never spins.
 * Async-signal-safe; any thread. */
HIDDEN int pipe_send(const uint8_t *p, size_t n, uint32_t events);
/** While stalled: whether the pipe takes a write again (poll(2), no
 * wait); if so the stall ends. 1 it does. */
HIDDEN int pipe_probe(void);
/** The events dropped so far and not yet said (pipe_lost_said()), and the
 * CLOCK_MONOTONIC milliseconds of the first and the latest drop: 1 if
 * any. */
HIDDEN int pipe_lost(uint64_t *events, uint64_t *first_ms, uint64_t *last_ms);
/** Count `events` (at least 1) as dropped now, for a batch dropped
 * without a write: the rest of a stream that lost one (buffer.c). */
HIDDEN void pipe_count_drop(uint64_t events);
/** `events` of pipe_lost()'s count reached memrec: the span restarts
 * once nothing more was dropped since. */
HIDDEN void pipe_lost_said(uint64_t events);
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
