// SPDX-License-Identifier: MIT
/*
 * Target program for memtui's tests (tests/integration/test_memtui.py):
 * three phases of allocations, one second apart, so that a time window
 * can pick one of them. No stdio, exit 0.
 *
 *   t = 0 s    phase_one:   4 x malloc(10007), kept until the end
 *   t = 1 s    phase_two:   6 x malloc(20011), kept until the end;
 *              then scratch: 3 x (malloc(5003), free at once): temporaries
 *   t = 2 s    phase_three: 2 x malloc(30011), leaked
 *   end        main frees the blocks of phase_one and phase_two
 *
 * Expected (memrec definitions), the whole run: allocations 15,
 * temporary 3, peak 220116 bytes (4 x 10007 + 6 x 20011 + 2 x 30011, after
 * phase_three), leaked 60022 bytes in 2 blocks, allocated in total 235125
 * bytes. At the peak: phase_one 40028, phase_two 120066, phase_three 60022.
 * Top-down: main calls phase_one, phase_two (which calls scratch) and
 * phase_three; bottom-up sites phase_one (4 calls), phase_two (6),
 * scratch (3), phase_three (2).
 *
 * The window [500, 1500) ms holds phase_two and scratch only: allocations
 * 9, temporary 3, peak 125069 (120066 + one scratch block), leaked 0,
 * allocated 135075.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <time.h>

static void *volatile one[4], *volatile two[6], *volatile three[2];

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* External linkage and noinline: the frames keep these names. */
void phase_one(void);
void phase_two(void);
void scratch(void);
void phase_three(void);

__attribute__((noinline)) void phase_one(void)
{
    for (int i = 0; i < 4; i++) {
        one[i] = malloc(10007);
    }
}

__attribute__((noinline)) void scratch(void)
{
    for (int i = 0; i < 3; i++) {
        void *volatile p = malloc(5003);
        free(p);
    }
}

__attribute__((noinline)) void phase_two(void)
{
    for (int i = 0; i < 6; i++) {
        two[i] = malloc(20011);
    }
    scratch();
    __asm__ volatile("" ::: "memory"); /* scratch() is not a tail call */
}

__attribute__((noinline)) void phase_three(void)
{
    for (int i = 0; i < 2; i++) {
        three[i] = malloc(30011);
    }
}

int main(void)
{
    phase_one();
    pause_ms(1000);
    phase_two();
    pause_ms(1000);
    phase_three();
    for (int i = 0; i < 4; i++) {
        free(one[i]);
    }
    for (int i = 0; i < 6; i++) {
        free(two[i]);
    }
    return 0;
}
