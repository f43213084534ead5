// SPDX-License-Identifier: MIT
/* Unit tests of the time column's codings (format/timecode.c): times come
 * back exactly through the Huffman code for every shape of distribution
 * (one value, every symbol, skews deep enough to need the length limit,
 * the largest values), the writer picks the smaller coding, and the
 * reader refuses impossible codes and damaged streams without reading
 * outside the column. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "memfmt.h"
#include "timecode.h"
#include "varint.h"

#define MAXN 70000

static uint8_t varints[MAXN * MEMFMT_VARINT_MAX];
static uint8_t column[1 + MAXN * MEMFMT_VARINT_MAX];
static uint16_t table[1 << TIMECODE_MAX_BITS];

static size_t put_all(const uint64_t *v, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        len += memfmt_put_varint(varints + len, v[i]);
    }
    return len;
}

/* Decode the Huffman column [col, col + len) (after its coding byte):
 * 0 with exactly n values equal to v, or the first error. */
static int read_back(const uint8_t *col, size_t len, const uint64_t *v, size_t n)
{
    struct timecode_reader r;
    int rc = timecode_open(&r, col, col + len, table);
    if (rc < 0) {
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t x;
        if ((rc = timecode_get(&r, &x)) < 0) {
            return rc;
        }
        if (x != v[i]) {
            return -100;
        }
    }
    return timecode_done(&r) ? 0 : -101;
}

/* Write v[0..n) and read it back; returns the coding used, or -1. */
static int roundtrip(const uint64_t *v, size_t n, size_t *out_len)
{
    size_t len = put_all(v, n);
    size_t w = timecode_write(column, varints, len);
    *out_len = w;
    if (w > 1 + len) {
        return -1;
    }
    if (column[0] == TIMECODE_VARINTS) {
        return w == 1 + len && memcmp(column + 1, varints, len) == 0 ? TIMECODE_VARINTS : -1;
    }
    if (column[0] != TIMECODE_HUFFMAN) {
        return -1;
    }
    return read_back(column + 1, w - 1, v, n) == 0 ? TIMECODE_HUFFMAN : -1;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint64_t vals[MAXN];

static void test_shapes(void)
{
    size_t len;
    /* A skewed block like a real one: 66% one value, then a tail. */
    for (size_t i = 0; i < 10000; i++) {
        uint64_t r = next_rand() % 100;
        vals[i] = r < 66 ? 10 : r < 78 ? 20 : r < 87 ? 0 : r < 97 ? 30 + r : 1000 + next_rand() % 100000;
    }
    CHECK_EQ(roundtrip(vals, 10000, &len), TIMECODE_HUFFMAN);
    CHECK(len < 10000 / 2); /* about 2 bits a value against a byte */

    /* One value only: a one-bit code. */
    for (size_t i = 0; i < 5000; i++) {
        vals[i] = 10;
    }
    CHECK_EQ(roundtrip(vals, 5000, &len), TIMECODE_HUFFMAN);
    CHECK(len < 5000 / 7);

    /* Every symbol, direct and by bit length, the largest values too. */
    size_t n = 0;
    for (uint64_t v = 0; v < 128; v++) {
        vals[n++] = v;
    }
    for (unsigned b = 8; b <= 64; b++) {
        vals[n++] = 1ull << (b - 1);
        vals[n++] = b == 64 ? UINT64_MAX : (1ull << b) - 1;
        vals[n++] = (1ull << (b - 1)) | (next_rand() & ((1ull << (b - 1)) - 1));
    }
    for (size_t i = 0; i < 20000; i++) {
        vals[n + i] = vals[next_rand() % n];
    }
    n += 20000;
    int coding = roundtrip(vals, n, &len);
    CHECK(coding == TIMECODE_HUFFMAN || coding == TIMECODE_VARINTS);

    /* Frequencies like Fibonacci's: Huffman's tree is as deep as there
     * are symbols, so the 12-bit limit must cut it. */
    n = 0;
    uint64_t a = 1, b = 1;
    for (unsigned s = 0; s < 22 && n < MAXN; s++) {
        for (uint64_t k = 0; k < a && n < MAXN; k++) {
            vals[n++] = s;
        }
        uint64_t c = a + b;
        a = b;
        b = c;
    }
    for (size_t i = 0; i < n; i++) { /* shuffled */
        size_t j = next_rand() % n;
        uint64_t t = vals[i];
        vals[i] = vals[j];
        vals[j] = t;
    }
    CHECK_EQ(roundtrip(vals, n, &len), TIMECODE_HUFFMAN);

    /* Few values: the table would cost more than it saves. */
    uint64_t few[3] = {10, 20, 10};
    CHECK_EQ(roundtrip(few, 3, &len), TIMECODE_VARINTS);
    CHECK_EQ(len, 4);
    /* No values at all. */
    CHECK_EQ(roundtrip(few, 0, &len), TIMECODE_VARINTS);
    CHECK_EQ(len, 1);

    /* Random blocks of random widths. */
    for (int round = 0; round < 200; round++) {
        size_t m = 1 + next_rand() % 3000;
        unsigned width = 1 + (unsigned)(next_rand() % 64);
        for (size_t i = 0; i < m; i++) {
            uint64_t x = next_rand();
            vals[i] = width == 64 ? x : x & ((1ull << width) - 1);
        }
        CHECK(roundtrip(vals, m, &len) >= 0);
    }
}

/* A valid Huffman column of the skewed block, in column[]; returns its
 * length after the coding byte. */
static size_t valid_column(size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = next_rand() % 10;
        vals[i] = r < 7 ? 10 : r < 9 ? 20 : 300 + r;
    }
    size_t w = timecode_write(column, varints, put_all(vals, n));
    CHECK_EQ(column[0], TIMECODE_HUFFMAN);
    return w - 1;
}

