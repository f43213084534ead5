// SPDX-License-Identifier: MIT
/* The time column's two codings (timecode.h; layout in docs/format.md).
 *
 * Huffman-coded column, after its coding byte:
 *   count   varint: the number of times
 *   nsym    byte: symbols 0 .. nsym - 1 have a code length below (1..185)
 *   lengths (nsym + 1) / 2 bytes: two 4-bit lengths a byte, the lower
 *           nibble first; 0 = no code, else 1..12
 *   bits    the times' codes, then each large time's extra bits, packed
 *           from the lowest bit of each byte up; zero bits pad the last
 *           byte
 * The code is canonical: codes of one length are consecutive in symbol
 * order, shorter codes first, so the lengths are all a reader needs. Codes
 * are written with their first bit lowest, so that the reader finds the
 * next symbol by looking up the next 12 bits in a table. */
#include <string.h>

#include "memfmt.h"
#include "timecode.h"
#include "varint.h"

#define TABLE_SIZE (1u << TIMECODE_MAX_BITS)

static unsigned symbol_of(uint64_t v)
{
    if (v < TIMECODE_DIRECT) {
        return (unsigned)v;
    }
    unsigned b = 64 - (unsigned)__builtin_clzll(v); /* 8..64 */
    return TIMECODE_DIRECT - 8 + b;
}

/* ---- the code ---- */

/* Code lengths for the symbols of `freq` (len[s] = 0 where freq[s] is 0),
 * none longer than TIMECODE_MAX_BITS: Huffman's, then, where a length is
 * over the limit, cut to it and the least frequent of the longest codes
 * under it made one bit longer until the code fits (Kraft's sum back to at
 * most 1). Symbols are few (185 at most), so the simple ways do. */
static void code_lengths(const uint64_t freq[TIMECODE_NSYM], uint8_t len[TIMECODE_NSYM])
{
    unsigned sym[TIMECODE_NSYM];
    uint64_t w[2 * TIMECODE_NSYM];
    int parent[2 * TIMECODE_NSYM];
    unsigned depth[2 * TIMECODE_NSYM];
    unsigned m = 0;
    memset(len, 0, TIMECODE_NSYM);
    /* The used symbols, by increasing frequency (insertion sort, stable). */
    for (unsigned s = 0; s < TIMECODE_NSYM; s++) {
        if (!freq[s]) {
            continue;
        }
        unsigned i = m++;
        while (i > 0 && freq[sym[i - 1]] > freq[s]) {
            sym[i] = sym[i - 1];
            i--;
        }
        sym[i] = s;
    }
    if (m == 0) {
        return;
    }
    if (m == 1) {
        len[sym[0]] = 1;
        return;
    }
    for (unsigned i = 0; i < m; i++) {
        w[i] = freq[sym[i]];
    }
    /* Two queues: the leaves by weight, and the merged nodes, which are
     * made in order of weight; each step joins the two lightest. */
    unsigned leaf = 0, node = m, next = m;
    while (next < 2 * m - 1) {
        unsigned pick[2];
        for (int k = 0; k < 2; k++) {
            if (leaf < m && (node >= next || w[leaf] <= w[node])) {
                pick[k] = leaf++;
            } else {
                pick[k] = node++;
            }
        }
        w[next] = w[pick[0]] + w[pick[1]];
        parent[pick[0]] = parent[pick[1]] = (int)next;
        next++;
    }
    depth[2 * m - 2] = 0;
    for (int i = (int)(2 * m) - 3; i >= 0; i--) {
        depth[i] = depth[parent[i]] + 1;
    }
    /* Cut to the limit, then lengthen until Kraft's sum (in units of
     * 2^-MAX_BITS) is at most 1 again. */
    uint64_t kraft = 0;
    for (unsigned i = 0; i < m; i++) {
        if (depth[i] > TIMECODE_MAX_BITS) {
            depth[i] = TIMECODE_MAX_BITS;
        }
        kraft += 1u << (TIMECODE_MAX_BITS - depth[i]);
    }
    while (kraft > TABLE_SIZE) {
        unsigned best = m;
        for (unsigned i = 0; i < m; i++) {
            if (depth[i] < TIMECODE_MAX_BITS && (best == m || depth[i] > depth[best])) {
                best = i;
            }
        }
        kraft -= 1u << (TIMECODE_MAX_BITS - depth[best] - 1);
        depth[best]++;
    }
    for (unsigned i = 0; i < m; i++) {
        len[sym[i]] = (uint8_t)depth[i];
    }
}

