// SPDX-License-Identifier: MIT
/*
 * Target program: a tiny arena allocator that reports its blocks through
 * include/memrec.h, without linking anything of memrec. Pool P1 takes its
 * memory from mmap (not counted); pool P2 from malloc, so its first block
 * has the very address of the malloc'ed chunk: blocks are known by (pool,
 * address). Single-threaded, no stdio, exit 0 with or without memrec.
 *
 * Steps (T = temporary), with the live requested bytes after each:
 *    1  chunk = malloc(100001)                     100001   P2's memory
 *    2  a1 = alloc_a(P1, 1001)                     101002
 *    3  a2 = alloc_a(P1, 1002)                     102004
 *    4  b1 = alloc_b(P2, 2001), at chunk's address 104005
 *    5  free a2 from P1                            103003   a2: not T
 *    6  a3 = alloc_a(P1, 1003), free it            103003   a3: T
 *    7  free a1 "from P2" (wrong pool), free an address of P1 never
 *       handed out: both ignored                   103003
 *    8  b2 = alloc_b(P2, 2002), b3 = alloc_b(P2, 2003)   107008  peak
 *    9  reset P2: frees b3 (T), b2, b1 (newest first)    101002
 *   10  a4 = alloc_a(P1, 1004)                     102006
 *   11  b4 = alloc_b(P2, 2004), at chunk's address 104010
 *   exit: chunk, a1, a4, b4 still live
 *
 * Expected: allocations 9 (1 malloc + 8 pool blocks), temporary 2, peak
 * 107008, leaked 104010 bytes in 4 blocks, allocated in total 112021.
 * alloc_a: 4 calls, 4010 bytes, 1 temporary, leaks 2005 (a1 + a4).
 * alloc_b: 4 calls, 8010 bytes, 1 temporary, leaks 2004 (b4).
 * At the peak: chunk 100001, alloc_a 1001, alloc_b 6006.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "memrec.h"

struct arena {
    char *start, *next, *end;
};

static void *arena_alloc(struct arena *a, size_t n)
{
    if ((size_t)(a->end - a->next) < n) {
        exit(2);
    }
    void *p = a->next;
    a->next += (n + 15) & ~(size_t)15;
    memrec_pool_alloc(a, p, n);
    return p;
}

/* An arena never reuses a block before its reset; the free is reported
 * so that memrec knows the block is no longer in use. */
static void arena_free(struct arena *a, void *p)
{
    memrec_pool_free(a, p);
}

/* Report before the memory can be handed out again. */
static void arena_reset(struct arena *a)
{
    memrec_pool_reset(a);
    a->next = a->start;
}

/* Two call sites, each its own function so their stacks differ (the
 * different asm texts keep the compiler from folding them into one). */
__attribute__((noinline)) static void *alloc_a(struct arena *a, size_t n)
{
    void *p = arena_alloc(a, n);
    __asm__ volatile("# site a" : : "r"(p) : "memory");
    return p;
}

__attribute__((noinline)) static void *alloc_b(struct arena *a, size_t n)
{
    void *p = arena_alloc(a, n);
    __asm__ volatile("# site b" : : "r"(p) : "memory");
    return p;
}

int main(void)
{
    static struct arena p1, p2;
    size_t p1_size = 1 << 20;
    char *m = mmap(NULL, p1_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        return 1;
    }
    p1 = (struct arena){m, m, m + p1_size};
    char *chunk = malloc(100001);
    if (!chunk) {
        return 1;
    }
    p2 = (struct arena){chunk, chunk, chunk + 100001};

    void *a1 = alloc_a(&p1, 1001);
    void *a2 = alloc_a(&p1, 1002);
    void *b1 = alloc_b(&p2, 2001);
    if (b1 != chunk) {
        return 3;
    }
    arena_free(&p1, a2);
    arena_free(&p1, alloc_a(&p1, 1003));
    arena_free(&p2, a1);
    arena_free(&p1, m + 65536);
    alloc_b(&p2, 2002);
    alloc_b(&p2, 2003);
    arena_reset(&p2);
    alloc_a(&p1, 1004);
    if (alloc_b(&p2, 2004) != chunk) {
        return 3;
    }
    return 0;
}
