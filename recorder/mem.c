// SPDX-License-Identifier: MIT
/* The recorder's own memory comes from mmap, never from the hooked malloc. */
#include "recorder_internal.h"

#include <sys/mman.h>

void *mem_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void mem_unmap(void *p, size_t bytes)
{
    if (p) {
        munmap(p, bytes);
    }
}
