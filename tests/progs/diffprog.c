// SPDX-License-Identifier: MIT
/*
 * Target program for memprint --diff: run with a number N (1 or 2), it
 * changes three sites by known amounts. Built twice (diffprog at -O2, and
 * diffprog_pad at -O1 with functions aligned to 256 bytes and a padding
 * function: every address moves), so that a comparison must match sites
 * by name and file.
 *
 *   grow_site:   3 * N blocks of 10001, leaked     (N=1 -> 2: +3 calls, +30003 bytes)
 *   shrink_site: 5 - N blocks of 20001, leaked     (N=1 -> 2: -1 call, -20001 bytes)
 *   steady_site: 2 blocks of 30001, freed (temporary each)   (no change)
 *
 * N=1: 3 + 4 + 2 = 9 calls, 2 temporary, leaked 30003 + 80004 = 110007,
 * allocated 110007 + 60002 = 170009. N=2: 6 + 3 + 2 = 11 calls, leaked
 * 60006 + 60003 = 120009, allocated 180011. Peak: the leaked blocks plus
 * one steady block (steady_site runs last): 140008 and 150010.
 */
#include <stdlib.h>

static void *volatile keep[16];
static int nkeep;

#ifdef DIFFPROG_PADDING
/* Never called with a nonzero argument; only here to move the code. */
__attribute__((noinline)) int diffprog_padding(int x)
{
    volatile int acc = 0;
#define PAD                                                                                                            \
    acc += x * 3 + acc / 7;                                                                                            \
    acc ^= x << 2;
#define PAD8 PAD PAD PAD PAD PAD PAD PAD PAD
    PAD8 PAD8 PAD8 PAD8 PAD8 PAD8 PAD8 PAD8 return acc;
}
#endif

__attribute__((noinline)) static void grow_site(int n)
{
    for (int i = 0; i < 3 * n; i++) {
        keep[nkeep++] = malloc(10001);
    }
}

__attribute__((noinline)) static void shrink_site(int n)
{
    for (int i = 0; i < 5 - n; i++) {
        keep[nkeep++] = malloc(20001);
    }
}

__attribute__((noinline)) static void steady_site(void)
{
    for (int i = 0; i < 2; i++) {
        void *volatile p = malloc(30001);
        free(p);
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 && argv[1][0] == '2' ? 2 : 1;
#ifdef DIFFPROG_PADDING
    if (argc > 5) {
        return diffprog_padding(argc);
    }
#endif
    grow_site(n);
    shrink_site(n);
    steady_site();
    return 0;
}
