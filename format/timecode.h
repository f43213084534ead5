// SPDX-License-Identifier: MIT
/* The time column of a version 4 EVENTS block (memfmt_internal.h): the
 * times the events spent in the allocator, in the smaller of two codings,
 * chosen block by block. Times are few distinct small values (most calls
 * take a few clock steps), some 3 bits of information each, which zstd
 * spends about 50 instructions a value on when they are bytes of their
 * own; a Huffman code made for the block stores them in about those 3 bits
 * and leaves zstd a few bytes it passes over quickly (docs/format.md,
 * "The time column"). Part of the format library; never trusts its input
 * when reading. */
#ifndef MEMFMT_TIMECODE_H
#define MEMFMT_TIMECODE_H

#include <stddef.h>
#include <stdint.h>

#include "memfmt.h"

/* The column's first byte. */
enum timecode_coding {
    TIMECODE_VARINTS = 0, /* then the times as LEB128 varints, as in version 3 */
    TIMECODE_HUFFMAN = 1, /* then a count, a code and a bit stream (timecode.c) */
};

#define TIMECODE_MAX_BITS 12 /* longest code: the decoder's table has 2^12 entries */
/* Symbols: a time below 128 is its own symbol; a larger one is 120 + its
 * bit length (8..64), followed by its bits below the top one. */
#define TIMECODE_DIRECT 128
#define TIMECODE_NSYM (TIMECODE_DIRECT + 57)

/* The bits a symbol's time has after its code: none for a direct one, the
 * bits below the top one for a time of bit length b (symbol 120 + b). */
static inline unsigned timecode_extra_bits(unsigned sym)
{
    return sym < TIMECODE_DIRECT ? 0 : sym - (TIMECODE_DIRECT - 8) - 1;
}

/** Write the time column whose values are the well-formed LEB128 varints
 * [v, v + len) (as the encoder wrote them) at `out`: the coding byte, then
 * the values in the smaller coding. Returns the bytes written, at most
 * 1 + len. */
size_t timecode_write(uint8_t *out, const uint8_t *v, size_t len);

/* A reader of a Huffman-coded column: what timecode_open() set up. */
struct timecode_reader {
    const uint8_t *p, *end; /* bytes not yet taken into `bits` */
    uint64_t bits; /* the next bits of the stream, lowest first */
    unsigned nbits;
    uint64_t left; /* values not read yet */
    uint16_t *table; /* 2^TIMECODE_MAX_BITS entries: symbol | length << 8 (length 0: no code) */
};

/** Start reading the Huffman-coded column [p, end) (after its coding
 * byte), with `table` (2^TIMECODE_MAX_BITS entries) to decode with.
 * Returns 0, or MEMFMT_E_CORRUPT when its count or code is impossible. */
int timecode_open(struct timecode_reader *r, const uint8_t *p, const uint8_t *end, uint16_t *table);
/** Whether every value was read and nothing but zero padding is left. */
int timecode_done(const struct timecode_reader *r);

/* ---- timecode_get(), inline: it runs for every event of a timed file ---- */

/* At least 57 bits in r->bits, or every bit left. Eight bytes at once
 * while that many remain: the bytes past those counted are the stream's
 * next bits too, so a later refill that ORs them in again changes
 * nothing. */
static inline void timecode_refill(struct timecode_reader *r)
{
    if (r->end - r->p >= 8) {
        uint64_t w = 0;
        for (int i = 7; i >= 0; i--) {
            w = w << 8 | r->p[i]; /* little-endian on any host; one load where it is */
        }
        r->bits |= w << r->nbits;
        r->p += (63 - r->nbits) >> 3;
        r->nbits |= 56;
        return;
    }
    while (r->nbits <= 56 && r->p < r->end) {
        r->bits |= (uint64_t)*r->p++ << r->nbits;
        r->nbits += 8;
    }
}

/* Take `k` bits (1..32) that timecode_refill() made sure of, or fail. */
static inline int timecode_take(struct timecode_reader *r, unsigned k, uint64_t *v)
{
    if (r->nbits < k) {
        return MEMFMT_E_CORRUPT;
    }
    *v = r->bits & ((1ull << k) - 1);
    r->bits >>= k;
    r->nbits -= k;
    return 0;
}

/** The next time. Returns 0, or MEMFMT_E_CORRUPT (no value left, bits
 * that are no code, or the stream ended). */
static inline __attribute__((always_inline)) int timecode_get(struct timecode_reader *r, uint64_t *v)
{
    if (r->left == 0) {
        return MEMFMT_E_CORRUPT;
    }
    if (r->nbits < TIMECODE_MAX_BITS) {
        timecode_refill(r);
    }
    uint16_t e = r->table[r->bits & ((1u << TIMECODE_MAX_BITS) - 1)];
    unsigned len = e >> 8, sym = e & 255;
    if (len == 0 || len > r->nbits) {
        return MEMFMT_E_CORRUPT;
    }
    r->bits >>= len;
    r->nbits -= len;
    r->left--;
    if (sym < TIMECODE_DIRECT) {
        *v = sym;
        return 0;
    }
    unsigned extra = timecode_extra_bits(sym);
    uint64_t lo, hi = 0;
    timecode_refill(r);
    if (timecode_take(r, extra > 32 ? 32 : extra, &lo) < 0) {
        return MEMFMT_E_CORRUPT;
    }
    if (extra > 32) {
        timecode_refill(r);
        if (timecode_take(r, extra - 32, &hi) < 0) {
            return MEMFMT_E_CORRUPT;
        }
    }
    *v = 1ull << extra | hi << 32 | lo;
    return 0;
}

#endif
