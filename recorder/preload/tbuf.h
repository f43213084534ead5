// SPDX-License-Identifier: MIT
/* A thread's event buffer (buffer.c), as the other files of the buffers
 * layer see it: sigevents.c, buffer_map.c and crashflush.c append to a
 * buffer or flush it with what is here. Files above the buffers layer use
 * buffer.h, buffer_map.h and crashflush.h instead. */
#ifndef RECORDER_TBUF_H
#define RECORDER_TBUF_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "buflock.h"
#include "hidden.h"
#include "memwire.h"
#include "seq.h"
#include "tracetree.h"
#include "unwind.h"
#include "varint.h"

struct tbuf {
    struct buflock lk; /* see buflock.h */
    int quiet_later; /* for_each_quiet(): its owner was inside, take it alone afterwards */
    uint32_t stream;
    pid_t tid;
    int orphan; /* created after the thread's exit destructor */
    uint64_t prev_seq; /* delta base of the current batch */
    uint32_t tree_gen;
    uint32_t nev; /* sequence numbers in the current batch: the events a drop loses */
    int lost_tree; /* a batch of this stream was dropped: its trace tree restarts at the next lock_mine() */
    uint32_t nrec; /* W_RECORDs in the current batch: a drop of one makes the modules be announced again */
    atomic_uint_fast64_t skipped; /* events skipped while the pipe was stalled, not yet counted */
    int owner_holds; /* the owner holds the lock (inside lock_mine .. unlock_mine) */
    uint64_t born_ns; /* CLOCK_MONOTONIC when the thread's buffer was made (its first event) */
    uint64_t born_cpu_ns; /* the thread's CPU time then: THREAD_TIMES count from there, as the lifetime does */
    unsigned rec_gen; /* the recording (buffer.c's rec_gen) born_ns belongs to */
    /* End of the complete events not yet handed to write(2): what a crash
     * handler interrupting the owner while it holds the lock can send. */
    atomic_size_t done;
    /* The length of the batch being handed to write(2), 0 when none: a
     * process killed meanwhile may or may not have put it in the pipe, and
     * memrec, which reads this from the buffer area, tells which by the
     * batch's bytes (memwire.h, "the buffer area"). */
    atomic_size_t inflight;
    atomic_uint_fast64_t calls, bytes; /* sampling: every allocation, counted exactly */
    size_t len; /* bytes used in data, header included */
    struct tracetree tree;
    struct unwind_ctx unwind;
    struct tbuf *next; /* registry */
    uint8_t data[MEMFMT_WIRE_BATCH];
};

/* Room an event needs at most; a buffer with less is flushed first. */
#define TBUF_EVENT_ROOM 80

/* Every function here is called with the buffer's lock held (by its owner,
 * or by another thread through the buflock_others_* steps). */

/** Send the buffer's complete batch to the pipe and start a new one:
 * pipe_send()'s enum pipe_sent (PIPE_SENT with nothing to send). A dropped
 * batch makes the stream start over (lost_tree), and until then the rest
 * of it is dropped too. */
HIDDEN int tbuf_flush(struct tbuf *b);
/** Sampling: the thread's exact totals so far (a COUNTS event). */
HIDDEN void tbuf_put_counts(struct tbuf *b);
/** The trace-tree callback that writes a new node (announcing its module
 * first when it is new): `ctx` is the buffer. */
HIDDEN void tbuf_emit_node(void *ctx, uint32_t parent, uint64_t ip);
/** The caller's stack as a node id of the buffer's trace tree. */
HIDDEN uint32_t tbuf_capture(struct tbuf *b);
/** Sampling: count an allocation of this thread and say whether it is
 * recorded (sample_hit() and sample_add()). */
HIDDEN int tbuf_sampled(void *p, size_t size);

/** Lock this thread's buffer (creating it at first use) and send what
 * signal handlers queued first; NULL when there is no buffer. The
 * allocation path inlines the same steps; these are for the rarer events. */
HIDDEN struct tbuf *tbuf_lock_mine(void);
/** Mark the events complete, flush if the buffer is nearly full (or from
 * exit on, always), and unlock. */
HIDDEN void tbuf_unlock_mine(struct tbuf *b);

/** The registry of buffers, for the crash flush: try to take it (1 taken),
 * its first buffer (then ->next), release it. */
HIDDEN int tbuf_registry_try(void);
HIDDEN struct tbuf *tbuf_registry_first(void);
HIDDEN void tbuf_registry_release(void);

static inline void tbuf_ensure_room(struct tbuf *b, size_t need)
{
    if (b->len + need > MEMFMT_WIRE_BATCH) {
        tbuf_flush(b);
    }
}

static inline void tbuf_put(struct tbuf *b, uint64_t v)
{
    b->len += memfmt_put_varint(b->data + b->len, v);
}

static inline void tbuf_put_seq(struct tbuf *b, uint64_t s)
{
    tbuf_put(b, s - b->prev_seq);
    b->prev_seq = s;
    b->nev++;
}

/* An event's tag and its number, taken now: callers hold the buffer and
 * call it where the ordering rule (buffer.c) puts the number. */
static inline void tbuf_put_numbered(struct tbuf *b, uint8_t tag)
{
    uint64_t s = seq_take();
    b->data[b->len++] = tag;
    tbuf_put_seq(b, s);
}

#endif
