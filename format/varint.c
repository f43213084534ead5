// SPDX-License-Identifier: MIT
/* LEB128 decoding shared by the file reader and memrec's wire decoder.
 * Never trusts its input: stops at the end of the buffer and at 64 bits. */
#include "memfmt.h"
#include "varint.h"

int memfmt_get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;
    unsigned shift = 0;
    for (;;) {
        if (p >= end) {
            return MEMFMT_E_TRUNCATED;
        }
        uint8_t b = *p++;
        if (shift == 63 && (b & 0x7e) != 0) {
            return MEMFMT_E_CORRUPT;
        }
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            break;
        }
        shift += 7;
        if (shift > 63) {
            return MEMFMT_E_CORRUPT;
        }
    }
    *pp = p;
    *out = v;
    return 0;
}
