// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
/*
 * The library tests/progs/mapper.c links: mapper_lib_map maps 40 MiB of
 * anonymous memory (41943040 bytes) and keeps it to the end, so the
 * report must show 40 MiB mapped at this call site, in libmapper.so.
 */
#include <stddef.h>
#include <sys/mman.h>

static void *volatile kept;

/* The result goes through a volatile, so mmap is not a tail call and
 * mapper_lib_map keeps its frame. */
__attribute__((visibility("default"), noinline)) void *mapper_lib_map(void)
{
    kept = mmap(NULL, 40u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); /* LINE_LIB_MAP */
    return kept == MAP_FAILED ? NULL : kept;
}
