// SPDX-License-Identifier: MIT
/* Protocol buffers wire encoding (protobuf.h). */
#include "protobuf.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

static void reserve(struct pb_buf *b, size_t more)
{
    if (b->cap - b->len >= more) {
        return;
    }
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < more) {
        cap *= 2;
    }
    b->data = xrealloc(b->data, cap);
    b->cap = cap;
}

static void put_varint(struct pb_buf *b, uint64_t v)
{
    reserve(b, 10);
    while (v >= 0x80) {
        b->data[b->len++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b->data[b->len++] = (uint8_t)v;
}

static void put_key(struct pb_buf *b, uint32_t field, unsigned wire)
{
    put_varint(b, ((uint64_t)field << 3) | wire);
}

size_t pb_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

void pb_clear(struct pb_buf *b)
{
    b->len = 0;
}

void pb_release(struct pb_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v)
{
    put_key(b, field, WIRE_VARINT);
    put_varint(b, v);
}

void pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len)
{
    put_key(b, field, WIRE_LEN);
    put_varint(b, len);
    reserve(b, len);
    if (len) {
        memcpy(b->data + b->len, data, len);
    }
    b->len += len;
}

void pb_string(struct pb_buf *b, uint32_t field, const char *s)
{
    pb_bytes(b, field, s, strlen(s));
}

void pb_message(struct pb_buf *b, uint32_t field, const struct pb_buf *msg)
{
    pb_bytes(b, field, msg->data, msg->len);
}

void pb_packed(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n)
{
    if (n == 0) {
        return;
    }
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        len += pb_varint_len(v[i]);
    }
    put_key(b, field, WIRE_LEN);
    put_varint(b, len);
    for (size_t i = 0; i < n; i++) {
        put_varint(b, v[i]);
    }
}
