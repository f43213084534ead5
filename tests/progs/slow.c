// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
/*
 * Target program: allocates steadily for a while, so that its recording
 * spans many of memrec's flushes and can be cut short, interrupted, or end
 * in a crash. No stdio.
 *
 * usage: slow [MS [END [BURST]]]
 *   MS   how long to run, in milliseconds (default 2000)
 *   END  how to end: "exit" (default, status 0), "segv" (an invalid write:
 *        SIGSEGV), "kill" (SIGKILL sent to itself)
 *   BURST first, BURST allocations at once (default none), of pseudo-random
 *        sizes from 16 to 4015 bytes at one of 16 call depths (i % 16), each
 *        freed 1024 allocations later (so that the recorder cannot fold it
 *        as a temporary) and the last 1024 freed after the burst: a
 *        recording that is large at once and then keeps growing (memtui's
 *        background reload)
 *
 * Every millisecond it frees the oldest of 8 blocks and allocates a new
 * one with malloc(10001), so the figures depend on the run time: about MS
 * allocations of 10001 bytes, all but the first 8 of them replacing a
 * freed block; peak 80008 bytes (8 blocks); at the end 8 blocks of 10001
 * bytes are still live (leaked, or lost in the crash); a burst adds its
 * BURST allocations, all freed, and never raises the peak (each block is
 * smaller than 4 KiB, at most 1024 live). Exit status 2 on a bad argument.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RING 8
#define BLOCK 10001

/* GCC deletes a malloc/free pair whose memory is never used; an empty asm
 * that claims to read the pointer and all memory keeps every call real. */
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

/* Decimal digits only; -1 for anything else (atoi would accept junk). */
static long parse_ms(const char *s)
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

static void run_burst(long n)
{
    unsigned seed = 12345;
    for (long i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        burst_at((unsigned)(i % 16), 16 + (size_t)((seed >> 16) % 4000), (unsigned)(i % BURST_RING));
    }
    for (unsigned k = 0; k < BURST_RING; k++) {
        free(burst[k]);
        burst[k] = NULL;
    }
}

static void *ring[RING];

/* Read through a volatile so the compiler cannot see the write is invalid
 * and neither warns nor turns it into a trap instruction (SIGILL). */
static int *volatile bad_address = (int *)8;

int main(int argc, char **argv)
{
    long ms = 2000;
    const char *end = "exit";
    if (argc > 1) {
        ms = parse_ms(argv[1]);
        if (ms < 0) {
            return 2;
        }
    }
    if (argc > 2) {
        end = argv[2];
    }
    if (strcmp(end, "exit") != 0 && strcmp(end, "segv") != 0 && strcmp(end, "kill") != 0) {
        return 2;
    }
    long nburst = argc > 3 ? parse_ms(argv[3]) : 0;
    if (nburst < 0 || argc > 4) {
        return 2;
    }
    run_burst(nburst);

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

    if (strcmp(end, "segv") == 0) {
        *bad_address = 1; /* a real fault, not raise() */
    }
    if (strcmp(end, "kill") == 0) {
        kill(getpid(), SIGKILL);
    }
    return 0;
}
