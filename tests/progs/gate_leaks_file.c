// SPDX-License-Identifier: MIT
/* Part of gate_leaks (see gate_leaks.c): a leak whose only distinct name
 * is this source file's. */
#include <stdlib.h>

void *gate_leak_in_other_file(void);

__attribute__((noinline)) void *gate_leak_in_other_file(void)
{
    void *p = malloc(2002);
    __asm__ volatile("" ::: "memory");
    return p;
}
