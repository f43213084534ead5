// SPDX-License-Identifier: MIT
/* Descriptors: behaves like a daemon that closes every descriptor above 2,
 * then like a program that dup2()s its own file over every descriptor, then
 * uses close_range() and closefrom(). Between the steps it allocates (enough
 * to fill the recorder's buffers several times) and sleeps past the
 * recorder's flush period. It checks that its own file holds exactly what
 * it wrote (exit 3 otherwise). Each step makes 2000 malloc(48)/free pairs
 * and leaks one block of 100 bytes: 4 steps plus the first. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TOP 1024

/* Through a volatile pointer, so the compiler cannot drop the pairs. */
static void *volatile sink;

__attribute__((noinline)) static void step(void)
{
    for (int i = 0; i < 2000; i++) {
        sink = malloc(48);
        free(sink);
    }
    sink = malloc(100);
    usleep(30 * 1000);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        return 1;
    }
    step();
    for (int fd = 3; fd < TOP; fd++) {
        close(fd);
    }
    step();

    int f = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (f < 0) {
        return 1;
    }
    static const char line[] = "the program's own data\n";
    if (write(f, line, sizeof line - 1) != (ssize_t)(sizeof line - 1)) {
        return 1;
    }
    for (int fd = 3; fd < TOP; fd++) {
        if (fd != f) {
            dup2(f, fd);
        }
    }
    step();
    for (int fd = 3; fd < TOP; fd++) {
        if (fd != f) {
            close(fd);
        }
    }
    struct stat st;
    if (fstat(f, &st) != 0 || st.st_size != (off_t)(sizeof line - 1)) {
        fprintf(stderr, "fdcloser: my file holds %lld bytes, not %zu\n", (long long)st.st_size, sizeof line - 1);
        return 3;
    }
    close(f);

    close_range(3, ~0u, 0);
    step();
    closefrom(3);
    step();
    return 0;
}
