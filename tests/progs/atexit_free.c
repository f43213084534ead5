// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
/*
 * Target program: blocks freed after main returns must count as freed, not
 * leaked. Single-threaded, no stdio, exit 0.
 *
 * main: malloc(10001) -> a, malloc(20001) -> b, malloc(40001) -> the leak,
 *       registers release_a with atexit, returns 0.
 * exit: release_a (atexit handler) frees a; later release_b (an ELF
 *       destructor, run by the dynamic linker's fini after the atexit
 *       handlers) frees b. The 40001 block is never freed.
 *
 * Expected (memrec definitions): allocations 3, temporary 0, peak 70003,
 * leaked 40001 bytes in 1 block, allocated in total 70003 bytes.
 * atexit() does not allocate: glibc keeps the first 32 handlers in a
 * static table.
 */
#include <stdlib.h>

static void *volatile freed_at_exit;
static void *volatile freed_by_destructor;
static void *volatile leaked_block;

static void release_a(void)
{
    free(freed_at_exit);
    freed_at_exit = NULL;
}

__attribute__((destructor)) static void release_b(void)
{
    free(freed_by_destructor);
    freed_by_destructor = NULL;
}

int main(void)
{
    freed_at_exit = malloc(10001);
    freed_by_destructor = malloc(20001);
    leaked_block = malloc(40001);
    if (!freed_at_exit || !freed_by_destructor || !leaked_block) {
        return 1;
    }
    if (atexit(release_a) != 0) {
        return 1;
    }
    return 0;
}
