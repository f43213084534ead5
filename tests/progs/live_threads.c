// SPDX-License-Identifier: MIT
/*
 * Target program for the times of threads still running at exit
 * (tests/integration/test_time.py): two threads each allocate one block of
 * 100 bytes (so the recorder has a buffer for them), burn their own CPU
 * time until it reaches 60 ms, say so, and then block for good; main
 * waits until both have said so and calls exit(0) while they are still
 * alive, their blocks never freed.
 *
 * Expected: three threads; main's lifetime and CPU time said as it exits;
 * each worker's CPU time read by the exiting thread from the worker's CPU
 * clock: at least 60 ms, and little more (the thread blocks after it said
 * so), never above its lifetime. Their two 100-byte blocks are leaked
 * (besides the blocks libc allocates for each thread). Quiet, exit 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define BURN_NS 60000000ull

static sem_t burnt;

static uint64_t own_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void *worker(void *arg)
{
    (void)arg;
    void *volatile block = malloc(100);
    (void)block;
    volatile uint64_t spin = 0;
    while (own_cpu_ns() < BURN_NS) {
        for (int i = 0; i < 10000; i++) {
            spin = spin + 1;
        }
    }
    sem_post(&burnt);
    for (;;) {
        pause();
    }
    return NULL;
}

int main(void)
{
    pthread_t th[2];
    sem_init(&burnt, 0, 0);
    for (int i = 0; i < 2; i++) {
        if (pthread_create(&th[i], NULL, worker, NULL) != 0) {
            return 1;
        }
    }
    for (int i = 0; i < 2; i++) {
        while (sem_wait(&burnt) != 0) {
        }
    }
    exit(0);
}
