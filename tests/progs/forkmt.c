// SPDX-License-Identifier: MIT
/*
 * Target program: fork() in a multi-threaded program while the other
 * threads allocate. 4 worker threads each make 50,000 rounds of
 * malloc(2001) + free. Meanwhile the main thread forks 20 times, each time
 * once the workers have made another 1/25 of their rounds between them, so
 * every fork happens while they allocate (some of them may hold a lock of
 * the allocator or of the recorder at that moment); 1000 rounds before
 * their end, the workers wait for the last fork. Each child makes 3
 * malloc(4001) and frees them, then ends with _exit(0) (even forks) or
 * exit(0) (odd ones); the parent keeps one malloc(3001) per fork and waits
 * for each child. Exit status 0 when every child exited with 0, 1 if not.
 *
 * Expected in the parent's recording: the workers' site 200,000
 * allocations of 2001 bytes, all freed; main's site 20 allocations of
 * 3001 bytes, all leaked (60020 bytes); none of the children's 4001-byte
 * blocks (a child is not recorded); plus one calloc per pthread_create
 * (glibc's thread vector, see EXPECTED.md), found by its stack.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define THREADS 4
#define ROUNDS 50000
#define FORKS 20
#define STEP (THREADS * ROUNDS / (FORKS + 5))

static atomic_long progress;
static atomic_int forks_done;
static void *volatile kept[FORKS];

static inline void keep(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

__attribute__((noinline)) static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        if (i == ROUNDS - 1000) {
            /* Not done before the forks are: the last ones too must find
             * threads allocating. */
            while (atomic_load(&forks_done) < FORKS) {
                struct timespec nap = {0, 20 * 1000};
                nanosleep(&nap, NULL);
            }
        }
        void *p = malloc(2001);
        keep(p);
        free(p);
        atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
    }
    return NULL;
}

__attribute__((noinline)) static void child_work(int k)
{
    void *p[3];
    for (int i = 0; i < 3; i++) {
        p[i] = malloc(4001);
        keep(p[i]);
    }
    for (int i = 0; i < 3; i++) {
        free(p[i]);
    }
    if (k % 2 == 0) {
        _exit(0);
    }
    exit(0);
}

__attribute__((noinline)) static void *keep_one(void)
{
    void *p = malloc(3001);
    keep(p); /* after the call: no tail call, keep_one stays on the stack */
    return p;
}

int main(void)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        if (pthread_create(&t[i], NULL, worker, NULL) != 0) {
            return 1;
        }
    }
    int bad = 0;
    for (int k = 0; k < FORKS; k++) {
        while (atomic_load(&progress) < (long)(k + 1) * STEP) {
            struct timespec nap = {0, 20 * 1000};
            nanosleep(&nap, NULL);
        }
        kept[k] = keep_one();
        pid_t pid = fork();
        if (pid < 0) {
            bad = 1;
            atomic_fetch_add(&forks_done, 1);
            continue;
        }
        if (pid == 0) {
            child_work(k);
        }
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            bad = 1;
        }
        atomic_fetch_add(&forks_done, 1);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
    }
    return bad;
}
