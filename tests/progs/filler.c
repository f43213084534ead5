// SPDX-License-Identifier: MIT
/*
 * Target program that fills memrec's pipe, for tests/integration/
 * test_sigkill.py: forever, fill_alloc() makes one malloc(10007), which is
 * freed at once, and after each pair the program writes how many pairs it
 * made so far (a uint64_t, native byte order) on stdout. With memrec
 * stopped, the pipe fills and the program blocks inside a recorded call,
 * handing a batch to write(2); the test then kills it. Every pair the
 * program counted, and the allocation of the call it was blocked in, are
 * in the recording: fill_alloc's calls are the last count or one more.
 * No stdio (it allocates).
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) static void *fill_alloc(void)
{
    void *p = malloc(10007);
    __asm__ volatile("" ::: "memory"); /* malloc() is not a tail call */
    return p;
}

int main(void)
{
    for (uint64_t n = 1;; n++) {
        free(fill_alloc());
        if (write(1, &n, sizeof n) != (ssize_t)sizeof n) {
            return 1;
        }
    }
}
