// SPDX-License-Identifier: MIT
/* The calls signal handlers queued (sigdefer.c) while their thread was
 * inside the recorder, written as events into the thread's own buffer by
 * the thread itself, its buffer held. Runs inside the target: no
 * allocation, no lock of its own. */
#include "sigevents.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "guard.h"
#include "options.h"
#include "sample.h"
#include "sigdefer.h"
#include "tbuf.h"
#include "tracetree.h"

/* A queued call's stack: its call site, then the gap marker that says
 * its callers are not known (docs/capture.md, "Signals and threads"). */
static uint32_t trace_of(struct tbuf *b, const struct sigdefer_event *e)
{
    const uint64_t ips[2] = {e->site, 0};
    uint64_t h = stack_hash_step(stack_hash_step(STACK_HASH_SEED, ips[1]), ips[0]);
    uint32_t leaf = tracetree_lookup(&b->tree, 2, h);
    return leaf ? leaf : tracetree_insert(&b->tree, ips, 2, h, tbuf_emit_node, b);
}

static void emit_free(struct tbuf *b, unsigned kind, void *p)
{
    if (opts.sample_rate && !sample_remove(p)) {
        return;
    }
    tbuf_ensure_room(b, TBUF_EVENT_ROOM);
    tbuf_put_numbered(b, MEMFMT_W_FREE);
    tbuf_put(b, kind);
    tbuf_put(b, (uint64_t)(uintptr_t)p);
}

static void emit_alloc(struct tbuf *b, const struct sigdefer_event *e)
{
    if (opts.sample_rate && !tbuf_sampled(e->p, e->size)) {
        return;
    }
    uint32_t trace = trace_of(b, e);
    tbuf_ensure_room(b, TBUF_EVENT_ROOM);
    tbuf_put_numbered(b, MEMFMT_W_ALLOC);
    tbuf_put(b, e->kind);
    tbuf_put(b, e->size);
    tbuf_put(b, (uint64_t)(uintptr_t)e->p);
    tbuf_put(b, trace);
}

static void emit_one(struct tbuf *b, const struct sigdefer_event *e)
{
    if (e->op == SIGDEFER_FREE || (e->op == SIGDEFER_REALLOC && !e->p)) {
        emit_free(b, e->kind, e->old);
        return;
    }
    if (e->op == SIGDEFER_ALLOC || !e->old) {
        emit_alloc(b, e);
        return;
    }
    if (opts.sample_rate) {
        /* As do_realloc() samples: the parts apart, each if sampled. */
        emit_free(b, e->kind, e->old);
        emit_alloc(b, e);
        return;
    }
    uint32_t trace = trace_of(b, e);
    tbuf_ensure_room(b, TBUF_EVENT_ROOM);
    uint64_t s1 = seq_take();
    uint64_t s2 = seq_take();
    b->data[b->len++] = MEMFMT_W_REALLOC;
    tbuf_put_seq(b, s1);
    tbuf_put_seq(b, s2);
    tbuf_put(b, e->kind);
    tbuf_put(b, (uint64_t)(uintptr_t)e->old);
    tbuf_put(b, (uint64_t)(uintptr_t)e->p);
    tbuf_put(b, e->size);
    tbuf_put(b, trace);
}

/* Handlers run to their end before this thread goes on, so every slot
 * below `reserved` is complete when read here; slots a handler takes while
 * this runs are found by the compare-exchange, which fails then. */
void sigevents_emit(struct tbuf *b)
{
    struct sigdefer_queue *q = tstate.sigq;
    tstate.deferred = 0;
    atomic_signal_fence(memory_order_seq_cst);
    if (!q) {
        return;
    }
    unsigned from = 0;
    for (;;) {
        unsigned n = atomic_load(&q->reserved);
        for (unsigned i = from; i < n && i < SIGDEFER_MAX; i++) {
            emit_one(b, &q->ev[i]);
        }
        from = n;
        if (atomic_compare_exchange_strong(&q->reserved, &n, 0)) {
            return;
        }
    }
}
