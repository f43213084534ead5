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
 */
#define _GNU_SOURCE
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

int main(void)
{
    for (int i = 0; i < BLOCKS; i++) {
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
    for (int i = 0; i < BLOCKS; i++) {
        free(blocks[i]);
    }
    struct timespec ts = {0, 500 * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
    return 0;
}
