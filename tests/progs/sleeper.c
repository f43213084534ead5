// SPDX-License-Identifier: MIT
/*
 * Target program for Ctrl+C and for _exit: allocates 3 blocks (10001,
 * 20002, 30003 bytes) and frees the second. Then, with no argument, writes
 * "ready\n" to stdout and waits for a signal (SIGINT ends it the default
 * way); with the argument "_exit", ends at once with _exit(7), before any
 * flush period of the recorder has passed. Expected either way:
 * allocations 3, leaked 40004 bytes in 2 blocks.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *volatile keep[3];

int main(int argc, char **argv)
{
    keep[0] = malloc(10001);
    keep[1] = malloc(20002);
    keep[2] = malloc(30003);
    free(keep[1]);
    if (argc > 1 && strcmp(argv[1], "_exit") == 0) {
        _exit(7);
    }
    if (write(STDOUT_FILENO, "ready\n", 6) != 6) {
        return 1;
    }
    for (;;) {
        pause();
    }
}
