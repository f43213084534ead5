// SPDX-License-Identifier: MIT
/* A server whose memory grows (test_growth.py): fill_cache() allocates 40
 * blocks of 50,001 bytes once at the start and keeps them; it then prints
 * "ready" and, every 10 ms for argv[1] seconds (default 5) or until
 * SIGTERM, leak_site() keeps blocks of 2,000 bytes so that it has leaked
 * 100,000 bytes for every second since "ready" (counted by the clock, so
 * late ticks catch up: the rate is exactly 100 KB/s); churn() allocates
 * and frees 30 blocks of 3,001 bytes; sawtooth_step() keeps one block of
 * 10,001 bytes per tick and frees them all every 26th tick (live bytes go
 * from 10,001 up to 250,025 and back every 0.25 s). It exits with status
 * argv[2] (default 0) with the sawtooth freed and the leak and the cache
 * kept. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CACHE_BLOCKS 40
#define LEAK_SIZE 2000
#define LEAK_PER_S 100000
#define SAW_KEEP 25

static volatile sig_atomic_t stop;
void *cache[CACHE_BLOCKS]; /* not static: the compiler must keep what is stored */
#define LEAK_MAX (1 << 20) /* 10,485 s of leaking */
void *leaked[LEAK_MAX];
static size_t nleaked;
static char *volatile churned; /* so that the compiler keeps malloc and free */
void *saw[SAW_KEEP];
static int nsaw;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void fill_cache(void)
{
    for (int i = 0; i < CACHE_BLOCKS; i++) {
        cache[i] = malloc(50001);
        memset(cache[i], 1, 50001);
    }
}

__attribute__((noinline)) static void leak_site(void)
{
    if (nleaked == LEAK_MAX) {
        return;
    }
    leaked[nleaked] = malloc(LEAK_SIZE);
    memset(leaked[nleaked], 2, LEAK_SIZE);
    nleaked++;
}

__attribute__((noinline)) static void churn(void)
{
    for (int i = 0; i < 30; i++) {
        churned = malloc(3001);
        churned[0] = (char)i;
        free(churned);
    }
}

__attribute__((noinline)) static void sawtooth_step(void)
{
    if (nsaw == SAW_KEEP) {
        for (int i = 0; i < nsaw; i++) {
            free(saw[i]);
        }
        nsaw = 0;
    }
    saw[nsaw] = malloc(10001);
    memset(saw[nsaw], 3, 10001);
    nsaw++;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 5.0;
    signal(SIGTERM, on_term);
    fill_cache();
    printf("ready\n");
    fflush(stdout);
    double start = now_s();
    struct timespec tick = {0, 10 * 1000 * 1000};
    for (;;) {
        double t = now_s() - start;
        if (t >= seconds || stop) {
            break;
        }
        size_t want = (size_t)(t * LEAK_PER_S / LEAK_SIZE);
        while (nleaked < want) {
            leak_site();
        }
        churn();
        sawtooth_step();
        nanosleep(&tick, NULL);
    }
    for (int i = 0; i < nsaw; i++) {
        free(saw[i]);
    }
    return argc > 2 ? atoi(argv[2]) : 0;
}
