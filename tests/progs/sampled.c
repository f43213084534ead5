// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
/*
 * Target program for sampling mode: two call sites with a known share of
 * the bytes. site_a makes 300,000 allocations of 1000 bytes, site_b
 * 100,000 of 1000 bytes, both freed at once; site_c leaks 1000 blocks of
 * 10,000 bytes. Exact: 401,000 allocations, 410,000,000 bytes; site_a
 * allocates 300,000,000 bytes, site_b 100,000,000, site_c 10,000,000, all
 * of it leaked.
 */
#include <stdlib.h>

static void *volatile sink;
static void *leaks[1000];

__attribute__((noinline)) static void site_a(void)
{
    void *p = malloc(1000);
    sink = p;
    free(p);
}

/* Not identical to site_a, or the compiler folds the two into one. */
__attribute__((noinline)) static void site_b(void)
{
    char *p = malloc(1000);
    sink = p + 1;
    free(p);
}

__attribute__((noinline)) static void site_c(int i)
{
    leaks[i] = malloc(10000);
    sink = leaks[i];
}

int main(void)
{
    for (int i = 0; i < 100000; i++) {
        site_a();
        site_a();
        site_a();
        site_b();
        if (i % 100 == 0) {
            site_c(i / 100);
        }
    }
    return 0;
}
