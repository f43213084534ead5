// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
/*
 * Target program: temporaries interleaved with non-temporaries. A block is
 * temporary when the thread's very next allocation event (allocation or
 * free) after allocating it is its free. Single-threaded, no stdio, exit 0.
 *
 * Steps (T = temporary), with the live requested bytes after each:
 *    1  A = malloc(10001)                  10001
 *    2  B = malloc(20001)                  30002
 *    3  free(B)                            10001   B: T
 *    4  free(A)                            0       A: not T (a free came between)
 *    5  C = malloc(30001)                  30001
 *    6  D = malloc(40001)                  70002
 *    7  free(C)                            40001   C: not T (D came between)
 *    8  free(D)                            0       D: not T (free(C) came between)
 *    9  E = calloc(7, 7143) = 50001, free  0       E: T
 *   10  10 times: malloc(60001 + k), free  0       T each (k = 0..9)
 *   11  H = malloc(80001)                  80001
 *   12  I = malloc(90001)                  170002  peak
 *   13  free(H)                            90001   H: not T
 *   14  free(I)                            0       I: not T
 *
 * Expected (memrec definitions): allocations 17, temporary 12, peak 170002,
 * leaked 0 bytes in 0 blocks, allocated in total 920062 bytes.
 */
#include <stdlib.h>

/* GCC deletes a malloc/free pair whose memory is never used; an empty asm
 * that claims to read the pointer and all memory keeps every call real. */
static inline void keep(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

static void *checked(void *p)
{
    if (!p) {
        exit(1);
    }
    keep(p);
    return p;
}

int main(void)
{
    void *a = checked(malloc(10001));
    void *b = checked(malloc(20001));
    free(b);
    free(a);

    void *c = checked(malloc(30001));
    void *d = checked(malloc(40001));
    free(c);
    free(d);

    void *e = checked(calloc(7, 7143));
    free(e);

    for (size_t k = 0; k < 10; k++) {
        void *t = checked(malloc(60001 + k));
        free(t);
    }

    void *h = checked(malloc(80001));
    void *i = checked(malloc(90001));
    free(h);
    free(i);
    return 0;
}
