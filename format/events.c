// SPDX-License-Identifier: MIT
/* Encoder and decoder of the compact events inside EVENTS blocks (layout in
 * memfmt_internal.h). The decoder keeps the table of (size, trace) pairs,
 * so readers get every event complete and never see addresses. Never
 * trusts its input: an unknown info, a temporary free of a thread that has
 * not allocated, or an unknown operation is corruption. */
#include <stdlib.h>
#include <string.h>

#include "memfmt.h"
#include "memfmt_internal.h"

void memfmt_evstate_layout(struct memfmt_evstate *st, unsigned version, uint32_t flags)
{
    st->timed = version >= 3 && (flags & MEMFMT_HF_TIMED) != 0;
    st->timecode = st->timed && version >= 4;
}

void memfmt_evstate_release(struct memfmt_evstate *st)
{
    free(st->last_info);
    free(st->infos);
    free(st->tc_table);
    memset(st, 0, sizeof *st);
}

/* Grow an array of `elem`-byte items to hold index `need - 1`. */
static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    size_t ncap = *cap ? *cap : 64;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 4 / elem) {
            return MEMFMT_E_NOMEM;
        }
        ncap *= 2;
    }
    void *q = realloc(*p, ncap * elem);
    if (!q) {
        return MEMFMT_E_NOMEM;
    }
    memset((char *)q + *cap * elem, 0, (ncap - *cap) * elem);
    *p = q;
    *cap = ncap;
    return 0;
}

static int thread_room(struct memfmt_evstate *st, uint32_t thread)
{
    if (thread < st->last_cap) {
        return 0;
    }
    return grow((void **)&st->last_info, &st->last_cap, (size_t)thread + 1, sizeof *st->last_info);
}

/* ---- encoder ---- */

static inline void put_col(uint8_t *col[MEMFMT_NCOLS], enum memfmt_ev_col c, uint64_t v)
{
    col[c] += memfmt_put_varint(col[c], v);
}

/* The allocated pair: its id, or NEW with size and trace. */
static void put_new_block(struct memfmt_evstate *st, uint8_t *col[MEMFMT_NCOLS], uint8_t *op, uint32_t info,
                          uint64_t size, uint32_t trace)
{
    if (info == st->ninfo + 1) {
        *op |= MEMFMT_OP_NEW;
        put_col(col, MEMFMT_COL_SIZE, size);
        put_col(col, MEMFMT_COL_TRACE, trace);
        st->ninfo++;
    } else {
        put_col(col, MEMFMT_COL_INFO, info);
    }
}

/* The freed pair (checked by the caller): TEMP when it is the thread's
 * latest allocation freed as its next event, else its id. */
static void put_old_block(uint8_t *col[MEMFMT_NCOLS], uint8_t *op, uint32_t info, int temporary)
{
    if (temporary) {
        *op |= MEMFMT_OP_TEMP;
    } else {
        put_col(col, MEMFMT_COL_INFO, info);
    }
}

int memfmt_event_encode(struct memfmt_evstate *st, const struct memfmt_record *ev, uint8_t *col[MEMFMT_NCOLS])
{
    int is_free = ev->tag == MEMFMT_REC_FREE;
    uint32_t thread = is_free ? ev->u.free.thread : ev->u.alloc.thread;
    unsigned kind = is_free ? ev->u.free.kind : ev->u.alloc.kind;
    if (kind >= 16 || thread >= MEMFMT_MAX_THREADS) {
        return MEMFMT_E_INVALID;
    }
    if (thread_room(st, thread) < 0) {
        return MEMFMT_E_NOMEM;
    }
    /* Checked before anything is written: a refused event leaves no trace. */
    switch (ev->tag) {
    case MEMFMT_REC_ALLOC:
    case MEMFMT_REC_REALLOC:
        if (ev->u.alloc.info == 0 || ev->u.alloc.info > st->ninfo + 1) {
            return MEMFMT_E_INVALID;
        }
        if (ev->tag == MEMFMT_REC_ALLOC) {
            break;
        }
        if (ev->u.alloc.old_temporary ? ev->u.alloc.old_info == 0 || st->last_info[thread] != ev->u.alloc.old_info
                                      : ev->u.alloc.old_info == 0 || ev->u.alloc.old_info > st->ninfo) {
            return MEMFMT_E_INVALID;
        }
        break;
    case MEMFMT_REC_FREE:
        if (ev->u.free.temporary ? ev->u.free.info == 0 || st->last_info[thread] != ev->u.free.info
                                 : ev->u.free.info == 0 || ev->u.free.info > st->ninfo) {
            return MEMFMT_E_INVALID;
        }
        break;
    default: return MEMFMT_E_INVALID;
    }
    if (thread != st->thread) {
        *col[MEMFMT_COL_OPS]++ = MEMFMT_OP_THREAD << 4;
        put_col(col, MEMFMT_COL_THREAD, thread);
        st->thread = thread;
    }
    uint8_t op;
    switch (ev->tag) {
    case MEMFMT_REC_ALLOC:
        op = MEMFMT_OP_ALLOC;
        put_new_block(st, col, &op, ev->u.alloc.info, ev->u.alloc.size, ev->u.alloc.trace);
        st->last_info[thread] = ev->u.alloc.info;
        break;
    case MEMFMT_REC_FREE:
        op = MEMFMT_OP_FREE;
        put_old_block(col, &op, ev->u.free.info, ev->u.free.temporary);
        st->last_info[thread] = 0;
        break;
    default: /* MEMFMT_REC_REALLOC */
        op = MEMFMT_OP_REALLOC;
        put_old_block(col, &op, ev->u.alloc.old_info, ev->u.alloc.old_temporary);
        put_new_block(st, col, &op, ev->u.alloc.info, ev->u.alloc.size, ev->u.alloc.trace);
        st->last_info[thread] = ev->u.alloc.info;
        break;
    }
    *col[MEMFMT_COL_OPS]++ = (uint8_t)(op << 4 | kind);
    if (st->timed) {
        put_col(col, MEMFMT_COL_TIME, is_free ? ev->u.free.ns : ev->u.alloc.ns);
    }
    return 0;
}

