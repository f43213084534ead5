// SPDX-License-Identifier: MIT
/* The recorder's own memory comes from mmap, never from the hooked malloc.
 * The system calls are made directly: this library exports mmap and munmap
 * (maphooks.c), and a call from here must never land in those hooks. */
#define _GNU_SOURCE
#include "mem.h"

#include <stdatomic.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Every live mapping of ours, by slot: a slot whose start is 0 is free.
 * Claimed with a compare-and-swap, so threads never wait for each other
 * (mappings are made when a thread starts or a table grows: rare). */
static _Atomic uint64_t own_start[MEM_MAX_RANGES];
static _Atomic uint64_t own_len[MEM_MAX_RANGES];
static atomic_int own_overflow;

static void note_own(void *p, size_t bytes)
{
    for (int i = 0; i < MEM_MAX_RANGES; i++) {
        uint64_t expected = 0;
        if (atomic_load_explicit(&own_start[i], memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong(&own_start[i], &expected, (uint64_t)(uintptr_t)p)) {
            atomic_store(&own_len[i], bytes);
            return;
        }
    }
    atomic_store(&own_overflow, 1);
}

static void forget_own(void *p)
{
    for (int i = 0; i < MEM_MAX_RANGES; i++) {
        if (atomic_load_explicit(&own_start[i], memory_order_relaxed) == (uint64_t)(uintptr_t)p) {
            atomic_store(&own_len[i], 0);
            atomic_store(&own_start[i], 0);
            return;
        }
    }
}

void mem_note_own(void *p, size_t bytes)
{
    note_own(p, bytes);
}

void *mem_map(size_t bytes)
{
    void *p = (void *)syscall(SYS_mmap, NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        return NULL;
    }
    note_own(p, bytes);
    return p;
}

void mem_unmap(void *p, size_t bytes)
{
    if (p) {
        forget_own(p);
        syscall(SYS_munmap, p, bytes);
    }
}

int mem_own_ranges(struct mem_range *out)
{
    int n = 0;
    for (int i = 0; i < MEM_MAX_RANGES; i++) {
        uint64_t s = atomic_load(&own_start[i]), len = atomic_load(&own_len[i]);
        if (s && len) {
            out[n++] = (struct mem_range){s, len};
        }
    }
    return atomic_load(&own_overflow) ? -1 : n;
}
