// SPDX-License-Identifier: MIT
/* A program kept busy, for memrec --pid: argv[1] threads (1 to 16) each run
 * a tight loop of malloc, realloc and free of pseudo-random sizes (1 to
 * 4096 bytes), keeping 32 blocks each, and count their rounds in the file
 * argv[2], mapped shared (one 64-byte line per thread), so that a test
 * reads the progress rate from outside without a word from the program.
 * Built twice: busy (PIE) and busy_nopie (-fno-pie -no-pie), which also
 * takes the addresses of malloc and free, so that the executable gets
 * canonical PLT entries for them (its "malloc" is its own PLT stub, as in
 * Debian's python3) and calls through those pointers every 16th round.
 * Prints "ready"; on SIGTERM it frees everything and exits 0, or 3 when a
 * block was found changed; with a third argument "_exit" it ends with
 * _exit(7) instead (3 still for a changed block), skipping exit handlers
 * and destructors. It writes nothing else. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define KEEP 32
#define MAX_THREADS 16

static volatile sig_atomic_t stop;
static volatile int corrupt;
static volatile uint64_t *counters; /* 8 words per thread */

#ifdef TAKE_ADDRESS
void *(*volatile malloc_ptr)(size_t);
void (*volatile free_ptr)(void *);
#endif

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    unsigned char *kept[KEEP] = {0};
    size_t sizes[KEEP] = {0};
    uint32_t x = 2463534242u + (uint32_t)id * 7919u;
    for (uint64_t r = 1; !stop; r++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        int k = (int)(x % KEEP);
        size_t n = 1 + (x >> 8) % 4096;
        if (kept[k]) {
            if (kept[k][0] != (unsigned char)(id + 1) || kept[k][sizes[k] - 1] != (unsigned char)(id + 1)) {
                corrupt = 1;
            }
            if (r % 4 == 0) {
                unsigned char *q = realloc(kept[k], n);
                if (q) {
                    kept[k] = q;
                    sizes[k] = n;
                    q[0] = q[n - 1] = (unsigned char)(id + 1);
                }
                counters[id * 8] = r;
                continue;
            }
#ifdef TAKE_ADDRESS
            if (r % 16 == 0) {
                free_ptr(kept[k]);
            } else {
                free(kept[k]);
            }
#else
            free(kept[k]);
#endif
        }
#ifdef TAKE_ADDRESS
        unsigned char *p = r % 16 == 0 ? malloc_ptr(n) : malloc(n);
#else
        unsigned char *p = malloc(n);
#endif
        if (p) {
            p[0] = p[n - 1] = (unsigned char)(id + 1);
        }
        kept[k] = p;
        sizes[k] = n;
        counters[id * 8] = r;
    }
    for (int k = 0; k < KEEP; k++) {
        free(kept[k]);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 && !(argc == 4 && strcmp(argv[3], "_exit") == 0)) {
        fprintf(stderr, "usage: busy THREADS COUNTERFILE [_exit]\n");
        return 2;
    }
    int n = atoi(argv[1]);
    if (n < 1 || n > MAX_THREADS) {
        return 2;
    }
    int fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || ftruncate(fd, 4096) != 0) {
        perror("busy");
        return 2;
    }
    counters = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (counters == MAP_FAILED) {
        return 2;
    }
#ifdef TAKE_ADDRESS
    /* In code, not in an initializer: non-PIE code takes the address as an
     * immediate, which is what makes the linker give the executable a
     * canonical PLT entry (an initializer would get a dynamic relocation). */
    malloc_ptr = malloc;
    free_ptr = free;
#endif
    struct sigaction sa = {0};
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    pthread_t th[MAX_THREADS];
    for (int i = 1; i < n; i++) {
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    }
    printf("ready\n");
    fflush(stdout);
    worker((void *)0);
    for (int i = 1; i < n; i++) {
        pthread_join(th[i], NULL);
    }
    if (argc == 4) {
        _exit(corrupt ? 3 : 7);
    }
    return corrupt ? 3 : 0;
}
