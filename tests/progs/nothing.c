// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
/*
 * Target program: allocates nothing at all, directly or through libc (no
 * stdio, no environment look-ups that could allocate). Exit 0.
 *
 * Expected (memrec definitions): allocations 0, temporary 0, peak 0,
 * leaked 0 bytes in 0 blocks, allocated in total 0 bytes.
 */
#include <unistd.h>

int main(void)
{
    /* One harmless system call so the program does something observable
     * under strace, without touching the heap. */
    return getpid() > 0 ? 0 : 1;
}
