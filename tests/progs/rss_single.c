// SPDX-License-Identifier: MIT
/*
 * Target program for test_rssgap.py: a heap with little churn, one thread.
 * Allocates 2000 blocks of 10001 bytes, writes them (resident), sleeps
 * 400 ms (memrec samples RSS and the allocator meanwhile), and exits with
 * them live (as rss_arenas, no moment without the heap at the end). No
 * stdio, exit 0.
 *
 * Expected during the sleep: live heap 2000 x 10001 = 20002000 bytes of
 * these blocks; the allocator's overhead about 2000 x 15 bytes (a 10001-byte
 * block takes a 10016-byte chunk); little held free (the top of the heap);
 * no advice in the RSS section.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BLOCKS 2000
#define SIZE 10001

static void *blocks[BLOCKS];

int main(void)
{
    for (int i = 0; i < BLOCKS; i++) {
        blocks[i] = malloc(SIZE);
        if (!blocks[i]) {
            return 1;
        }
        memset(blocks[i], 1, SIZE);
    }
    struct timespec ts = {0, 400 * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
    return 0;
}
