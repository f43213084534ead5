// SPDX-License-Identifier: MIT
/* exec: the process memrec started replaces its image, and the recording
 * goes on in the new one. Phase 1 allocates, leaves some blocks allocated
 * and execs this program again with "phase2"; phase 2 allocates and
 * exits. Figures in EXPECTED.md. The last phase-1 allocation is made right
 * before exec, well inside the recorder's flush period: it must not be
 * lost. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) static void *before_exec(size_t n)
{
    void *p = malloc(n);
    memset(p, 1, n);
    return p;
}

__attribute__((noinline)) static void *after_exec(size_t n)
{
    void *p = malloc(n);
    memset(p, 2, n);
    return p;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "phase2") == 0) {
        void *keep[3];
        for (int i = 0; i < 3; i++) {
            keep[i] = after_exec(2000);
        }
        for (int i = 0; i < 5; i++) {
            free(after_exec(300));
        }
        free(keep[0]);
        return 0; /* keep[1], keep[2] leak: 4000 bytes */
    }
    void *p[10];
    for (int i = 0; i < 10; i++) {
        p[i] = before_exec(1000);
    }
    for (int i = 0; i < 6; i++) {
        free(p[i]);
    }
    /* p[6..9] are still allocated at exec: 4000 bytes; then one more. */
    (void)before_exec(777);
    const char *mode = argc > 1 ? argv[1] : "execv";
    char *args[] = {argv[0], "phase2", NULL};
    if (strcmp(mode, "execl") == 0) {
        execl("/proc/self/exe", argv[0], "phase2", (char *)NULL);
    } else if (strcmp(mode, "execvp") == 0) {
        execvp(argv[0], args);
    } else {
        execv("/proc/self/exe", args);
    }
    perror("exec");
    return 1;
}
