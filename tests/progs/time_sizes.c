// SPDX-License-Identifier: MIT
/*
 * Target program for memrec --time (test_time.py): one call site makes
 * 200,000 malloc(20)/free pairs, another 2,000 malloc(41943041)/free pairs
 * (40 MiB and a byte: above glibc's largest mmap threshold, 32 MiB, so
 * each is an mmap and a munmap). The large calls must take far longer in
 * the allocator than the small ones.
 *
 * With the argument "thread", a thread started first makes 50,000
 * malloc(30)/free pairs and ends before the sites run (its THREAD_TIMES:
 * its time in the allocator is part of its lifetime).
 *
 * Expected: 200,000 allocations of 20 bytes, 2,000 of 41943041 bytes (and
 * 50,000 of 30 with "thread"), each freed at once (temporaries); exit 0.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* GCC deletes a malloc/free pair whose memory is never used; an empty asm
 * that claims to read the pointer and all memory keeps every call real. */
static inline void keep(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

static __attribute__((noinline)) void small_site(void)
{
    for (int i = 0; i < 200000; i++) {
        void *p = malloc(20);
        if (!p) {
            exit(1);
        }
        keep(p);
        free(p);
    }
}

static __attribute__((noinline)) void big_site(void)
{
    for (int i = 0; i < 2000; i++) {
        void *p = malloc(41943041);
        if (!p) {
            exit(1);
        }
        keep(p);
        free(p);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 50000; i++) {
        void *p = malloc(30);
        if (!p) {
            exit(1);
        }
        keep(p);
        free(p);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "thread") == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0) {
            return 1;
        }
    }
    small_site();
    big_site();
    return 0;
}
