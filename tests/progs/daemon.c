// SPDX-License-Identifier: MIT
/* Descriptors seen by a daemon built without unwind tables (so that stack
 * walks through it take libunwind's checked path, which opens a pipe of
 * its own). It writes the number its first open() returns, then closes
 * every descriptor above 2 as daemons do, opens its two log files (argv[1]
 * and argv[2]) expecting descriptors 3 and 4, and makes ROUNDS rounds of
 * one malloc(3001) + free and one line written to each log. At the end it
 * checks that descriptors 3 and 4 are still its logs, each holding exactly
 * the bytes written to it, and writes "first N logs 3 4 bytes B" on stdout
 * (exit 3 on any difference, with a line on stderr).
 * Expected: ROUNDS allocations of 3001 bytes from grind(), all freed. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ROUNDS 2000

static void *volatile sink;

__attribute__((noinline)) static void grind(void)
{
    sink = malloc(3001);
    free(sink);
}

static int same_file(int fd, const char *path)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        return 2;
    }
    int first = open("/dev/null", O_RDONLY);
    long top = sysconf(_SC_OPEN_MAX);
    for (long fd = 3; fd < (top > 0 ? top : 1024); fd++) {
        close((int)fd);
    }
    int log1 = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
    int log2 = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
    if (log1 != 3 || log2 != 4) {
        fprintf(stderr, "daemon: logs opened on %d and %d, not 3 and 4\n", log1, log2);
        return 3;
    }
    static const char line[] = "one line of the daemon's log\n";
    long written = 0;
    for (int i = 0; i < ROUNDS; i++) {
        grind();
        if (write(3, line, sizeof line - 1) != (ssize_t)(sizeof line - 1) ||
            write(4, line, sizeof line - 1) != (ssize_t)(sizeof line - 1)) {
            fprintf(stderr, "daemon: write to a log failed at round %d\n", i);
            return 3;
        }
        written += (long)sizeof line - 1;
    }
    struct stat s1, s2;
    if (!same_file(3, argv[1]) || !same_file(4, argv[2]) || fstat(3, &s1) != 0 || fstat(4, &s2) != 0 ||
        s1.st_size != written || s2.st_size != written) {
        fprintf(stderr, "daemon: descriptors 3 and 4 are no longer the logs of %ld bytes\n", written);
        return 3;
    }
    printf("first %d logs %d %d bytes %ld\n", first, log1, log2, written);
    return 0;
}
