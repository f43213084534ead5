// SPDX-License-Identifier: MIT
/*
 * Target program for memtui's wrapper folding (W) and its other
 * heaptrack-GUI views (tests/integration/test_memtui_views.py): every
 * allocation goes through a wrapper, as in programs built on xmalloc.
 * No stdio, exit 0.
 *
 *   site_a:  3 x xmalloc(10001)         (xmalloc: one of the known wrappers)
 *   site_b:  5 x xmalloc(20001)
 *   site_c:  2 x pool_get(30001)        (pool_get: a wrapper of this program)
 *   then every block is freed
 *
 * Expected: allocations 10, temporary 0, peak 190010 bytes (3 x 10001 +
 * 5 x 20001 + 2 x 30001), leaked 0, allocated 190010. Bottom-up, the
 * sites are xmalloc (8 calls, in two stacks: from site_a and from
 * site_b) and pool_get (2); folding the known wrappers makes them site_a
 * (3), site_b (5) and pool_get (2); folding pool_get too makes the last
 * one site_c (2).
 */
#define _GNU_SOURCE
#include <stdlib.h>

static void *volatile blocks[10];

__attribute__((noinline)) void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        abort();
    }
    __asm__ volatile("" ::: "memory"); /* not a tail call */
    return p;
}

__attribute__((noinline)) void *pool_get(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        abort();
    }
    __asm__ volatile("" ::: "memory");
    return p;
}

__attribute__((noinline)) void site_a(void)
{
    for (int i = 0; i < 3; i++) {
        blocks[i] = xmalloc(10001);
    }
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void site_b(void)
{
    for (int i = 0; i < 5; i++) {
        blocks[3 + i] = xmalloc(20001);
    }
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void site_c(void)
{
    for (int i = 0; i < 2; i++) {
        blocks[8 + i] = pool_get(30001);
    }
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    site_a();
    site_b();
    site_c();
    for (int i = 0; i < 10; i++) {
        free(blocks[i]);
    }
    return 0;
}