size_t memfmt_event_block_write(uint8_t *p, uint8_t *const col_start[MEMFMT_NCOLS], const size_t len[MEMFMT_NCOLS],
                                const struct memfmt_evstate *st)
{
    uint8_t *start = p;
    /* The last column has no length: it is the rest of the payload. */
    int last = st->timed ? MEMFMT_COL_TIME : MEMFMT_COL_THREAD;
    for (int c = 0; c < last; c++) {
        p += memfmt_put_varint(p, len[c]);
    }
    for (int c = 0; c <= last; c++) {
        if (c == MEMFMT_COL_TIME && st->timecode) {
            p += timecode_write(p, col_start[c], len[c]);
            continue;
        }
        memcpy(p, col_start[c], len[c]);
        p += len[c];
    }
    return (size_t)(p - start);
}

/* ---- decoder ---- */

/* Version 4: the time column's coding byte, and a reader of its code when
 * it is Huffman's (the column's cursor is then left used up). */
static int time_column(struct memfmt_evstate *st)
{
    struct memfmt_cursor *c = &st->cur[MEMFMT_COL_TIME];
    if (c->p == c->end) {
        return MEMFMT_E_CORRUPT;
    }
    uint8_t coding = *c->p++;
    if (coding == TIMECODE_VARINTS) {
        return 0;
    }
    if (coding != TIMECODE_HUFFMAN) {
        return MEMFMT_E_CORRUPT;
    }
    if (!st->tc_table && !(st->tc_table = malloc(sizeof(uint16_t) << TIMECODE_MAX_BITS))) {
        return MEMFMT_E_NOMEM;
    }
    if (timecode_open(&st->tc, c->p, c->end, st->tc_table) < 0) {
        return MEMFMT_E_CORRUPT;
    }
    c->p = c->end;
    st->huffman = 1;
    return 0;
}

int memfmt_event_block(struct memfmt_evstate *st, const uint8_t *payload, size_t len, unsigned version)
{
    const uint8_t *p = payload, *end = payload + len;
    if (version < 2) {
        st->cur[0] = (struct memfmt_cursor){p, end};
        for (int c = 0; c < MEMFMT_NCOLS; c++) {
            st->col[c] = &st->cur[0];
        }
        return 0;
    }
    /* The last column has no length: it is the rest of the payload. An
     * untimed block's time column is empty. */
    int last = st->timed ? MEMFMT_COL_TIME : MEMFMT_COL_THREAD;
    uint64_t n[MEMFMT_COL_TIME];
    for (int c = 0; c < last; c++) {
        if (memfmt_get_varint(&p, end, &n[c]) < 0) {
            return MEMFMT_E_CORRUPT;
        }
    }
    for (int c = 0; c < MEMFMT_NCOLS; c++) {
        size_t left = (size_t)(end - p);
        if (c < last && n[c] > left) {
            return MEMFMT_E_CORRUPT;
        }
        size_t k = c < last ? (size_t)n[c] : c == last ? left : 0;
        st->cur[c] = (struct memfmt_cursor){p, p + k};
        st->col[c] = &st->cur[c];
        p += k;
    }
    st->huffman = 0;
    return st->timed && st->timecode ? time_column(st) : 0;
}

static inline int get(struct memfmt_cursor *c, uint64_t *v)
{
    return memfmt_get_varint_fast(&c->p, c->end, v) < 0 ? MEMFMT_E_CORRUPT : 0;
}

