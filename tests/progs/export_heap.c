// SPDX-License-Identifier: MIT
/*
 * Target program for the pprof and massif exports
 * (tests/integration/test_exports.py): three phases 150 ms apart, the
 * heap peak in the middle, a leak at the end, one allocation site inlined
 * into its caller. No stdio, exit 0. An argument sets the pause between
 * the phases in ms (test_exports uses 1000 where it cuts a window at 0.5 s,
 * so a slow start on a loaded machine cannot move the first phase past it).
 *
 *   t = 0 ms    big_site:    8 x malloc(100003), freed at the end
 *               tiny_site:   4 x malloc(503), freed at the end (below
 *                            massif's 1% threshold at the peak)
 *               small_site: 30 x malloc(1009) through the inlined
 *                           small_block(); 20 freed at the end, 10 leaked
 *   t = 150 ms  medium_site: 5 x malloc(40009), freed at the end
 *   t = 300 ms  the frees; leak_site: 3 x malloc(7001), leaked
 *
 * Expected (memrec definitions): allocations 50, temporary 0, allocated
 * 1053354 bytes (800024 + 2012 + 30270 + 200045 + 21003); peak 1032351
 * bytes in 47 blocks, after medium_site (800024 + 2012 + 30270 + 200045),
 * where big_site holds the most (800024); leaked 31093 bytes (10 x 1009 +
 * 3 x 7001) in 13 blocks.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <time.h>

static void *volatile big[8], *volatile tiny[4], *volatile small[30], *volatile medium[5], *volatile leak[3];

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* External linkage and noinline: the frames keep these names. */
void big_site(void);
void tiny_site(void);
void small_site(void);
void medium_site(void);
void leak_site(void);

__attribute__((noinline)) void big_site(void)
{
    for (int i = 0; i < 8; i++) {
        big[i] = malloc(100003);
    }
}

__attribute__((noinline)) void tiny_site(void)
{
    for (int i = 0; i < 4; i++) {
        tiny[i] = malloc(503);
    }
}

/* Inlined into small_site: its location has two lines. */
static inline __attribute__((always_inline)) void *small_block(void)
{
    return malloc(1009);
}

__attribute__((noinline)) void small_site(void)
{
    for (int i = 0; i < 30; i++) {
        small[i] = small_block();
    }
}

__attribute__((noinline)) void medium_site(void)
{
    for (int i = 0; i < 5; i++) {
        medium[i] = malloc(40009);
    }
}

__attribute__((noinline)) void leak_site(void)
{
    for (int i = 0; i < 3; i++) {
        leak[i] = malloc(7001);
    }
}

int main(int argc, char **argv)
{
    long gap = argc > 1 ? atol(argv[1]) : 150;
    if (gap <= 0) {
        gap = 150;
    }
    big_site();
    tiny_site();
    small_site();
    pause_ms(gap);
    medium_site();
    pause_ms(gap);
    for (int i = 0; i < 8; i++) {
        free(big[i]);
    }
    for (int i = 0; i < 5; i++) {
        free(medium[i]);
    }
    for (int i = 0; i < 4; i++) {
        free(tiny[i]);
    }
    for (int i = 0; i < 20; i++) {
        free(small[i]);
    }
    leak_site();
    pause_ms(100);
    return 0;
}
