// SPDX-License-Identifier: MIT
/* The recorder's own memory comes from mmap, never from the hooked malloc.
 * The system calls are made directly: this library exports mmap and munmap
 * (maphooks.c), and a call from here must never land in those hooks. */
#define _GNU_SOURCE
#include "mem.h"

#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

void *mem_map(size_t bytes)
{
    void *p = (void *)syscall(SYS_mmap, NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void mem_unmap(void *p, size_t bytes)
{
    if (p) {
        syscall(SYS_munmap, p, bytes);
    }
}
