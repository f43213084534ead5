// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
// Shared library for test_symbolize: one exported and one static function, each returning a return
// address at a known line. The build also makes stripped and debuglink copies of this library.
#include "symtest.h"

static unsigned sink;

static __attribute__((noinline)) void *lib_ra(void)
{
    void *ra = __builtin_return_address(0);
    __asm__ volatile("" : : "r"(ra) : "memory");
    return ra;
}

static __attribute__((noinline)) void *lib_hidden(unsigned *line)
{
    void *ra = lib_ra(); *line = __LINE__;
    sink++;
    return ra;
}

void *symtest_lib_entry(unsigned *line)
{
    void *ra = lib_ra(); *line = __LINE__;
    sink += 2;
    return ra;
}

void *symtest_lib_static(unsigned *line)
{
    void *ra = lib_hidden(line);
    sink += 3;
    return ra;
}
