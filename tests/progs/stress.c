// SPDX-License-Identifier: MIT
/*
 * Threaded stress for the recorder's ordering: 4 rounds, each starting 6
 * threads that run at once. Every thread makes 20,000 allocations of 1000 +
 * (i % 64) bytes; each block is freed either by the thread itself at once
 * (a temporary, every 4th), or handed through a shared queue to whichever
 * thread takes it next, which frees it (cross-thread frees, so a free and
 * its allocation are recorded by different threads), with realloc on the
 * way for every 8th. Threads end and new ones start each round (kernel
 * thread ids and memrec's thread indexes are reused). Nothing is leaked by
 * the program. Expected: 4 x 6 x 20,000 = 480,000 allocations of sizes
 * 1000..1063, plus 60,000 reallocs growing a block by 7 bytes; every free
 * matched; all of the program's blocks freed.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 4
#define THREADS 6
#define PER_THREAD 20000
#define QUEUE 4096

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *queue[QUEUE];
static size_t queue_len;

static void drain_one(void)
{
    void *p = NULL;
    pthread_mutex_lock(&lock);
    if (queue_len > 0) {
        p = queue[--queue_len];
    }
    pthread_mutex_unlock(&lock);
    free(p);
}

static void *worker(void *arg)
{
    unsigned salt = (unsigned)(size_t)arg;
    for (int i = 0; i < PER_THREAD; i++) {
        char *p = malloc(1000 + (size_t)((i + salt) % 64));
        memset(p, i, 16);
        if (i % 4 == 0) {
            free(p); /* a temporary */
            continue;
        }
        if (i % 8 == 1) {
            p = realloc(p, 1000 + (size_t)((i + salt) % 64) + 7);
        }
        int queued = 0;
        pthread_mutex_lock(&lock);
        if (queue_len < QUEUE) {
            queue[queue_len++] = p;
            queued = 1;
        }
        pthread_mutex_unlock(&lock);
        if (!queued) {
            free(p);
        }
        drain_one();
    }
    return NULL;
}

int main(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        pthread_t t[THREADS];
        for (int i = 0; i < THREADS; i++) {
            if (pthread_create(&t[i], NULL, worker, (void *)(size_t)(r * THREADS + i)) != 0) {
                return 1;
            }
        }
        for (int i = 0; i < THREADS; i++) {
            pthread_join(t[i], NULL);
        }
    }
    while (queue_len > 0) {
        drain_one();
    }
    return 0;
}
