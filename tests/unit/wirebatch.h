// SPDX-License-Identifier: MIT
/* Building recorder batches by hand for the merge's unit tests: a batch is
 * its stream number, then events whose sequence numbers are delta-coded
 * (memwire.h's wire protocol, without the length field that
 * merge_batch() does not see). */
#ifndef WIREBATCH_H
#define WIREBATCH_H

#include <stdint.h>
#include <string.h>

#include "memwire.h"

struct batch {
    uint8_t b[512];
    size_t n;
    uint64_t prev;
};

static inline void start(struct batch *b, uint32_t stream)
{
    memcpy(b->b, &stream, 4);
    b->n = 4;
    b->prev = 0;
}

static inline void put(struct batch *b, uint64_t v)
{
    b->n += memfmt_put_varint(b->b + b->n, v);
}

static inline void seq(struct batch *b, uint64_t s)
{
    put(b, s - b->prev);
    b->prev = s;
}

#endif
