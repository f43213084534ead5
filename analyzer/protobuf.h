// SPDX-License-Identifier: MIT
/* A minimal protocol buffers encoder: varints, 64-bit integers, booleans,
 * length-delimited bytes and nested messages, appended to a growing
 * buffer, as the wire format (protobuf.dev/programming-guides/encoding)
 * lays them out. Enough to write a profile.proto (pprof.h); it knows no
 * schema and never reads. Out of memory ends the tool (util.h's xmalloc). */
#ifndef PROTOBUF_H
#define PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

/*
 * How to use:
 *
 *     struct pb_buf msg = PB_BUF_INIT, out = PB_BUF_INIT;
 *     pb_uint(&msg, 1, 42);                  // field 1, varint 42
 *     pb_string(&msg, 2, "name");           // field 2, length-delimited
 *     pb_message(&out, 3, &msg);             // msg as field 3 of out
 *     pb_clear(&msg);                        // reuse msg for the next one
 *     ... out.data, out.len ...
 *     pb_release(&msg); pb_release(&out);
 *
 * Fields may be appended in any order and a repeated field in several
 * pieces: a decoder concatenates them (the wire format's rule), so a
 * large message can be written out piece by piece.
 */

struct pb_buf {
    uint8_t *data;
    size_t len, cap;
};
#define PB_BUF_INIT                                                                                                    \
    {                                                                                                                  \
        NULL, 0, 0                                                                                                     \
    }

/** Forget the contents, keep the memory. */
void pb_clear(struct pb_buf *b);
/** Release the memory; the buffer is empty afterwards. */
void pb_release(struct pb_buf *b);

/** Field `field` as a varint (wire type 0): uint64, int64 (a negative
 * value takes ten bytes, as the format says), bool. A zero value is
 * written too: omitting defaults is the caller's choice. */
void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v);
/** Field `field` as length-delimited bytes (wire type 2). */
void pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len);
/** pb_bytes() of a NUL-terminated string. */
void pb_string(struct pb_buf *b, uint32_t field, const char *s);
/** The contents of `msg` as a nested message, field `field` of `b`. */
void pb_message(struct pb_buf *b, uint32_t field, const struct pb_buf *msg);
/** A packed repeated varint field: `n` values in one length-delimited
 * field (nothing is written for n = 0). */
void pb_packed(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n);

/** Bytes a varint of `v` takes (1 to 10). */
size_t pb_varint_len(uint64_t v);

#endif
