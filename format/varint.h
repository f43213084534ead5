// SPDX-License-Identifier: MIT
/* LEB128 integer coding, shared by the file format (the .c files of format/), the pipe
 * protocol (memwire.h) and the recorder that writes it. Allocation-free and
 * async-signal-safe: it runs inside the target. */
#ifndef MEMFMT_VARINT_H
#define MEMFMT_VARINT_H

#include <stddef.h>
#include <stdint.h>

/* ---- varint.c: LEB128 unsigned integers ---- */

#define MEMFMT_VARINT_MAX 10

/** Write `v` as LEB128 at `p`; returns bytes written (1..10). Caller ensures
 * MEMFMT_VARINT_MAX bytes of room. Inline: it is on the recorder's hot path. */
static inline size_t memfmt_put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/** Read a LEB128 value from [*pp, end). Returns 0 and advances *pp, or
 * MEMFMT_E_TRUNCATED if the bytes end first, MEMFMT_E_CORRUPT if the value
 * is longer than 64 bits. */
int memfmt_get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out);

/** The same, inline for the decoders' hot loops: one-byte values at once,
 * longer ones without a bounds check per byte when a whole varint fits
 * before `end`; anything else (the buffer's last bytes, a 10-byte value,
 * corrupt input) through memfmt_get_varint(). */
static inline int memfmt_get_varint_fast(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    if (p < end && !(*p & 0x80)) {
        *out = *p;
        *pp = p + 1;
        return 0;
    }
    if (end - p >= MEMFMT_VARINT_MAX) {
        uint64_t r = 0;
        for (unsigned i = 0; i < MEMFMT_VARINT_MAX - 1; i++) {
            r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
            if (!(p[i] & 0x80)) {
                *out = r;
                *pp = p + i + 1;
                return 0;
            }
        }
    }
    return memfmt_get_varint(pp, end, out);
}

#endif