static void test_damage(void)
{
    size_t len = valid_column(4000);
    uint8_t *col = column + 1;
    CHECK_EQ(read_back(col, len, vals, 4000), 0);

    /* Cut short: a value cannot be read, or the count is beyond the bits. */
    for (size_t cut = 0; cut < len; cut += 1 + cut / 4) {
        CHECK(read_back(col, cut, vals, 4000) < 0);
    }
    /* A byte more at the end is not padding. */
    col[len] = 0;
    CHECK(read_back(col, len + 1, vals, 4000) == -101);

    /* The count says more values than the block holds. */
    uint8_t buf[64];
    memcpy(buf, col, sizeof buf);
    struct timecode_reader r;
    /* count 0, nsym 0, nsym over 185, a length of 13, an over-full code */
    uint8_t zero_count[] = {0, 1, 1, 0xff};
    CHECK(timecode_open(&r, zero_count, zero_count + sizeof zero_count, table) == MEMFMT_E_CORRUPT);
    uint8_t zero_nsym[] = {1, 0, 0xff};
    CHECK(timecode_open(&r, zero_nsym, zero_nsym + sizeof zero_nsym, table) == MEMFMT_E_CORRUPT);
    uint8_t big_nsym[] = {1, 186, 0x11};
    CHECK(timecode_open(&r, big_nsym, big_nsym + sizeof big_nsym, table) == MEMFMT_E_CORRUPT);
    uint8_t long_code[] = {1, 2, 0xd1, 0xff};
    CHECK(timecode_open(&r, long_code, long_code + sizeof long_code, table) == MEMFMT_E_CORRUPT);
    uint8_t overfull[] = {1, 3, 0x11, 0x01, 0xff}; /* three codes of 1 bit */
    CHECK(timecode_open(&r, overfull, overfull + sizeof overfull, table) == MEMFMT_E_CORRUPT);
    uint8_t no_codes[] = {1, 2, 0x00, 0xff};
    CHECK(timecode_open(&r, no_codes, no_codes + sizeof no_codes, table) == MEMFMT_E_CORRUPT);
    uint8_t too_many[] = {0x80, 0x01, 1, 0x01, 0xff}; /* 128 values in 8 bits */
    CHECK(timecode_open(&r, too_many, too_many + sizeof too_many, table) == MEMFMT_E_CORRUPT);
    /* One symbol of one bit: code 0; a 1 bit is no code. */
    uint8_t one[] = {2, 1, 0x01, 0x02};
    uint64_t x;
    CHECK(timecode_open(&r, one, one + sizeof one, table) == 0);
    CHECK(timecode_get(&r, &x) == 0 && x == 0);
    CHECK(timecode_get(&r, &x) == MEMFMT_E_CORRUPT);
    /* Reading past the count. */
    uint8_t two[] = {1, 1, 0x01, 0x00};
    CHECK(timecode_open(&r, two, two + sizeof two, table) == 0);
    CHECK(timecode_get(&r, &x) == 0 && timecode_done(&r));
    CHECK(timecode_get(&r, &x) == MEMFMT_E_CORRUPT);
    /* Padding that is not zero. */
    uint8_t pad[] = {1, 1, 0x01, 0x80};
    CHECK(timecode_open(&r, pad, pad + sizeof pad, table) == 0);
    CHECK(timecode_get(&r, &x) == 0 && !timecode_done(&r));

    /* Any damage: never a crash or a read outside the column (ASan
     * says so), at most `count` values, and only the untouched column
     * reads back whole. */
    for (int round = 0; round < 3000; round++) {
        len = valid_column(300);
        size_t at = next_rand() % len;
        uint8_t was = col[at];
        col[at] ^= (uint8_t)(1 + next_rand() % 255);
        uint8_t *copy = malloc(len); /* exactly the column: ASan sees any overrun */
        memcpy(copy, col, len);
        if (timecode_open(&r, copy, copy + len, table) == 0) {
            size_t got = 0;
            while (timecode_get(&r, &x) == 0) {
                got++;
            }
            CHECK(got <= (uint64_t)len * 8);
        }
        free(copy);
        col[at] = was;
    }
}

int main(void)
{
    test_shapes();
    test_damage();
    return check_summary("test_timecode");
}
