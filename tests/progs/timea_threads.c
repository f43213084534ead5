// SPDX-License-Identifier: MIT
/*
 * Target program for allocator time (memrec --time; tests/integration/
 * test_alloc_time.py): N threads (argv[1], at most 64) each make the same
 * M pairs (argv[2]) of malloc and free of 2,048 to 3,840 bytes, started
 * together by a barrier. Those sizes are above glibc's per-thread cache
 * (1,032 bytes), so every call takes its arena's lock: run with
 * MALLOC_ARENA_MAX=1, the threads share one arena and wait for each other,
 * and each pays more per call than one thread alone.
 *
 * Expected: N * M allocations and frees, all temporaries, each thread's
 * allocated bytes M / 8 * (8 * 2048 + 256 * 28) when M is a multiple of 8.
 * Quiet, exit 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>

#define MAX_THREADS 64

static pthread_barrier_t start;
static long pairs;

static void keep(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

__attribute__((noinline)) static void *worker(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    for (long i = 0; i < pairs; i++) {
        void *p = malloc(2048 + (size_t)(i % 8) * 256);
        keep(p);
        free(p);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1;
    pairs = argc > 2 ? atol(argv[2]) : 100000;
    if (n < 1 || n > MAX_THREADS || pairs < 1) {
        return 2;
    }
    pthread_t t[MAX_THREADS];
    pthread_barrier_init(&start, NULL, (unsigned)n);
    for (int i = 0; i < n; i++) {
        if (pthread_create(&t[i], NULL, worker, NULL) != 0) {
            return 1;
        }
    }
    for (int i = 0; i < n; i++) {
        pthread_join(t[i], NULL);
    }
    pthread_barrier_destroy(&start);
    return 0;
}
