// SPDX-License-Identifier: MIT
/*
 * Target program for memprint's time windows, --at, --thread and the size
 * histogram (tests/integration/test_memprint_analyses.py):
 * three phases separated by sleeps of 500 ms, so that every event of a
 * phase is stamped well inside it (memrec's clock ticks every 10 ms).
 *
 *   phase 1 (from 0 s):    100 x malloc(10001), kept; 50 temporaries of 700
 *   sleep 500 ms
 *   phase 2 (~0.5 s):      20 x malloc(20001), kept; the 100 blocks of phase 1 freed
 *   sleep 500 ms
 *   phase 3 (~1.0 s):      a thread makes 7 x malloc(40001), leaked; main
 *                          frees the 20 blocks of phase 2 after joining it
 *
 * Own allocations: 177 calls, 50 temporary, peak 1000100 + 400020 = 1400120
 * (phase 2's blocks all made before phase 1's are freed), leaked 280007 in 7
 * blocks, allocated 1000100 + 35000 + 400020 + 280007 = 1715127. pthread_create
 * adds one calloc of the new thread's DTV in the main thread (EXPECTED.md,
 * threads): 178 calls in all, found by its stack, never freed.
 * A window [0.25 s, 0.75 s) holds phase 2 alone: 20 calls, 400020 bytes,
 * nothing leaked (freed in phase 3), 100 blocks (1000100 bytes) of phase 1
 * freed inside it. At 0.75 s: 170 calls, 400020 bytes live in 20 blocks.
 * Sizes: bucket 10 (512..1023) 50 calls 35000 bytes 50 temporary; bucket 14
 * (8192..16383) 100 calls 1000100 bytes; bucket 15 20 calls 400020 bytes;
 * bucket 16 7 calls 280007 bytes.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static void *volatile one[100];
static void *volatile two[20];
static void *volatile three[7];

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

__attribute__((noinline)) static void phase_one(void)
{
    for (int i = 0; i < 100; i++) {
        one[i] = malloc(10001);
    }
    for (int i = 0; i < 50; i++) {
        void *volatile t = malloc(700);
        free(t);
    }
}

__attribute__((noinline)) static void phase_two(void)
{
    for (int i = 0; i < 20; i++) {
        two[i] = malloc(20001);
    }
    for (int i = 0; i < 100; i++) {
        free(one[i]);
    }
}

__attribute__((noinline)) static void *phase_three(void *arg)
{
    (void)arg;
    for (int i = 0; i < 7; i++) {
        three[i] = malloc(40001);
    }
    return NULL;
}

int main(void)
{
    phase_one();
    pause_ms(500);
    phase_two();
    pause_ms(500);
    pthread_t t;
    if (pthread_create(&t, NULL, phase_three, NULL) != 0) {
        return 1;
    }
    pthread_join(t, NULL);
    for (int i = 0; i < 20; i++) {
        free(two[i]);
    }
    return 0;
}
