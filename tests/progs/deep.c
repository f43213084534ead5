// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
/*
 * Target program: one allocation at the bottom of a 300-frame recursion,
 * deeper than memrec's default depth limit (256 frames), and one at depth
 * 10. Expected: allocations 2, leaked 30003 bytes in 2 blocks (10001 deep,
 * 20002 shallow); the deep stack is marked truncated and still shows both
 * the innermost frame (bottom) and the outermost (main).
 */
#include <stdlib.h>

static void *volatile sink[2];

__attribute__((noinline)) static void *bottom(size_t n)
{
    void *p = malloc(n);
    __asm__ volatile("" : : "r"(p) : "memory");
    return p;
}

/* Not a tail call: the result is used after the recursive call returns. */
__attribute__((noinline)) static void *descend(int depth, size_t n)
{
    void *p = depth > 0 ? descend(depth - 1, n) : bottom(n);
    __asm__ volatile("" : "+r"(p) : : "memory");
    return p;
}

int main(void)
{
    sink[0] = descend(300, 10001);
    sink[1] = descend(10, 20002);
    return 0;
}
