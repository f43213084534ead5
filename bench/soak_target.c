// SPDX-License-Identifier: MIT
/* The program bench/soak.py runs: THREADS workers (argv[1]) each make
 * ROUNDS rounds (argv[2]; 0: until SECONDS, argv[3], have passed) of
 *   p = soak_alloc(size)       malloc, 1 call
 *   p = soak_realloc(p, size2) realloc, 1 call
 *   hand p to the next worker, which frees it (a cross-thread free)
 * with sizes from a per-thread xorshift generator (1 to 8192 bytes), each
 * block filled with its owner's byte and checked by the thread that frees
 * it. Meanwhile a storm thread forks a child every 20 ms (the child
 * allocates and frees 100 blocks and _exits) and sends SIGUSR1 to a
 * random worker every 200 us (the handler only counts). At the end it
 * prints "rounds R calls C" (C = 2 * R, the calls through soak_alloc and
 * soak_realloc) and exits 0, or 3 when a block was found changed, 4 when a
 * fork failed to finish. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXT 16
#define RING 256

struct inbox {
    pthread_mutex_t mu;
    unsigned char *item[RING];
    size_t size[RING];
    int head, tail;
};

static struct inbox boxes[MAXT];
static int nthreads;
static long rounds_each;
static double seconds;
static atomic_int stop, corrupt, fork_failed;
static atomic_long total_rounds, signals;
static atomic_int finished; /* workers done with their rounds */
static pthread_t tids[MAXT];

__attribute__((noinline)) static void *soak_alloc(size_t n)
{
    return malloc(n);
}

__attribute__((noinline)) static void *soak_realloc(void *p, size_t n)
{
    return realloc(p, n);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void check_free(unsigned char *p, size_t n, int owner)
{
    if (p[0] != (unsigned char)(owner + 1) || p[n - 1] != (unsigned char)(owner + 1)) {
        atomic_store(&corrupt, 1);
    }
    free(p);
}

/* Frees what the previous worker handed over; blocks carry their owner in
 * the size's top byte. */
static void drain(int id)
{
    struct inbox *b = &boxes[id];
    pthread_mutex_lock(&b->mu);
    while (b->tail != b->head) {
        size_t s = b->size[b->tail];
        check_free(b->item[b->tail], s & 0xffffff, (int)(s >> 24));
        b->tail = (b->tail + 1) % RING;
    }
    pthread_mutex_unlock(&b->mu);
}

static void hand_over(int to, unsigned char *p, size_t n, int owner)
{
    struct inbox *b = &boxes[to];
    for (;;) {
        pthread_mutex_lock(&b->mu);
        int next = (b->head + 1) % RING;
        if (next != b->tail) {
            b->item[b->head] = p;
            b->size[b->head] = n | ((size_t)owner << 24);
            b->head = next;
            pthread_mutex_unlock(&b->mu);
            return;
        }
        pthread_mutex_unlock(&b->mu);
        drain(owner); /* the ring is full: make progress on ours meanwhile */
        sched_yield();
    }
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    uint32_t x = 88172645u + (uint32_t)id * 2654435761u;
    double end = now() + seconds;
    long r = 0;
    for (; rounds_each ? r < rounds_each : (r % 256 != 0 || now() < end); r++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        size_t n1 = 1 + x % 8192, n2 = 1 + (x >> 13) % 8192;
        unsigned char *p = soak_alloc(n1);
        p[0] = p[n1 - 1] = (unsigned char)(id + 1);
        unsigned char *q = soak_realloc(p, n2);
        q[0] = q[n2 - 1] = (unsigned char)(id + 1);
        hand_over((id + 1) % nthreads, q, n2, id);
        if (r % 16 == 0) {
            drain(id);
        }
    }
    atomic_fetch_add(&total_rounds, r);
    /* The previous worker may still be handing blocks over. */
    atomic_fetch_add(&finished, 1);
    while (atomic_load(&finished) < nthreads) {
        drain(id);
        sched_yield();
    }
    return NULL;
}

static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add(&signals, 1);
}

static void *storm(void *arg)
{
    (void)arg;
    uint32_t x = 12345;
    double next_fork = now();
    while (!atomic_load(&stop)) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        if (atomic_load(&finished) == 0) {
            pthread_kill(tids[x % (uint32_t)nthreads], SIGUSR1);
        }
        if (now() >= next_fork) {
            next_fork = now() + 0.02;
            pid_t c = fork();
            if (c == 0) {
                void *v[100];
                for (int i = 0; i < 100; i++) {
                    v[i] = malloc(100 + (size_t)i);
                }
                for (int i = 0; i < 100; i++) {
                    free(v[i]);
                }
                _exit(0);
            }
            int st;
            if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                atomic_store(&fork_failed, 1);
            }
        }
        usleep(200);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: soak_target THREADS ROUNDS SECONDS\n");
        return 2;
    }
    nthreads = atoi(argv[1]);
    rounds_each = atol(argv[2]);
    seconds = atof(argv[3]);
    if (nthreads < 2 || nthreads > MAXT) {
        return 2;
    }
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    for (int i = 0; i < nthreads; i++) {
        pthread_mutex_init(&boxes[i].mu, NULL);
    }
    for (int i = 0; i < nthreads; i++) {
        pthread_create(&tids[i], NULL, worker, (void *)(intptr_t)i);
    }
    pthread_t st;
    pthread_create(&st, NULL, storm, NULL);
    for (int i = 0; i < nthreads; i++) {
        pthread_join(tids[i], NULL);
    }
    atomic_store(&stop, 1);
    pthread_join(st, NULL);
    for (int i = 0; i < nthreads; i++) {
        drain(i);
    }
    long r = atomic_load(&total_rounds);
    printf("rounds %ld calls %ld signals %ld\n", r, 2 * r, (long)atomic_load(&signals));
    if (atomic_load(&corrupt)) {
        return 3;
    }
    return atomic_load(&fork_failed) ? 4 : 0;
}
