// SPDX-License-Identifier: MIT
/* analyzer/protobuf.c against byte sequences worked out by hand from the
 * wire format's rules (protobuf.dev, "Encoding"): varints of 7-bit groups,
 * least significant first, the high bit meaning "more"; a key is
 * (field << 3) | wire type; length-delimited fields are key, length,
 * bytes; a packed repeated field is one length-delimited field. */
#include <string.h>

#include "check.h"
#include "protobuf.h"

static int same(const struct pb_buf *b, const unsigned char *want, size_t n)
{
    return b->len == n && memcmp(b->data, want, n) == 0;
}

int main(void)
{
    struct pb_buf b = PB_BUF_INIT, m = PB_BUF_INIT;

    pb_uint(&b, 1, 150); /* the guide's own example: 08 96 01 */
    CHECK(same(&b, (const unsigned char *)"\x08\x96\x01", 3));
    pb_clear(&b);

    pb_uint(&b, 2, 0); /* zero is written when asked: 10 00 */
    pb_uint(&b, 3, 127); /* one byte: 18 7f */
    pb_uint(&b, 4, 128); /* two: 20 80 01 */
    CHECK(same(&b, (const unsigned char *)"\x10\x00\x18\x7f\x20\x80\x01", 7));
    pb_clear(&b);

    pb_uint(&b, 1, UINT64_MAX); /* ten bytes: nine ff and 01 */
    CHECK(same(&b, (const unsigned char *)"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11));
    CHECK_EQ(pb_varint_len(0), 1);
    CHECK_EQ(pb_varint_len(127), 1);
    CHECK_EQ(pb_varint_len(128), 2);
    CHECK_EQ(pb_varint_len(UINT64_MAX), 10);
    pb_clear(&b);

    pb_uint(&b, 16, 1); /* field 16: the key takes two bytes, 80 01 */
    CHECK(same(&b, (const unsigned char *)"\x80\x01\x01", 3));
    pb_clear(&b);

    pb_string(&b, 2, "testing"); /* 12 07 "testing" */
    CHECK(same(&b, (const unsigned char *)"\x12\x07testing", 9));
    pb_clear(&b);
    pb_string(&b, 6, ""); /* the empty string: 32 00 */
    CHECK(same(&b, (const unsigned char *)"\x32\x00", 2));
    pb_clear(&b);

    uint64_t v[] = {3, 270, 86942}; /* the guide's packed example: 22 06 03 8e 02 9e a7 05 */
    pb_packed(&b, 4, v, 3);
    CHECK(same(&b, (const unsigned char *)"\x22\x06\x03\x8e\x02\x9e\xa7\x05", 8));
    pb_clear(&b);
    pb_packed(&b, 4, v, 0); /* nothing for no values */
    CHECK_EQ(b.len, 0);

    pb_uint(&m, 1, 150); /* a nested message: 1a 03 08 96 01 */
    pb_message(&b, 3, &m);
    CHECK(same(&b, (const unsigned char *)"\x1a\x03\x08\x96\x01", 5));
    pb_clear(&b);

    /* A field longer than the buffer's first allocation grows it. */
    char big[1000];
    memset(big, 'x', sizeof big);
    pb_bytes(&b, 1, big, sizeof big);
    CHECK_EQ(b.len, 1 + 2 + sizeof big);
    CHECK(b.data[0] == 0x0a && b.data[1] == 0xe8 && b.data[2] == 0x07 && b.data[3] == 'x' && b.data[1002] == 'x');

    pb_release(&b);
    pb_release(&m);
    CHECK(b.data == NULL && b.len == 0);
    return check_summary("test_protobuf");
}
