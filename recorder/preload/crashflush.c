// SPDX-License-Identifier: MIT
/* The flush from a fatal signal's handler (crash.c installs it): every
 * thread's pending events, each buffer's lock waited for only as long as
 * the handler allows. Async-signal-safe: no allocation, no lock taken
 * without a bound. */
#include "crashflush.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "buflock.h"
#include "guard.h"
#include "memwire.h"
#include "pipe.h"
#include "tbuf.h"
#include "varint.h"

static void flush_one_from_signal(struct tbuf *b, int mine, int (*wait_more)(int64_t *))
{
    if (mine && b->owner_holds) {
        /* The interrupted code holds the lock (say, abort() inside the real
         * realloc): nobody else touches the buffer, and the events before
         * the one being written are complete. */
        size_t done = atomic_load_explicit(&b->done, memory_order_acquire);
        if (done > MEMFMT_WIRE_HEADER) {
            b->len = done;
            tbuf_flush(b);
        }
        return;
    }
    if (!buflock_bounded(&b->lk.lock, wait_more)) {
        return;
    }
    buflock_others_want(&b->lk);
    buflock_others_barrier();
    if (!buflock_others_wait_bounded(&b->lk, wait_more)) {
        buflock_others_done(&b->lk); /* its owner is stuck inside the recorder: leave it */
        return;
    }
    tbuf_put_counts(b);
    tbuf_flush(b);
    buflock_others_done(&b->lk);
}

void crashflush_all(int (*wait_more)(int64_t *))
{
    struct tbuf *mine = tstate.buf;
    int64_t deadline = 0;
    int have_registry = 1;
    while (!tbuf_registry_try()) {
        if (!wait_more(&deadline)) {
            have_registry = 0;
            break;
        }
    }
    if (!have_registry) {
        if (mine) {
            flush_one_from_signal(mine, 1, wait_more);
        }
        return;
    }
    for (struct tbuf *b = tbuf_registry_first(); b; b = b->next) {
        flush_one_from_signal(b, b == mine, wait_more);
    }
    tbuf_registry_release();
}

void crashflush_say_signaled(int sig)
{
    /* A batch of its own, built on the stack: the service buffer's lock
     * may be held by the thread that crashed. memrec needs this only for
     * processes it is not the parent of (--follow-fork). */
    uint8_t b[MEMFMT_WIRE_HEADER + 1 + MEMFMT_VARINT_MAX];
    size_t n = MEMFMT_WIRE_HEADER;
    b[n++] = MEMFMT_W_SIGNALED;
    n += memfmt_put_varint(b + n, (uint64_t)sig);
    uint32_t len = (uint32_t)(n - 4), stream = 0;
    memcpy(b, &len, 4);
    memcpy(b + 4, &stream, 4);
    pipe_send(b, n, 0);
}