static uint32_t reverse_bits(uint32_t code, unsigned n)
{
    uint32_t r = 0;
    for (unsigned i = 0; i < n; i++) {
        r = r << 1 | (code >> i & 1);
    }
    return r;
}

/* Canonical codes from the lengths, each reversed to be written lowest bit
 * first. Lengths must satisfy Kraft's inequality. */
static void canonical_codes(const uint8_t len[TIMECODE_NSYM], unsigned nsym, uint32_t code[TIMECODE_NSYM])
{
    unsigned count[TIMECODE_MAX_BITS + 1] = {0};
    uint32_t next[TIMECODE_MAX_BITS + 1];
    for (unsigned s = 0; s < nsym; s++) {
        count[len[s]]++;
    }
    count[0] = 0;
    uint32_t c = 0;
    for (unsigned l = 1; l <= TIMECODE_MAX_BITS; l++) {
        c = (c + count[l - 1]) << 1;
        next[l] = c;
    }
    for (unsigned s = 0; s < nsym; s++) {
        if (len[s]) {
            code[s] = reverse_bits(next[len[s]]++, len[s]);
        }
    }
}

/* ---- writing ---- */

/* The varint at p (well formed: the encoder wrote it) in *x; returns
 * where the next one starts. One-byte values, nearly all of them, inline;
 * the fallback works on copies, so that p and x stay in registers. */
static inline const uint8_t *next_time(const uint8_t *p, const uint8_t *end, uint64_t *x)
{
    if (*p < 0x80) {
        *x = *p;
        return p + 1;
    }
    const uint8_t *q = p;
    uint64_t y = 0;
    if (memfmt_get_varint(&q, end, &y) < 0) {
        return end;
    }
    *x = y;
    return q;
}

struct bitwriter {
    uint8_t *o;
    uint64_t acc;
    unsigned n;
};

/* Append the `k` bits of `code` (k <= 32; it has no bits above them).
 * Fewer than 32 bits wait in the accumulator between calls; whole 32-bit
 * words go out at once. */
static inline void put_code(struct bitwriter *bw, uint32_t code, unsigned k)
{
    bw->acc |= (uint64_t)code << bw->n;
    bw->n += k;
    if (bw->n >= 32) {
        uint8_t w[4] = {(uint8_t)bw->acc, (uint8_t)(bw->acc >> 8), (uint8_t)(bw->acc >> 16), (uint8_t)(bw->acc >> 24)};
        memcpy(bw->o, w, 4);
        bw->o += 4;
        bw->acc >>= 32;
        bw->n -= 32;
    }
}

/* Append the low `k` bits of `v` (k <= 32). */
static inline void put_bits(struct bitwriter *bw, uint64_t v, unsigned k)
{
    put_code(bw, (uint32_t)(v & ((1ull << k) - 1)), k);
}

