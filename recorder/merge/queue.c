// SPDX-License-Identifier: MIT
/* The merge's per-stream queues: events wait here, per recorder thread,
 * until their turn comes (order.c). Not inline: push() is called for every
 * event, and inlined in the decode switch it made memrec 20% slower. */
#include "merge.h"

#include "merge_internal.h"

struct stream *stream_get(struct merge *m, uint32_t id)
{
    if (id >= m->nstreams_cap) {
        xgrow((void **)&m->streams, &m->nstreams_cap, (size_t)id + 1, sizeof *m->streams);
    }
    struct stream *s = &m->streams[id];
    s->used = 1;
    return s;
}

/* Streams with something to do are listed, so that ordering costs grow
 * with the threads that are busy, not with all threads ever seen. */
void activate(struct merge *m, struct stream *s)
{
    if (s->active) {
        return;
    }
    s->active = 1;
    if (m->nactive == m->active_cap) {
        xgrow((void **)&m->active, &m->active_cap, m->nactive + 1, sizeof *m->active);
    }
    m->active[m->nactive++] = (uint32_t)(s - m->streams);
}

void push(struct merge *m, struct stream *s, const struct qev *e)
{
    activate(m, s);
    if (s->head > 0 && s->head == s->len) {
        s->head = s->len = 0;
    }
    if (s->len == s->cap) {
        if (s->head > s->cap / 2) {
            memmove(s->q, s->q + s->head, (s->len - s->head) * sizeof *s->q);
            s->len -= s->head;
            s->head = 0;
        } else {
            xgrow((void **)&s->q, &s->cap, s->len + 1, sizeof *s->q);
        }
    }
    s->q[s->len++] = *e;
}
