// SPDX-License-Identifier: MIT
/*
 * Target program that ends with _exit(7) right after allocating, before any
 * flush period has passed: 10001, 20002 and 30003 bytes, the second freed.
 * Expected: allocations 3, leaked 40004 bytes in 2 blocks, exit status 7.
 */
#include <stdlib.h>
#include <unistd.h>

static void *volatile keep[3];

int main(void)
{
    keep[0] = malloc(10001);
    keep[1] = malloc(20002);
    keep[2] = malloc(30003);
    free(keep[1]);
    _exit(7);
}
