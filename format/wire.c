// SPDX-License-Identifier: MIT
/* Decoder of the pipe protocol (memwire.h); the recorder encodes
 * inline on its hot path, memrec decodes here. Never trusts its input. */
#include "memfmt.h"
#include "memwire.h"

static inline int get(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
    return memfmt_get_varint_fast(pp, end, v);
}

static inline int get_seq(const uint8_t **pp, const uint8_t *end, uint64_t *prev, uint64_t *out)
{
    uint64_t d;
    int rc = get(pp, end, &d);
    if (rc < 0) {
        return rc;
    }
    *prev += d;
    *out = *prev;
    return 0;
}

/* The direct-mapping events; field use in memwire.h. */
static int decode_map(const uint8_t **pp, const uint8_t *end, uint64_t *prev_seq, struct memfmt_wire_event *ev)
{
    uint64_t v = 0;
    int rc = get_seq(pp, end, prev_seq, &ev->seq);
    if (rc == 0 && ev->tag == MEMFMT_W_MREMAP) {
        rc = get_seq(pp, end, prev_seq, &ev->seq2);
    }
    if (rc == 0 && ev->tag == MEMFMT_W_UNMAP) {
        rc = get(pp, end, &v);
        ev->kind = (uint32_t)v;
        if (rc == 0 && v >= MEMFMT_MK_COUNT) {
            rc = MEMFMT_E_CORRUPT;
        }
    }
    if (rc == 0) {
        rc = get(pp, end, &ev->addr);
    }
    if (rc == 0) {
        rc = get(pp, end, ev->tag == MEMFMT_W_BRK ? &ev->addr2 : &ev->size);
    }
    if (rc == 0 && ev->tag == MEMFMT_W_MREMAP) {
        rc = get(pp, end, &ev->addr2);
        if (rc == 0) {
            rc = get(pp, end, &ev->b);
        }
    }
    if (rc == 0 && (ev->tag == MEMFMT_W_MAP || ev->tag == MEMFMT_W_BRK)) {
        rc = get(pp, end, &ev->a);
    }
    return rc;
}