size_t timecode_write(uint8_t *out, const uint8_t *v, size_t len)
{
    const uint8_t *end = v + len;
    /* Four histograms, one value in four each: runs of one time (the
     * common case) would otherwise wait on the count they just stored.
     * A block holds fewer than 2^16 times. */
    uint32_t part[4][TIMECODE_NSYM];
    memset(part, 0, sizeof part);
    uint64_t count = 0, x = 0;
    const uint8_t *p = v;
    while (p < end) {
        /* Nearly every time is a one-byte varint, its own symbol: four
         * at once when the next four are. */
        if (end - p >= 4 && !((p[0] | p[1] | p[2] | p[3]) & 0x80)) {
            part[0][p[0]]++;
            part[1][p[1]]++;
            part[2][p[2]]++;
            part[3][p[3]]++;
            p += 4;
            count += 4;
            continue;
        }
        p = next_time(p, end, &x);
        part[count & 3][symbol_of(x)]++;
        count++;
    }
    uint64_t freq[TIMECODE_NSYM];
    for (unsigned s = 0; s < TIMECODE_NSYM; s++) {
        freq[s] = (uint64_t)part[0][s] + part[1][s] + part[2][s] + part[3][s];
    }
    uint8_t lens[TIMECODE_NSYM];
    code_lengths(freq, lens);
    unsigned nsym = TIMECODE_NSYM;
    while (nsym > 0 && !lens[nsym - 1]) {
        nsym--;
    }
    uint64_t bits = 0;
    for (unsigned s = 0; s < nsym; s++) {
        bits += freq[s] * (lens[s] + timecode_extra_bits(s));
    }
    uint8_t tmp[MEMFMT_VARINT_MAX];
    uint64_t coded = 1 + memfmt_put_varint(tmp, count) + 1 + (nsym + 1) / 2 + (bits + 7) / 8;
    if (count == 0 || coded >= 1 + (uint64_t)len) {
        out[0] = TIMECODE_VARINTS;
        memcpy(out + 1, v, len);
        return 1 + len;
    }
    uint8_t *o = out;
    *o++ = TIMECODE_HUFFMAN;
    o += memfmt_put_varint(o, count);
    *o++ = (uint8_t)nsym;
    for (unsigned s = 0; s < nsym; s += 2) {
        *o++ = (uint8_t)(lens[s] | (s + 1 < nsym ? lens[s + 1] : 0) << 4);
    }
    uint32_t code[TIMECODE_NSYM];
    canonical_codes(lens, nsym, code);
    /* The one-byte times' codes and lengths, a word each. */
    uint32_t direct[TIMECODE_DIRECT];
    for (unsigned s = 0; s < TIMECODE_DIRECT; s++) {
        direct[s] = s < nsym && lens[s] ? code[s] | (uint32_t)lens[s] << 24 : 0;
    }
    struct bitwriter bw = {o, 0, 0};
    for (p = v; p < end;) {
        if (*p < 0x80) {
            uint32_t e = direct[*p++];
            put_code(&bw, e & 0xffffff, e >> 24);
            continue;
        }
        p = next_time(p, end, &x);
        unsigned s = symbol_of(x), extra = timecode_extra_bits(s);
        put_code(&bw, code[s], lens[s]);
        if (extra > 32) {
            put_bits(&bw, x, 32);
            put_bits(&bw, x >> 32, extra - 32);
        } else if (extra) {
            put_bits(&bw, x, extra);
        }
    }
    for (; bw.n > 0; bw.n = bw.n > 8 ? bw.n - 8 : 0) {
        *bw.o++ = (uint8_t)bw.acc;
        bw.acc >>= 8;
    }
    return (size_t)(bw.o - out);
}

/* ---- reading ---- */

int timecode_open(struct timecode_reader *r, const uint8_t *p, const uint8_t *end, uint16_t *table)
{
    uint64_t count;
    if (memfmt_get_varint(&p, end, &count) < 0 || count == 0 || p >= end) {
        return MEMFMT_E_CORRUPT;
    }
    unsigned nsym = *p++;
    if (nsym == 0 || nsym > TIMECODE_NSYM || (size_t)(end - p) < (nsym + 1) / 2) {
        return MEMFMT_E_CORRUPT;
    }
    uint8_t lens[TIMECODE_NSYM];
    uint64_t kraft = 0;
    for (unsigned s = 0; s < nsym; s++) {
        lens[s] = s & 1 ? p[s / 2] >> 4 : p[s / 2] & 15;
        if (lens[s] > TIMECODE_MAX_BITS) {
            return MEMFMT_E_CORRUPT;
        }
        kraft += lens[s] ? 1u << (TIMECODE_MAX_BITS - lens[s]) : 0;
    }
    p += (nsym + 1) / 2;
    /* Over-full is no prefix code; empty decodes nothing. Every time takes
     * at least one bit, so a count beyond the bits is a lie. */
    if (kraft == 0 || kraft > TABLE_SIZE || count > (uint64_t)(end - p) * 8) {
        return MEMFMT_E_CORRUPT;
    }
    uint32_t code[TIMECODE_NSYM];
    canonical_codes(lens, nsym, code);
    memset(table, 0, TABLE_SIZE * sizeof *table);
    for (unsigned s = 0; s < nsym; s++) {
        if (lens[s]) {
            for (uint32_t k = code[s]; k < TABLE_SIZE; k += 1u << lens[s]) {
                table[k] = (uint16_t)(s | (unsigned)lens[s] << 8);
            }
        }
    }
    *r = (struct timecode_reader){p, end, 0, 0, count, table};
    return 0;
}

int timecode_done(const struct timecode_reader *r)
{
    return r->left == 0 && r->p == r->end && r->nbits < 8 && r->bits == 0;
}
