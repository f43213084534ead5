// SPDX-License-Identifier: MIT
/* The reachability classifier (recorder/merge/reachgraph.c) on a fake
 * memory whose every word is known: start and interior pointers from
 * roots, chains, unreachable groups and cycles, a group whose head is
 * pointed to later, blocks inside a root range, an unreadable block, a
 * deadline passed. */
#include "reachgraph.h"

#include <string.h>

#include "check.h"

#define BASE 0x100000ull
#define WORDS 4096

static uint64_t mem[WORDS]; /* the fake program: address BASE + 8 i is mem[i] */
static uint64_t bad_from = UINT64_MAX, bad_to = UINT64_MAX; /* unreadable */

/* process_vm_readv's contract: stop at the first byte that cannot be read. */
static ssize_t fake_readv(void *ctx, const struct iovec *local, const struct iovec *remote, unsigned long n)
{
    (void)ctx;
    ssize_t got = 0;
    for (unsigned long i = 0; i < n; i++) {
        uint64_t a = (uint64_t)(uintptr_t)remote[i].iov_base;
        for (size_t k = 0; k < remote[i].iov_len; k++) {
            uint64_t b = a + k;
            if (b < BASE || b >= BASE + sizeof mem || (b >= bad_from && b < bad_to)) {
                return got ? got : -1;
            }
            ((uint8_t *)local[i].iov_base)[k] = ((uint8_t *)mem)[b - BASE];
            got++;
        }
    }
    return got;
}

static uint64_t addr(int word)
{
    return BASE + 8ull * (uint64_t)word;
}

static void put(int word, uint64_t v)
{
    mem[word] = v;
}

int main(void)
{
    /* Blocks of 32 bytes (4 words) at words 100, 200, ... (index i at word 100 (i + 1)). */
    enum { A, B, C, D, E, F, G, H, I, J, K, L, M, NB };
    struct reach_block b[NB];
    for (int i = 0; i < NB; i++) {
        b[i] = (struct reach_block){addr(100 * (i + 1)), 32, (uint32_t)i + 1, 0, 0};
    }
#define AT(x) (100 * ((x) + 1))
    /* Roots: words 10..19 (a module's data) and 3000..3099 (anonymous
     * memory that holds block J: its words are no roots). */
    put(10, b[A].addr); /* root -> A */
    put(AT(A) + 1, b[B].addr); /* A -> B */
    put(11, b[C].addr + 8); /* root -> inside C */
    put(AT(C), b[D].addr); /* C -> D: possibly, through C */
    put(AT(E), b[F].addr); /* E -> F -> G -> E: a cycle nothing points into */
    put(AT(F) + 3, b[G].addr + 31);
    put(AT(G), b[E].addr);
    put(AT(I), b[H].addr); /* I -> H, H below I */
    put(AT(L), b[M].addr); /* L unreadable: what it holds does not count */
    put(12, b[L].addr + 4096); /* past every block: no pointer */
    put(13, 12345); /* an integer */
    /* J inside a root range, holding a pointer to K. */
    struct reach_block jb = {addr(3050), 16, 99, 0, 0};
    put(3050, b[K].addr);
    struct reach_block all[NB + 1];
    memcpy(all, b, sizeof b);
    /* Sorted by address: J's block goes last. */
    all[NB] = jb;
    struct reach_range roots[] = {
        {addr(10), addr(20), 0},
        {addr(3000), addr(3100), REACH_RANGE_SKIP_BLOCKS},
    };
    uint64_t regs[] = {0, b[H].addr + 64}; /* past H's end: nothing */
    bad_from = b[L].addr;
    bad_to = b[L].addr + 32;
    struct reach_reader rd = {fake_readv, NULL};
    struct reach_stats st;
    int rc = reach_classify(all, NB + 1, roots, 2, regs, 2, &rd, 0, 0, &st);
    CHECK_EQ(rc, 0);
    CHECK_EQ(all[A].cls, REACH_REACHABLE);
    CHECK_EQ(all[B].cls, REACH_REACHABLE);
    CHECK_EQ(all[C].cls, REACH_POSSIBLE);
    CHECK_EQ(all[D].cls, REACH_POSSIBLE);
    CHECK_EQ(all[E].cls, REACH_DIRECT);
    CHECK_EQ(all[F].cls, REACH_INDIRECT);
    CHECK_EQ(all[G].cls, REACH_INDIRECT);
    CHECK_EQ(all[H].cls, REACH_INDIRECT); /* its group's head was pointed to from I's */
    CHECK_EQ(all[I].cls, REACH_DIRECT);
    CHECK_EQ(all[J - J + NB].cls, REACH_DIRECT); /* jb: inside a root range, but no root */
    CHECK_EQ(all[K].cls, REACH_INDIRECT); /* pointed to from jb only */
    CHECK_EQ(all[L].cls, REACH_DIRECT);
    CHECK_EQ(all[M].cls, REACH_DIRECT); /* L's pointer could not be read */
    CHECK_EQ(all[J].cls, REACH_DIRECT);
    CHECK_EQ(st.unreadable_bytes, 32);
    CHECK_EQ(st.root_bytes, 10 * 8 + (100 * 8 - 16) + 2 * 8);

    /* Read ahead (runs of nearby blocks in a few reads): the same classes;
     * L's run cannot be read whole, so its blocks are read one by one. */
    uint8_t first_cls[NB + 1];
    for (int i = 0; i <= NB; i++) {
        first_cls[i] = all[i].cls;
    }
    struct reach_stats st2;
    CHECK_EQ(reach_classify(all, NB + 1, roots, 2, regs, 2, &rd, 0, 1 << 20, &st2), 0);
    for (int i = 0; i <= NB; i++) {
        CHECK_EQ(all[i].cls, first_cls[i]);
    }
    CHECK_EQ(st2.unreadable_bytes, 32);
    CHECK_EQ(st2.block_bytes, st.block_bytes);

    /* A deadline already passed: given up, no class holds. */
    rc = reach_classify(all, NB + 1, roots, 2, regs, 2, &rd, 1, 0, &st);
    CHECK_EQ(rc, REACH_E_TIME);
    /* No blocks: nothing to do. */
    CHECK_EQ(reach_classify(all, 0, roots, 2, regs, 2, &rd, 0, 0, &st), 0);
    return check_summary("test_reachgraph");
}