int memfmt_wire_decode(const uint8_t **pp, const uint8_t *end, uint64_t *prev_seq, struct memfmt_wire_event *ev)
{
    const uint8_t *p = *pp;
    if (p >= end) {
        return MEMFMT_E_TRUNCATED;
    }
    ev->tag = *p++;
    uint64_t v = 0;
    int rc = 0;
    ev->ticks = 0;
    /* The timed forms are the untimed ones and their ticks. */
    int timed = ev->tag == MEMFMT_W_ALLOC_T || ev->tag == MEMFMT_W_FREE_T || ev->tag == MEMFMT_W_REALLOC_T;
    if (timed) {
        ev->tag -= MEMFMT_W_ALLOC_T - MEMFMT_W_ALLOC;
    }
    switch (ev->tag) {
    case MEMFMT_W_IMAGE:
    case MEMFMT_W_EXITING:
    case MEMFMT_W_SIGNALED: rc = get(&p, end, &ev->a); break;
    case MEMFMT_W_LOST:
        rc = get(&p, end, &ev->a);
        if (rc == 0) {
            rc = get(&p, end, &ev->b);
        }
        if (rc == 0) {
            rc = get(&p, end, &ev->c);
        }
        break;
    case MEMFMT_W_BYE:
    case MEMFMT_W_EXECING: break;
    case MEMFMT_W_HELLO:
    case MEMFMT_W_TIMES:
    case MEMFMT_W_PROC_CPU:
    case MEMFMT_W_NODE:
    case MEMFMT_W_COUNTS:
        rc = get(&p, end, &ev->a);
        if (rc == 0) {
            rc = get(&p, end, &ev->b);
        }
        break;
    case MEMFMT_W_ALLOC:
        rc = get_seq(&p, end, prev_seq, &ev->seq);
        if (rc == 0) {
            rc = get(&p, end, &v);
            ev->kind = (uint32_t)v;
            if (rc == 0 && v >= MEMFMT_K_COUNT) {
                rc = MEMFMT_E_CORRUPT; /* the file keeps the kind in 4 bits */
            }
        }
        if (rc == 0) {
            rc = get(&p, end, &ev->size);
        }
        if (rc == 0) {
            rc = get(&p, end, &ev->addr);
        }
        if (rc == 0) {
            rc = get(&p, end, &ev->a);
        }
        break;
    case MEMFMT_W_FREE:
        rc = get_seq(&p, end, prev_seq, &ev->seq);
        if (rc == 0) {
            rc = get(&p, end, &v);
            ev->kind = (uint32_t)v;
            if (rc == 0 && v >= MEMFMT_K_COUNT) {
                rc = MEMFMT_E_CORRUPT; /* the file keeps the kind in 4 bits */
            }
        }
        if (rc == 0) {
            rc = get(&p, end, &ev->addr);
        }
        break;
    case MEMFMT_W_REALLOC:
        rc = get_seq(&p, end, prev_seq, &ev->seq);
        if (rc == 0) {
            rc = get_seq(&p, end, prev_seq, &ev->seq2);
        }
        if (rc == 0) {
            rc = get(&p, end, &v);
            ev->kind = (uint32_t)v;
            if (rc == 0 && v >= MEMFMT_K_COUNT) {
                rc = MEMFMT_E_CORRUPT; /* the file keeps the kind in 4 bits */
            }
        }
        if (rc == 0) {
            rc = get(&p, end, &ev->addr);
        }
        if (rc == 0) {
            rc = get(&p, end, &ev->addr2);
        }
        if (rc == 0) {
            rc = get(&p, end, &ev->size);
        }
        if (rc == 0) {
            rc = get(&p, end, &ev->a);
        }
        break;
    case MEMFMT_W_POOL_ALLOC:
    case MEMFMT_W_POOL_FREE:
    case MEMFMT_W_POOL_RESET:
        ev->addr = ev->size = ev->a = 0; /* the fields a free or reset lacks */
        rc = get_seq(&p, end, prev_seq, &ev->seq);
        if (rc == 0) {
            rc = get(&p, end, &ev->b);
        }
        if (rc == 0 && ev->tag != MEMFMT_W_POOL_RESET) {
            rc = get(&p, end, &ev->addr);
        }
        if (rc == 0 && ev->tag == MEMFMT_W_POOL_ALLOC) {
            rc = get(&p, end, &ev->size);
        }
        if (rc == 0 && ev->tag == MEMFMT_W_POOL_ALLOC) {
            rc = get(&p, end, &ev->a);
        }
        break;
    case MEMFMT_W_SYNC:
        rc = get_seq(&p, end, prev_seq, &ev->seq);
        if (rc == 0) {
            rc = get(&p, end, &ev->a);
        }
        if (rc == 0) {
            rc = get(&p, end, &ev->b);
        }
        break;
    case MEMFMT_W_RECORD:
        rc = get_seq(&p, end, prev_seq, &ev->seq);
        if (rc == 0) {
            rc = get(&p, end, &v);
        }
        if (rc == 0 && (uint64_t)(end - p) < v) {
            rc = MEMFMT_E_TRUNCATED;
        }
        if (rc == 0) {
            ev->rec = p;
            ev->rec_len = (uint32_t)v;
            p += v;
        }
        break;
    case MEMFMT_W_MAP:
    case MEMFMT_W_UNMAP:
    case MEMFMT_W_MREMAP:
    case MEMFMT_W_BRK: rc = decode_map(&p, end, prev_seq, ev); break;
    default: return MEMFMT_E_CORRUPT;
    }
    if (rc == 0 && timed) {
        rc = get(&p, end, &ev->ticks);
    }
    if (rc < 0) {
        return rc == MEMFMT_E_TRUNCATED ? MEMFMT_E_CORRUPT : rc;
    }
    *pp = p;
    return 0;
}
