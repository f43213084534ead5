// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
// Helper for test_symbolize: hands its caller the address it will return to. Kept in its own
// translation unit so the compiler cannot see through the call at the call sites.
#include "symtest.h"

__attribute__((noinline)) void *symtest_ra(void)
{
    void *ra = __builtin_return_address(0);
    /* An empty asm the optimizer must keep, so the call is never folded away. */
    __asm__ volatile("" : : "r"(ra) : "memory");
    return ra;
}