/* At the end of the operations, every column must be used up. */
static int block_end(const struct memfmt_evstate *st)
{
    for (int c = 0; c < MEMFMT_NCOLS; c++) {
        if (st->col[c]->p != st->col[c]->end) {
            return MEMFMT_E_CORRUPT;
        }
    }
    return st->huffman && !timecode_done(&st->tc) ? MEMFMT_E_CORRUPT : 0;
}

/* The allocated pair of ALLOC and REALLOC: its id in *info. */
static inline __attribute__((always_inline)) int get_new_block(struct memfmt_evstate *st, unsigned op, uint32_t *info)
{
    uint64_t a, b;
    if (op & MEMFMT_OP_NEW) {
        if (get(st->col[MEMFMT_COL_SIZE], &a) < 0 || get(st->col[MEMFMT_COL_TRACE], &b) < 0 || b > UINT32_MAX ||
            st->ninfo == UINT32_MAX) {
            return MEMFMT_E_CORRUPT;
        }
        uint32_t id = st->ninfo + 1;
        if (id >= st->info_cap && grow((void **)&st->infos, &st->info_cap, (size_t)id + 1, sizeof *st->infos) < 0) {
            return MEMFMT_E_NOMEM;
        }
        st->infos[id].size = a;
        st->infos[id].trace = (uint32_t)b;
        st->infos[id].live = 0;
        st->ninfo = id;
        *info = id;
    } else {
        if (get(st->col[MEMFMT_COL_INFO], &a) < 0 || a == 0 || a > st->ninfo) {
            return MEMFMT_E_CORRUPT;
        }
        *info = (uint32_t)a;
    }
    st->infos[*info].live++;
    return 0;
}

/* The freed pair of FREE and REALLOC, named or the thread's latest: its id
 * in *info. */
static inline __attribute__((always_inline)) int get_old_block(struct memfmt_evstate *st, unsigned op, uint32_t *info)
{
    uint64_t a;
    if (op & MEMFMT_OP_TEMP) {
        if (st->thread >= st->last_cap || st->last_info[st->thread] == 0) {
            return MEMFMT_E_CORRUPT;
        }
        a = st->last_info[st->thread];
    } else if (get(st->col[MEMFMT_COL_INFO], &a) < 0 || a == 0 || a > st->ninfo) {
        return MEMFMT_E_CORRUPT;
    }
    if (st->infos[a].live == 0) {
        return MEMFMT_E_CORRUPT; /* more frees than allocations of this pair */
    }
    st->infos[a].live--;
    *info = (uint32_t)a;
    return 0;
}

/* One event as both decoders need it: the type and the ids of the pairs. */
struct decoded_event {
    unsigned type; /* MEMFMT_OP_ALLOC, _FREE or _REALLOC */
    unsigned kind;
    uint32_t info; /* the allocated pair (ALLOC, REALLOC) */
    uint32_t old_info; /* the freed pair (FREE, REALLOC) */
    int temporary; /* the freed block was the thread's latest allocation */
    uint64_t ns; /* time in the allocator; 0 when not timed */
};

/* The time of the event just decoded, when the block has them. */
static inline __attribute__((always_inline)) int get_time(struct memfmt_evstate *st, struct decoded_event *d)
{
    d->ns = 0;
    if (!st->timed) {
        return 0;
    }
    return st->huffman ? timecode_get(&st->tc, &d->ns) : get(st->col[MEMFMT_COL_TIME], &d->ns);
}

/* Decode operations of the block until one event is complete; THREAD
 * operations only change the state. The one place that knows the
 * operations: memfmt_event_decode() and memfmt_event_decode_batch() are
 * both built on it, inlined, so each keeps only what it uses. Returns 1
 * with an event, 0 when the block ended without one, or MEMFMT_E_CORRUPT /
 * MEMFMT_E_NOMEM with the operation column where the bad operation
 * stopped. Needs room in last_info for the current thread. */
