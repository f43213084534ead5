// SPDX-License-Identifier: MIT
/* Encoder and decoder of the compact events inside EVENTS blocks (layout in
 * memfmt_internal.h). The decoder assigns slots by the format's rule, so
 * readers get every event with its slot and never see addresses. Never
 * trusts its input: any impossible slot or operation is corruption. */
#include <stdlib.h>

#include "memfmt.h"
#include "memfmt_internal.h"

void memfmt_evstate_release(struct memfmt_evstate *st)
{
    free(st->last_new);
    free(st->free_slots);
    memset(st, 0, sizeof *st);
}

static int grow_u64(uint64_t **p, size_t *cap, size_t need)
{
    if (need <= *cap) {
        return 0;
    }
    size_t ncap = *cap ? *cap : 64;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 16) {
            return MEMFMT_E_NOMEM;
        }
        ncap *= 2;
    }
    uint64_t *q = realloc(*p, ncap * sizeof *q);
    if (!q) {
        return MEMFMT_E_NOMEM;
    }
    memset(q + *cap, 0, (ncap - *cap) * sizeof *q);
    *p = q;
    *cap = ncap;
    return 0;
}

/* ---- encoder ---- */

int memfmt_event_encode(struct memfmt_evstate *st, const struct memfmt_record *ev, uint8_t *p)
{
    uint8_t *start = p;
    uint32_t thread = ev->tag == MEMFMT_REC_FREE ? ev->u.free.thread : ev->u.alloc.thread;
    unsigned kind = ev->tag == MEMFMT_REC_FREE ? ev->u.free.kind : ev->u.alloc.kind;
    if (kind >= 16 || thread >= MEMFMT_MAX_THREADS) {
        return MEMFMT_E_INVALID;
    }
    if (thread >= st->last_cap && grow_u64(&st->last_new, &st->last_cap, (size_t)thread + 1) < 0) {
        return MEMFMT_E_NOMEM;
    }
    if (thread != st->thread) {
        *p++ = MEMFMT_OP_THREAD << 4;
        p += memfmt_put_varint(p, thread);
        st->thread = thread;
    }
    uint64_t last = st->last_new[thread];
    switch (ev->tag) {
    case MEMFMT_REC_ALLOC:
        *p++ = (uint8_t)(MEMFMT_OP_ALLOC << 4 | kind);
        p += memfmt_put_varint(p, ev->u.alloc.size);
        p += memfmt_put_varint(p, ev->u.alloc.trace);
        st->last_new[thread] = ev->u.alloc.slot + 1;
        break;
    case MEMFMT_REC_FREE:
        if (last && last - 1 == ev->u.free.slot) {
            *p++ = (uint8_t)(MEMFMT_OP_FREE_LAST << 4 | kind);
        } else {
            *p++ = (uint8_t)(MEMFMT_OP_FREE << 4 | kind);
            p += memfmt_put_varint(p, ev->u.free.slot);
        }
        break;
    case MEMFMT_REC_REALLOC:
        if (last && last - 1 == ev->u.alloc.old_slot) {
            *p++ = (uint8_t)(MEMFMT_OP_REALLOC_LAST << 4 | kind);
        } else {
            *p++ = (uint8_t)(MEMFMT_OP_REALLOC << 4 | kind);
            p += memfmt_put_varint(p, ev->u.alloc.old_slot);
        }
        p += memfmt_put_varint(p, ev->u.alloc.size);
        p += memfmt_put_varint(p, ev->u.alloc.trace);
        st->last_new[thread] = ev->u.alloc.slot + 1;
        break;
    default:
        return MEMFMT_E_INVALID;
    }
    return (int)(p - start);
}

/* ---- decoder ---- */

static inline int get(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
    /* Fast path for the one-byte values that most fields are. */
    if (*pp < end && !(**pp & 0x80)) {
        *v = *(*pp)++;
        return 0;
    }
    return memfmt_get_varint(pp, end, v) < 0 ? MEMFMT_E_CORRUPT : 0;
}

