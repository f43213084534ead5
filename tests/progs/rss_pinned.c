// SPDX-License-Identifier: MIT
/*
 * Target program for test_pinned.py: one small block at the top of glibc's
 * main heap keeps 80 MB of freed memory from going back. Allocates 80,000
 * blocks of 1000 bytes (below the mmap threshold: they come from the main
 * heap, one after the other), writes them (resident), then one block of
 * 1001 bytes from pin_site(), which lands above them at the top of the
 * heap; frees the 80,000 blocks (they merge into one free chunk below the
 * pin, which top trimming cannot reach), sleeps 500 ms (memrec samples RSS
 * and the allocator meanwhile) and exits with the pin live. No stdio,
 * exit 0.
 *
 * Expected during the sleep and at the end: the main heap's top live block
 * is pin_site's 1001-byte block; below it about 80,000 x 1008 bytes
 * (80,640,000, 19,687 pages of 4 KiB) of free memory down to libc's few
 * blocks, all of it counted as held by pin_site's stack.
 *
 * With the argument "thread", a thread does the same with 40,000 blocks
 * (40 MB: within one heap of its own arena, 64 MiB at most), and main
 * sleeps once it is joined: the pin is at the top of that thread arena's
 * heap, pinning about 40,000 x 1008 bytes (40,320,000: 9,843 pages).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BLOCKS 80000
#define SIZE 1000

static void *blocks[BLOCKS];
void *volatile pin;

__attribute__((noinline)) static void *pin_site(void)
{
    void *p = malloc(1001);
    if (p) {
        memset(p, 2, 1001);
    }
    return p;
}

static int churn_then_pin(int n)
{
    for (int i = 0; i < n; i++) {
        blocks[i] = malloc(SIZE);
        if (!blocks[i]) {
            return 1;
        }
        memset(blocks[i], 1, SIZE);
    }
    pin = pin_site();
    if (!pin) {
        return 1;
    }
    for (int i = 0; i < n; i++) {
        free(blocks[i]);
    }
    return 0;
}

static void *thread_main(void *arg)
{
    (void)arg;
    return churn_then_pin(BLOCKS / 2) ? (void *)1 : NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "thread") == 0) {
        pthread_t t;
        void *rc;
        if (pthread_create(&t, NULL, thread_main, NULL) != 0 || pthread_join(t, &rc) != 0 || rc) {
            return 1;
        }
    } else if (churn_then_pin(BLOCKS)) {
        return 1;
    }
    struct timespec ts = {0, 500 * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
    return 0;
}
