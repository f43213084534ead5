// SPDX-License-Identifier: MIT
/*
 * Target program for allocator time (memrec --time; tests/integration/
 * test_alloc_time.py): two call sites with very different costs per call.
 *
 *   small_site: 200,000 pairs of malloc(16) and free: each a few tens of
 *               nanoseconds from glibc's per-thread cache.
 *   big_site:   2,000 pairs of malloc(40 MiB) and free. 40 MiB is above
 *               glibc's largest mmap threshold (32 MiB), so each malloc is
 *               an mmap and each free a munmap. The program touches the
 *               first 128 pages of each block (outside the allocator), so
 *               that each munmap also gives back 128 pages: microseconds
 *               per call, whatever the load of the machine.
 *
 * Expected: 202,000 allocations, 202,000 frees, all temporaries (each block
 * is freed by its thread's next event), allocated 200,000 * 16 + 2,000 *
 * 41,943,040 bytes; by time the big site ranks first, by calls the small
 * one. Quiet, exit 0.
 */
#include <stdint.h>
#include <stdlib.h>

#define SMALL_PAIRS 200000
#define BIG_PAIRS 2000
#define BIG_SIZE ((size_t)40 << 20)
#define TOUCHED_PAGES 128

/* GCC deletes a malloc/free pair whose memory is never used: the empty asm
 * makes the pointer used. */
static void keep(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

__attribute__((noinline)) static void small_site(void)
{
    for (int i = 0; i < SMALL_PAIRS; i++) {
        void *p = malloc(16);
        keep(p);
        free(p);
    }
}

__attribute__((noinline)) static void big_site(void)
{
    for (int i = 0; i < BIG_PAIRS; i++) {
        char *p = malloc(BIG_SIZE);
        if (!p) {
            exit(1);
        }
        for (int k = 0; k < TOUCHED_PAGES; k++) {
            p[(size_t)k * 4096] = 1;
        }
        keep(p);
        free(p);
    }
}

int main(void)
{
    small_site();
    big_site();
    return 0;
}