static inline __attribute__((always_inline)) int decode_event(struct memfmt_evstate *st, struct decoded_event *d)
{
    struct memfmt_cursor *ops = st->col[MEMFMT_COL_OPS];
    while (ops->p < ops->end) {
        uint8_t h = *ops->p++;
        unsigned op = h >> 4;
        uint64_t v;
        d->type = op & ~(unsigned)(MEMFMT_OP_NEW | MEMFMT_OP_TEMP);
        d->kind = h & 15;
        switch (d->type) {
        case MEMFMT_OP_THREAD:
            if (op != MEMFMT_OP_THREAD || get(st->col[MEMFMT_COL_THREAD], &v) < 0 || v >= MEMFMT_MAX_THREADS) {
                return MEMFMT_E_CORRUPT;
            }
            st->thread = (uint32_t)v;
            /* Tested here too: a call per THREAD operation shows in
             * recordings of many busy threads. */
            if (st->thread >= st->last_cap && thread_room(st, st->thread) < 0) {
                return MEMFMT_E_NOMEM;
            }
            continue;
        case MEMFMT_OP_ALLOC:
            if ((op & MEMFMT_OP_TEMP) || get_new_block(st, op, &d->info) < 0) {
                return MEMFMT_E_CORRUPT;
            }
            st->last_info[st->thread] = d->info;
            return get_time(st, d) < 0 ? MEMFMT_E_CORRUPT : 1;
        case MEMFMT_OP_FREE:
            if ((op & MEMFMT_OP_NEW) || get_old_block(st, op, &d->old_info) < 0) {
                return MEMFMT_E_CORRUPT;
            }
            d->temporary = (op & MEMFMT_OP_TEMP) != 0;
            st->last_info[st->thread] = 0;
            return get_time(st, d) < 0 ? MEMFMT_E_CORRUPT : 1;
        case MEMFMT_OP_REALLOC:
            if (get_old_block(st, op, &d->old_info) < 0 || get_new_block(st, op, &d->info) < 0) {
                return MEMFMT_E_CORRUPT;
            }
            d->temporary = (op & MEMFMT_OP_TEMP) != 0;
            st->last_info[st->thread] = d->info;
            return get_time(st, d) < 0 ? MEMFMT_E_CORRUPT : 1;
        default: return MEMFMT_E_CORRUPT;
        }
    }
    return block_end(st);
}

int memfmt_event_decode(struct memfmt_evstate *st, struct memfmt_record *ev)
{
    /* last_info always has room for the current thread: made at the
     * first call and at every THREAD operation. */
    if (st->thread >= st->last_cap && thread_room(st, st->thread) < 0) {
        return MEMFMT_E_NOMEM;
    }
    struct decoded_event d;
    int rc = decode_event(st, &d);
    if (rc <= 0) {
        return rc;
    }
    if (d.type == MEMFMT_OP_FREE) {
        ev->tag = MEMFMT_REC_FREE;
        ev->u.free.thread = st->thread;
        ev->u.free.kind = d.kind;
        ev->u.free.size = st->infos[d.old_info].size;
        ev->u.free.trace = st->infos[d.old_info].trace;
        ev->u.free.info = d.old_info;
        ev->u.free.temporary = d.temporary;
        ev->u.free.ns = d.ns;
        return 1;
    }
    /* ALLOC, or REALLOC: an allocation with the block it replaces. */
    int re = d.type == MEMFMT_OP_REALLOC;
    ev->tag = re ? MEMFMT_REC_REALLOC : MEMFMT_REC_ALLOC;
    ev->u.alloc.thread = st->thread;
    ev->u.alloc.kind = d.kind;
    ev->u.alloc.size = st->infos[d.info].size;
    ev->u.alloc.trace = st->infos[d.info].trace;
    ev->u.alloc.info = d.info;
    ev->u.alloc.old_size = re ? st->infos[d.old_info].size : 0;
    ev->u.alloc.old_trace = re ? st->infos[d.old_info].trace : 0;
    ev->u.alloc.old_info = re ? d.old_info : 0;
    ev->u.alloc.old_temporary = re ? d.temporary : 0;
    ev->u.alloc.ns = d.ns;
    return 1;
}

static inline uint32_t ns32(uint64_t ns)
{
    return ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
}

int memfmt_event_decode_batch(struct memfmt_evstate *st, struct memfmt_event *out, size_t cap, size_t *n)
{
    *n = 0;
    if (st->thread >= st->last_cap && thread_room(st, st->thread) < 0) {
        return MEMFMT_E_NOMEM;
    }
    struct memfmt_event *o = out;
    /* A realloc takes two entries: stop while two are left. */
    struct memfmt_event *last = out + cap - 1;
    int rc = 0;
    while (o < last) {
        struct decoded_event d;
        rc = decode_event(st, &d);
        if (rc <= 0) {
            break;
        }
        if (d.type != MEMFMT_OP_ALLOC) {
            o->size = st->infos[d.old_info].size;
            o->trace = st->infos[d.old_info].trace;
            o->flags = MEMFMT_EV_FREE | (d.temporary ? MEMFMT_EV_TEMPORARY : 0) |
                       (d.type == MEMFMT_OP_REALLOC ? MEMFMT_EV_REALLOC : 0);
            o->info = d.old_info;
            o->ns = d.type == MEMFMT_OP_FREE ? ns32(d.ns) : 0;
            o++;
        }
        if (d.type != MEMFMT_OP_FREE) {
            o->size = st->infos[d.info].size;
            o->trace = st->infos[d.info].trace;
            o->flags = 0;
            o->info = d.info;
            o->ns = ns32(d.ns);
            o++;
        }
        rc = 0;
    }
    *n = (size_t)(o - out);
    return rc;
}
