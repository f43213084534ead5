// SPDX-License-Identifier: MIT
/* The set of directly mapped ranges (recorder/merge/mapranges.c): partial,
 * spanning and unknown munmaps, holes, replacement by MAP_FIXED, owners. */
#include "mapranges.h"

#include "check.h"

#define KiB 1024ull

struct taken {
    uint32_t trace[8];
    uint64_t bytes[8];
    int n;
};

static void note(void *ctx, uint32_t trace, uint64_t bytes)
{
    struct taken *t = ctx;
    if (t->n < 8) {
        t->trace[t->n] = trace;
        t->bytes[t->n] = bytes;
    }
    t->n++;
}

static void test_unmap_parts(void)
{
    struct mapranges m = {0};
    mapranges_add(&m, 0x10000, 64 * KiB, 1); /* [0x10000, 0x20000) */
    mapranges_add(&m, 0x40000, 64 * KiB, 2); /* [0x40000, 0x50000) */
    mapranges_add(&m, 0x30000, 16 * KiB, 3); /* between them, kept sorted */
    CHECK_EQ(m.n, 3);
    CHECK_EQ(m.v[1].trace, 3);
    CHECK_EQ(mapranges_bytes(&m), 144 * KiB);

    /* Nothing recorded there: nothing removed, nothing reported. */
    struct taken t = {{0}, {0}, 0};
    CHECK_EQ(mapranges_remove(&m, 0x60000, 4 * KiB, note, &t), 0);
    CHECK_EQ(t.n, 0);

    /* A hole in the middle splits the range in two. */
    CHECK_EQ(mapranges_remove(&m, 0x14000, 8 * KiB, note, &t), 8 * KiB);
    CHECK_EQ(t.n, 1);
    CHECK_EQ(t.trace[0], 1);
    CHECK_EQ(m.n, 4);
    CHECK_EQ(m.v[0].end, 0x14000);
    CHECK_EQ(m.v[1].start, 0x16000);
    CHECK_EQ(m.v[1].end, 0x20000);
    CHECK_EQ(m.v[1].trace, 1);

    /* One call across the tail of one range, a whole range, unknown gaps
     * and the head of another: each piece goes back to its owner. */
    t.n = 0;
    CHECK_EQ(mapranges_remove(&m, 0x1c000, 0x28000, note, &t), 16 * KiB + 16 * KiB + 16 * KiB);
    CHECK_EQ(t.n, 3);
    CHECK(t.trace[0] == 1 && t.bytes[0] == 16 * KiB);
    CHECK(t.trace[1] == 3 && t.bytes[1] == 16 * KiB);
    CHECK(t.trace[2] == 2 && t.bytes[2] == 16 * KiB);
    CHECK_EQ(m.n, 3);
    CHECK_EQ(m.v[2].start, 0x44000);
    CHECK_EQ(mapranges_bytes(&m), 16 * KiB + 24 * KiB + 48 * KiB);

    /* Owners, for mremap. */
    CHECK_EQ(mapranges_owner(&m, 0x44000, 4 * KiB), 2);
    CHECK_EQ(mapranges_owner(&m, 0x43000, 8 * KiB), 2);
    CHECK_EQ(mapranges_owner(&m, 0x42000, 4 * KiB), 0);
    CHECK_EQ(mapranges_owner(&m, 0x17000, 1), 1);

    /* Adding over recorded bytes replaces them (MAP_FIXED). */
    mapranges_add(&m, 0x10000, 0x3c000, 9);
    CHECK_EQ(m.n, 2);
    CHECK_EQ(m.v[0].trace, 9);
    CHECK_EQ(m.v[1].start, 0x4c000);
    CHECK_EQ(m.v[1].trace, 2);
    CHECK_EQ(mapranges_bytes(&m), 0x3c000 + 16 * KiB);

    /* Removing everything, with an end past the top of the address space. */
    CHECK_EQ(mapranges_remove(&m, 0, UINT64_MAX, NULL, NULL), 0x3c000 + 16 * KiB);
    CHECK_EQ(m.n, 0);
    mapranges_add(&m, 0x1000, 0, 5); /* empty: nothing */
    CHECK_EQ(m.n, 0);
    mapranges_release(&m);
    CHECK(m.v == NULL && m.cap == 0);
}

int main(void)
{
    test_unmap_parts();
    return check_summary("test_mapranges");
}
