// SPDX-License-Identifier: MIT
/*
 * Target program for test_rss_heap.py: the glibc per-thread arena situation.
 * Eight threads start together (a barrier), so each gets an arena of its
 * own; each allocates 2048 blocks of 4001 bytes, writes them (resident),
 * then frees all but every 16th (indexes 15, 31, ..., 2047: the last block
 * stays, so no heap can shrink from its top, and the free runs between kept
 * blocks cannot go back to the system). Then every thread waits while main
 * sleeps 1200 ms (memrec samples RSS and the allocator meanwhile), and they
 * end, their kept blocks never freed: a free after the sleep would give
 * a moment with no live heap that a slow exit could let count (the RSS
 * sample is stale there). No stdio, exit 0.
 *
 * Expected during the sleep: live heap 8 x 128 x 4001 = 4097024 bytes of
 * these blocks (plus the few blocks libc keeps for the threads); held free
 * by the allocator about 8 x 1920 x 4016 = 61685760 bytes (4016: the chunk
 * of a 4001-byte block), in about 8 x 128 free chunks; the RSS section
 * says the allocator holds far more free memory than the live heap.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define THREADS 8
#define BLOCKS 2048
#define SIZE 4001
#define KEEP_EVERY 16

static pthread_barrier_t start, slept, sleeping;

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void *worker(void *arg)
{
    (void)arg;
    static __thread void *blocks[BLOCKS];
    pthread_barrier_wait(&start);
    for (int i = 0; i < BLOCKS; i++) {
        blocks[i] = malloc(SIZE);
        memset(blocks[i], i & 0xff, SIZE);
    }
    for (int i = 0; i < BLOCKS; i++) {
        if (i % KEEP_EVERY != KEEP_EVERY - 1) {
            free(blocks[i]);
            blocks[i] = NULL;
        }
    }
    pthread_barrier_wait(&sleeping);
    pthread_barrier_wait(&slept);
    return NULL;
}

int main(void)
{
    pthread_t th[THREADS];
    pthread_barrier_init(&start, NULL, THREADS);
    pthread_barrier_init(&sleeping, NULL, THREADS + 1);
    pthread_barrier_init(&slept, NULL, THREADS + 1);
    for (int i = 0; i < THREADS; i++) {
        if (pthread_create(&th[i], NULL, worker, NULL) != 0) {
            return 1;
        }
    }
    pthread_barrier_wait(&sleeping);
    /* Long enough for two samples even after an unlucky one: a sample
     * that took c ns of CPU time delays the next by 200 c, and on a
     * loaded machine one call now and then takes 2 ms (a 440 ms pause)
     * even when it walks a handful of chunks. */
    pause_ms(1200);
    pthread_barrier_wait(&slept);
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
    }
    return 0;
}
