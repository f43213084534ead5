// SPDX-License-Identifier: MIT
/* bench/clockcost.c: what one read of the TSC costs on this machine, the
 * clock memrec --time reads twice around every allocator call
 * (recorder/preload/callclock.h): back to back, around a malloc/free pair,
 * and inside a loop of independent cache misses, where a read that waits
 * for the loads before it costs the program its overlapped misses
 * (docs/performance.md, "memrec --time"). x86-64 only.
 *
 *   cc -O2 -o /tmp/clockcost bench/clockcost.c && /tmp/clockcost */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define PAIRS 1000000
#define CALLS 20000000
#define MISSES 4000000
#define TABLE (1u << 24) /* 64 MiB of uint32: far beyond the caches */

/* The same instruction as the recorder's alloctime_now(). */
static inline uint64_t tsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(void)
{
    /* Back to back: the difference of two reads, as ticks. */
    uint64_t sum = 0, low = UINT64_MAX;
    for (int i = 0; i < PAIRS; i++) {
        uint64_t a = tsc(), b = tsc();
        sum += b - a;
        low = b - a < low ? b - a : low;
    }
    printf("back to back: %.1f ticks on average, %llu at least\n", (double)sum / PAIRS, (unsigned long long)low);

    /* A malloc/free pair with no read, one read pair, two read pairs. */
    void *(*volatile m)(size_t) = malloc;
    void (*volatile f)(void *) = free;
    void *slot[64] = {0};
    volatile uint64_t sink = 0;
    double base = 0;
    for (int reads = 0; reads <= 4; reads += 2) {
        double t = now();
        for (int i = 0; i < CALLS; i++) {
            uint64_t a = reads ? tsc() : 0;
            void *p = m(32 + (size_t)(i & 63));
            uint64_t b = reads ? tsc() : 0;
            uint64_t c = reads == 4 ? tsc() : 0;
            f(slot[i & 63]);
            uint64_t d = reads == 4 ? tsc() : 0;
            slot[i & 63] = p;
            sink += (b - a) + (d - c);
        }
        double ns = (now() - t) / CALLS * 1e9;
        base = reads ? base : ns;
        printf("malloc + free, %d reads: %.1f ns a pair (+%.1f ns a read)\n", reads, ns,
               reads ? (ns - base) / reads : 0.0);
    }
    for (int i = 0; i < 64; i++) {
        f(slot[i]);
    }

    /* Independent cache misses, with 0, 1 and 2 reads per miss. */
    uint32_t *tab = malloc(TABLE * sizeof *tab);
    if (!tab) {
        return 1;
    }
    for (uint32_t i = 0; i < TABLE; i++) {
        tab[i] = i * 2654435761u;
    }
    for (int reads = 0; reads <= 2; reads++) {
        double t = now();
        uint64_t s = 0;
        for (uint32_t i = 0; i < MISSES; i++) {
            s += tab[(i * 2654435761u) & (TABLE - 1)];
            if (reads >= 1) {
                s += tsc();
            }
            if (reads == 2) {
                s += tsc();
            }
        }
        sink += s;
        double ns = (now() - t) / MISSES * 1e9;
        base = reads ? base : ns;
        printf("independent misses, %d reads each: %.1f ns a miss (+%.1f ns a read)\n", reads, ns,
               reads ? (ns - base) / reads : 0.0);
    }
    free(tab);
    return sink == 42;
}
