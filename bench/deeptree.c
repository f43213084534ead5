// SPDX-License-Identifier: MIT
/* deeptree: a recording with millions of distinct call-tree nodes from few
 * calls, to measure the analyzers' memory per node (docs/performance.md).
 * Each of N allocations (default 200,000) is made at the bottom of a
 * recursion DEPTH frames deep (default 26) whose every level calls down
 * through one of two call sites, picked by the bits of a random number: so
 * nearly every stack below the top ~17 levels is new, and the trace tree
 * has about N x (DEPTH - 17) nodes. Deterministic.
 * Usage: deeptree [allocations] [depth] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile sink;

__attribute__((noinline)) static void bottom(uint64_t bits)
{
    char *p = malloc(16 + (size_t)(bits & 63));
    __asm__ volatile("" : : "r"(p) : "memory");
    free(p);
}

__attribute__((noinline)) static void down(int depth, uint64_t bits)
{
    if (depth == 0) {
        bottom(bits);
    } else if (bits & 1) {
        down(depth - 1, bits >> 1); /* call site one */
        __asm__ volatile("" ::: "memory");
    } else {
        down(depth - 1, bits >> 1); /* call site two */
        __asm__ volatile("" ::: "memory");
    }
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000L;
    int depth = argc > 2 ? atoi(argv[2]) : 26;
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (long i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        down(depth, x);
    }
    sink = &x;
    return 0;
}
