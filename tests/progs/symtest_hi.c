// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
// Shared library for test_symbolize, linked with its first segment at 0x10000000 (p_vaddr != 0,
// like a prelinked library), so the load bias differs from the load address when it is moved.
#include "symtest.h"

static unsigned sink;

static __attribute__((noinline)) void *hi_ra(void)
{
    void *ra = __builtin_return_address(0);
    __asm__ volatile("" : : "r"(ra) : "memory");
    return ra;
}

void *symtest_hi_entry(unsigned *line)
{
    void *ra = hi_ra(); *line = __LINE__;
    sink++;
    return ra;
}
