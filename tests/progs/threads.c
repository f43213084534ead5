// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
/*
 * Target program: 4 worker threads, each making exactly 5 allocations of
 * sizes that name the thread (i = 0..3), in an order fixed by barriers,
 * a mutex and semaphores so that every figure is deterministic. Quiet,
 * exit 0.
 *
 * Worker i:
 *   phase 1, one worker at a time (mutex):
 *     malloc(11001 + i), free           temporary
 *     malloc(21001 + i)                 held
 *     calloc(1, 31001 + i)              held
 *     malloc(41001 + i)                 leaked
 *   barrier "holding": all 4 workers hold their blocks: the peak
 *   phase 2: free both held blocks
 *   barrier "released"
 *   phase 3, ping-pong inside the pairs (0,1) and (2,3), forced by
 *   semaphores: even worker mallocs 9001 + i, odd worker mallocs 9001 + i,
 *   even worker frees its block, odd worker frees its block.
 *   Per thread each block is freed by the thread's next allocation event,
 *   so both are temporaries; in the process-wide order neither is.
 *
 * Expected (memrec definitions, the program's own calls, all threads):
 * allocations 20, temporary 8 (4 from phase 1, 4 from phase 3), peak
 * 372030 (sum of (21001 + i) + (31001 + i) + (41001 + i)), leaked 164010
 * bytes in 4 blocks (41001..41004), allocated in total 452050 bytes.
 * glibc adds allocations of its own in the main thread: pthread_create
 * callocs each new thread's dynamic thread vector (DTV); see EXPECTED.md.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdlib.h>

#define WORKERS 4

/* GCC deletes a malloc/free pair whose memory is never used; an empty asm
 * that claims to read the pointer and all memory keeps every call real. */
static inline void keep(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

/* start_line includes main, so every pthread_create (which allocates) is
 * over before any worker allocates. */
static pthread_barrier_t start_line;
static pthread_barrier_t holding;
static pthread_barrier_t released;
/* One worker at a time in phase 1, so even a profiler that counts
 * temporaries over the whole process sees each phase 1 temporary. */
static pthread_mutex_t phase1_turn = PTHREAD_MUTEX_INITIALIZER;
static sem_t your_turn[WORKERS];

static void *volatile leaked_blocks[WORKERS];

static int phase1(size_t i, void **held_a, void **held_b)
{
    int rc = -1;
    pthread_mutex_lock(&phase1_turn);
    void *t = malloc(11001 + i);
    if (!t) {
        goto out;
    }
    keep(t);
    free(t);

    *held_a = malloc(21001 + i);
    *held_b = calloc(1, 31001 + i);
    leaked_blocks[i] = malloc(41001 + i);
    if (*held_a && *held_b && leaked_blocks[i]) {
        keep(*held_a);
        keep(*held_b);
        rc = 0;
    }
out:
    pthread_mutex_unlock(&phase1_turn);
    return rc;
}

/* Even worker: +mine, (partner: +its), -mine, (partner: -its). */
static int phase3(size_t i)
{
    size_t partner = i ^ 1;
    int rc = 0;
    if (i % 2 == 0) {
        void *mine = malloc(9001 + i);
        keep(mine);
        sem_post(&your_turn[partner]);
        sem_wait(&your_turn[i]);
        free(mine);
        sem_post(&your_turn[partner]);
        rc = mine ? 0 : -1;
    } else {
        sem_wait(&your_turn[i]);
        void *mine = malloc(9001 + i);
        keep(mine);
        sem_post(&your_turn[partner]);
        sem_wait(&your_turn[i]);
        free(mine);
        rc = mine ? 0 : -1;
    }
    return rc;
}

static void *worker(void *arg)
{
    size_t i = (size_t)(uintptr_t)arg;
    void *held_a = NULL;
    void *held_b = NULL;

    pthread_barrier_wait(&start_line);
    int rc = phase1(i, &held_a, &held_b);
    pthread_barrier_wait(&holding);
    free(held_a);
    free(held_b);
    pthread_barrier_wait(&released);
    if (phase3(i) < 0) {
        rc = -1;
    }
    return rc == 0 ? NULL : arg;
}

int main(void)
{
    pthread_t tids[WORKERS];

    if (pthread_barrier_init(&start_line, NULL, WORKERS + 1) != 0 ||
        pthread_barrier_init(&holding, NULL, WORKERS) != 0 ||
        pthread_barrier_init(&released, NULL, WORKERS) != 0) {
        return 1;
    }
    for (size_t i = 0; i < WORKERS; i++) {
        if (sem_init(&your_turn[i], 0, 0) != 0) {
            return 1;
        }
    }
    for (size_t i = 0; i < WORKERS; i++) {
        if (pthread_create(&tids[i], NULL, worker, (void *)(uintptr_t)i) != 0) {
            return 1;
        }
    }
    pthread_barrier_wait(&start_line);

    int status = 0;
    for (size_t i = 0; i < WORKERS; i++) {
        void *result = NULL;
        if (pthread_join(tids[i], &result) != 0 || result != NULL) {
            status = 1;
        }
    }
    return status;
}
