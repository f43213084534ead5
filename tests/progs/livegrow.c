// SPDX-License-Identifier: MIT
/*
 * Target program: a recording that is large at once and then keeps
 * growing, for memtui's background reload. No stdio.
 *
 * usage: livegrow N MS
 *   N    allocations made at once, of pseudo-random sizes from 16 to 4015
 *        bytes at one of 16 call depths (i % 16), each freed 1024
 *        allocations later (so that the recorder cannot fold it as a
 *        temporary), so that the recording takes a while to load
 *   MS   then, for MS milliseconds, one malloc(10001) a millisecond that
 *        replaces the oldest of 8 blocks (as slow.c), the file growing
 *
 * Peak heap: 80008 bytes (8 blocks of 10001) once the ring is full, more
 * than any block of the burst; at the end the 8 blocks are still live
 * (leaked). Exit status 2 on a bad argument.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <time.h>

#define RING 8
#define BLOCK 10001

/* GCC deletes a malloc/free pair whose memory is never used. */
static inline void keep(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long parse(const char *s)
{
    long v = 0;
    if (!*s) {
        return -1;
    }
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > 100000000) {
            return -1;
        }
        v = v * 10 + (*s - '0');
    }
    return v;
}

#define BURST_RING 1024
static void *burst[BURST_RING];

/* Allocate at `depth` frames below the caller (16 distinct stacks), in
 * place of the block made BURST_RING allocations before. */
__attribute__((noinline)) static void burst_at(unsigned depth, size_t size, unsigned slot)
{
    if (depth > 0) {
        burst_at(depth - 1, size, slot);
        __asm__ volatile("");
        return;
    }
    free(burst[slot]);
    burst[slot] = malloc(size);
    keep(burst[slot]);
}

static void *ring[RING];

int main(int argc, char **argv)
{
    if (argc != 3) {
        return 2;
    }
    long n = parse(argv[1]), ms = parse(argv[2]);
    if (n < 0 || ms < 0) {
        return 2;
    }
    unsigned seed = 12345;
    for (long i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        burst_at((unsigned)(i % 16), 16 + (size_t)((seed >> 16) % 4000), (unsigned)(i % BURST_RING));
    }
    for (unsigned k = 0; k < BURST_RING; k++) {
        free(burst[k]);
        burst[k] = NULL;
    }
    long long deadline = now_ms() + ms;
    unsigned i = 0;
    do {
        free(ring[i % RING]);
        ring[i % RING] = malloc(BLOCK);
        keep(ring[i % RING]);
        i++;
        struct timespec tick = {0, 1000000};
        nanosleep(&tick, NULL);
    } while (now_ms() < deadline);
    return 0;
}
