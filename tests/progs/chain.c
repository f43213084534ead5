// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
/*
 * Target program: malloc/calloc/realloc/reallocarray chains with figures
 * known by construction. Single-threaded, no stdio, exit 0 (1 only if a
 * call does not behave as glibc documents it).
 *
 * Steps, with the live requested bytes after each:
 *    1  malloc(10011), free            0       temporary
 *    2  malloc(10012), free            0       temporary
 *    3  calloc(10, 1001) = 10010, free 0       temporary
 *    4  p = malloc(10001)              10001
 *    5  p = realloc(p, 20001)          20001   frees the 10001 block: temporary
 *    6  p = realloc(p, 30001)          30001   frees the 20001 block: temporary
 *    7  q = realloc(NULL, 40001)       70002   an allocation like malloc
 *    8  a = reallocarray(NULL, 6, 10001) = 60006      130008
 *    9  c = calloc(5, 10001) = 50005   180013
 *   10  a = reallocarray(a, 8, 10001) = 80008  200015  peak; 60006 not temporary
 *   11  malloc(SIZE_MAX / 2) fails     200015  NULL: not an allocation
 *   12  free(c)                        150010
 *   13  realloc(q, 0)                  110009  frees q, returns NULL: no allocation
 *   14  free(a)                        30001
 *   15  free(p)                        0
 *   16  malloc(70001), never freed     70001   the leak
 *
 * Expected (memrec definitions): allocations 11, temporary 5, peak 200015,
 * leaked 70001 bytes in 1 block, allocated in total 390057 bytes.
 * A realloc that moves or resizes a block is one allocation event that also
 * frees the old block, so a block reallocated by the very next event is a
 * temporary (steps 5 and 6). See EXPECTED.md for what heaptrack reports.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>

/* GCC deletes a malloc/free pair whose memory is never used; an empty asm
 * that claims to read the pointer and all memory keeps every call real. */
static inline void keep(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

/* Volatile so the compiler can neither fold the failing size into a
 * constant-size warning nor drop the call. */
static volatile size_t huge_size = SIZE_MAX / 2;

static void *volatile leaked_block;

/* GCC turns a literal realloc(NULL, n) into malloc(n); reading the null
 * pointer through a volatile keeps the realloc call. */
static void *volatile null_block;

static int temporaries(void)
{
    void *t = malloc(10011);
    if (!t) {
        return -1;
    }
    keep(t);
    free(t);

    t = malloc(10012);
    if (!t) {
        return -1;
    }
    keep(t);
    free(t);

    t = calloc(10, 1001);
    if (!t) {
        return -1;
    }
    keep(t);
    free(t);
    return 0;
}

int main(void)
{
    if (temporaries() < 0) {
        return 1;
    }

    /* The realloc chain: one block grows 10001 -> 20001 -> 30001. */
    char *p = malloc(10001);
    if (!p) {
        return 1;
    }
    keep(p);
    char *grown = realloc(p, 20001);
    if (!grown) {
        return 1;
    }
    p = grown;
    keep(p);
    grown = realloc(p, 30001);
    if (!grown) {
        return 1;
    }
    p = grown;
    keep(p);

    char *q = realloc(null_block, 40001);
    if (!q) {
        return 1;
    }
    keep(q);

    char *a = reallocarray(NULL, 6, 10001);
    if (!a) {
        return 1;
    }
    keep(a);

    char *c = calloc(5, 10001);
    if (!c) {
        return 1;
    }
    keep(c);

    /* Not a temporary: the event before this one allocated c, not a. */
    char *bigger = reallocarray(a, 8, 10001);
    if (!bigger) {
        return 1;
    }
    a = bigger;
    keep(a);

    /* A call that returns NULL allocates nothing. keep() stops clang from
     * deleting the call and folding the test to "never NULL". */
    void *none = malloc(huge_size);
    keep(none);
    if (none) {
        return 1;
    }

    free(c);

    /* glibc: realloc(q, 0) frees q and returns NULL. */
    char *gone = realloc(q, 0);
    if (gone) {
        return 1;
    }

    free(a);
    free(p);

    leaked_block = malloc(70001);
    if (!leaked_block) {
        return 1;
    }
    return 0;
}
