// SPDX-License-Identifier: MIT
/* libgate_module.so, linked by gate_leaks (see gate_leaks.c): a leak made
 * inside a module of its own. */
#include <stdlib.h>

__attribute__((visibility("default"))) void *gate_leak_in_module(void);

void *gate_leak_in_module(void)
{
    void *p = malloc(3003);
    __asm__ volatile("" ::: "memory");
    return p;
}
