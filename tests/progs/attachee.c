// SPDX-License-Identifier: MIT
/* A running server for memrec --pid: four threads allocate and free all
 * the time (thread i through worker_alloc with blocks of 100 + i bytes,
 * each thread keeping its last 64 blocks), the main thread loads
 * argv[1] (tests/progs' libplugin.so) with dlopen after SIGUSR1, maps 1 MiB
 * of anonymous memory then (kept), and calls plugin_work() every 20 ms. It prints "ready" when it runs and,
 * on SIGTERM, checks its own state and exits 0, or 3 if a worker saw a
 * corrupted block. It never preloads anything: memrec attaches to it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define THREADS 4
#define KEEP 64

static volatile sig_atomic_t want_plugin, stop;
static volatile int corrupt;
static volatile unsigned long rounds[THREADS];

__attribute__((noinline)) static unsigned char *worker_alloc(size_t n)
{
    return malloc(n);
}

static void *worker(void *arg)
{
    int id = (int)(long)arg;
    size_t n = 100 + (size_t)id;
    unsigned char *kept[KEEP] = {0};
    for (unsigned long r = 0; !stop; r++) {
        for (int k = 0; k < 100; k++) {
            unsigned char *p = worker_alloc(n);
            memset(p, id + 1, n);
            int slot = (int)((r * 100 + (unsigned long)k) % KEEP);
            if (kept[slot] && (kept[slot][0] != id + 1 || kept[slot][n - 1] != id + 1)) {
                corrupt = 1;
            }
            free(kept[slot]);
            kept[slot] = p;
        }
        rounds[id] = r;
        usleep(200);
    }
    for (int i = 0; i < KEEP; i++) {
        free(kept[i]);
    }
    return NULL;
}

static void on_usr1(int sig)
{
    (void)sig;
    want_plugin = 1;
}

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        return 2;
    }
    signal(SIGUSR1, on_usr1);
    signal(SIGTERM, on_term);
    pthread_t th[THREADS];
    for (long i = 0; i < THREADS; i++) {
        pthread_create(&th[i], NULL, worker, (void *)i);
    }
    printf("ready\n");
    fflush(stdout);
    void *lib = NULL;
    void *(*work)(void) = NULL;
    while (!stop) {
        if (want_plugin && !lib) {
            void *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m != MAP_FAILED) {
                memset(m, 1, 4096);
            }
            lib = dlopen(argv[1], RTLD_NOW);
            work = lib ? (void *(*)(void))dlsym(lib, "plugin_work") : NULL;
            printf(work ? "plugin loaded\n" : "plugin failed\n");
            fflush(stdout);
        }
        if (work) {
            free(work());
        }
        usleep(20 * 1000);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
    }
    for (int i = 0; i < THREADS; i++) {
        if (rounds[i] == 0) {
            return 4;
        }
    }
    return corrupt ? 3 : 0;
}
