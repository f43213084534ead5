// SPDX-License-Identifier: MIT
/*
 * Target program for memtui's escaping test (tests/integration/
 * test_memtui.py): hostile_alloc() makes one malloc(7777), leaked. The
 * test compiles this file and hostile_main.c without debug information
 * and renames the symbol hostile_alloc, in both objects, to a name that
 * holds terminal escape sequences (ESC [31m ... ESC [0m) with objcopy, so
 * that the symbolizer finds that name in the symbol table. It is not
 * built by CMake: a source file cannot spell such a name.
 */
#include <stdlib.h>

void *hostile_alloc(size_t n);

__attribute__((noinline)) void *hostile_alloc(size_t n)
{
    void *p = malloc(n);
    __asm__ volatile("" ::: "memory"); /* malloc() is not a tail call */
    return p;
}
