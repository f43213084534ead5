// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
/*
 * Target program for Ctrl+C: allocates 3 blocks (10001, 20002, 30003
 * bytes), frees the second, writes "ready\n" to stdout, then waits for a
 * signal; SIGINT ends it the default way. Expected: allocations 3, leaked
 * 40004 bytes in 2 blocks, ended by signal 2.
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
    if (write(STDOUT_FILENO, "ready\n", 6) != 6) {
        return 1;
    }
    for (;;) {
        pause();
    }
}
