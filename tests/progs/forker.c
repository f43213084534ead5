// SPDX-License-Identifier: MIT
/* fork: the parent allocates, forks three children that allocate figures
 * of their own, waits for them, and allocates again. Without
 * --follow-fork only the parent is recorded; with it each child gets a
 * file of its own. Child i (0..2) makes i+2 blocks of 1000 bytes through
 * child_work() and leaks one; child 0 returns 0 from main, child 1 calls
 * exit(5) and child 2 _exit(3). Figures in EXPECTED.md. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static void *parent_work(size_t n)
{
    void *p = malloc(n);
    memset(p, 1, n);
    return p;
}

__attribute__((noinline)) static void *child_work(size_t n)
{
    void *p = malloc(n);
    memset(p, 2, n);
    return p;
}

int main(void)
{
    void *a = parent_work(5000);
    for (int i = 0; i < 3; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            return 1;
        }
        if (pid == 0) {
            void *keep = child_work(1000);
            for (int k = 0; k < i + 1; k++) {
                free(child_work(1000));
            }
            (void)keep;
            if (i == 2) {
                _exit(3);
            }
            free(a); /* the parent's block: unknown in the child's recording */
            if (i == 1) {
                exit(5);
            }
            return 0;
        }
        int st;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != (i == 2 ? 3 : i == 1 ? 5 : 0)) {
            return 2;
        }
    }
    free(parent_work(100));
    free(a);
    (void)parent_work(42); /* leaked */
    return 0;
}