static int take_slot(struct memfmt_evstate *st, uint64_t *slot)
{
    if (st->nfree) {
        *slot = st->free_slots[--st->nfree];
        return 0;
    }
    *slot = st->next_slot++;
    return 0;
}

static int give_slot(struct memfmt_evstate *st, uint64_t slot)
{
    if (slot >= st->next_slot) {
        return MEMFMT_E_CORRUPT;
    }
    if (st->nfree == st->free_cap && grow_u64(&st->free_slots, &st->free_cap, st->nfree + 1) < 0) {
        return MEMFMT_E_NOMEM;
    }
    st->free_slots[st->nfree++] = slot;
    return 0;
}

static int last_slot(struct memfmt_evstate *st, uint64_t *slot)
{
    if (st->thread >= st->last_cap || st->last_new[st->thread] == 0) {
        return MEMFMT_E_CORRUPT;
    }
    *slot = st->last_new[st->thread] - 1;
    return 0;
}

static int new_block(struct memfmt_evstate *st, const uint8_t **pp, const uint8_t *end, struct memfmt_record *ev)
{
    uint64_t size, trace, slot;
    if (get(pp, end, &size) < 0 || get(pp, end, &trace) < 0 || trace > UINT32_MAX) {
        return MEMFMT_E_CORRUPT;
    }
    take_slot(st, &slot);
    if (st->thread >= st->last_cap && grow_u64(&st->last_new, &st->last_cap, (size_t)st->thread + 1) < 0) {
        return MEMFMT_E_NOMEM;
    }
    st->last_new[st->thread] = slot + 1;
    ev->u.alloc.thread = st->thread;
    ev->u.alloc.size = size;
    ev->u.alloc.trace = (uint32_t)trace;
    ev->u.alloc.slot = slot;
    return 0;
}

int memfmt_event_decode(struct memfmt_evstate *st, const uint8_t **pp, const uint8_t *end,
                        struct memfmt_record *ev)
{
    while (*pp < end) {
        uint8_t h = *(*pp)++;
        unsigned op = h >> 4, kind = h & 15;
        uint64_t v;
        int rc;
        switch (op) {
        case MEMFMT_OP_THREAD:
            if (get(pp, end, &v) < 0 || v >= MEMFMT_MAX_THREADS) {
                return MEMFMT_E_CORRUPT;
            }
            st->thread = (uint32_t)v;
            continue;
        case MEMFMT_OP_ALLOC:
            ev->tag = MEMFMT_REC_ALLOC;
            ev->u.alloc.kind = kind;
            ev->u.alloc.old_slot = 0;
            return new_block(st, pp, end, ev) < 0 ? MEMFMT_E_CORRUPT : 1;
        case MEMFMT_OP_FREE:
        case MEMFMT_OP_FREE_LAST:
            if (op == MEMFMT_OP_FREE) {
                rc = get(pp, end, &v);
            } else {
                rc = last_slot(st, &v);
            }
            if (rc < 0 || give_slot(st, v) < 0) {
                return MEMFMT_E_CORRUPT;
            }
            ev->tag = MEMFMT_REC_FREE;
            ev->u.free.thread = st->thread;
            ev->u.free.kind = kind;
            ev->u.free.slot = v;
            return 1;
        case MEMFMT_OP_REALLOC:
        case MEMFMT_OP_REALLOC_LAST:
            if (op == MEMFMT_OP_REALLOC) {
                rc = get(pp, end, &v);
            } else {
                rc = last_slot(st, &v);
            }
            if (rc < 0 || give_slot(st, v) < 0) {
                return MEMFMT_E_CORRUPT;
            }
            ev->tag = MEMFMT_REC_REALLOC;
            ev->u.alloc.kind = kind;
            ev->u.alloc.old_slot = v;
            return new_block(st, pp, end, ev) < 0 ? MEMFMT_E_CORRUPT : 1;
        default:
            return MEMFMT_E_CORRUPT;
        }
    }
    return 0;
}
