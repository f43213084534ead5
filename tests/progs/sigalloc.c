// SPDX-License-Identifier: MIT
/*
 * Target program: a signal handler that allocates while the code it
 * interrupts is allocating too (inside malloc or free, or inside the
 * recorder). A timer (ITIMER_REAL, every 50 us) sends SIGALRM while the
 * main thread runs 200,000 rounds of malloc(100) + free; the handler makes
 * one malloc(24) + free per signal and counts its calls. At the end it
 * writes "handler N" (N = calls of the handler) on stdout.
 *
 * Natively this is only safe because of glibc's per-thread cache (tcache):
 * after the warm-up, both sizes are served from and returned to the
 * thread's cache, in two different bins (100 and 24 bytes are different
 * size classes), and no lock is taken; a handler allocating from the bin
 * the interrupted code is changing, or reaching an arena lock that code
 * holds, would corrupt the heap or deadlock. malloc is not async-signal-
 * safe in general: this program relies on how glibc is built.
 *
 * Expected: main's site makes exactly 200,000 allocations of 100 bytes, all
 * freed at once (temporaries); the handler's site at most N allocations of
 * 24 bytes (see docs/capture.md, "Signals and threads"), all freed; the
 * warm-up makes one allocation of 24 bytes. Nothing is leaked.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define ROUNDS 200000

static volatile sig_atomic_t handler_calls;

/* GCC deletes a malloc/free pair whose memory is never used; an empty asm
 * that claims to read the pointer and all memory keeps every call real. */
static inline void keep(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

__attribute__((noinline)) static void on_alarm(int sig)
{
    (void)sig;
    void *p = malloc(24);
    keep(p);
    free(p);
    handler_calls++;
}

__attribute__((noinline)) static void main_loop(void)
{
    for (int i = 0; i < ROUNDS; i++) {
        void *p = malloc(100);
        keep(p);
        free(p);
    }
}

int main(void)
{
    /* Warm-up: one 24-byte block in this thread's cache, so the handler's
     * malloc never needs an arena (and its lock). */
    void *warm = malloc(24);
    keep(warm);
    free(warm);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL) != 0) {
        return 1;
    }
    struct itimerval every = {{0, 50}, {0, 50}};
    if (setitimer(ITIMER_REAL, &every, NULL) != 0) {
        return 1;
    }
    main_loop();
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    sigprocmask(SIG_BLOCK, &block, NULL);
    /* write(2), not printf: stdio would allocate its buffer. */
    char line[32] = "handler ";
    char digits[16];
    int n = 0;
    unsigned v = (unsigned)handler_calls;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    size_t len = strlen(line);
    while (n) {
        line[len++] = digits[--n];
    }
    line[len++] = '\n';
    return write(STDOUT_FILENO, line, len) == (ssize_t)len ? 0 : 1;
}
