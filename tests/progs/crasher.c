// SPDX-License-Identifier: MIT
/*
 * Target program that dies abruptly, for the crash tests. No stdio.
 *
 * usage: crasher MODE, MODE one of
 *   segv      write through a NULL pointer (SIGSEGV)
 *   abort     abort() (SIGABRT)
 *   realloc   realloc() of a pointer the allocator never handed out: glibc
 *             aborts inside realloc, while the recorder holds its buffer
 *   kill      sleep 300 ms (many flush periods), then raise(SIGKILL)
 *   killnow   raise(SIGKILL) at once: nothing in the process can send the
 *             events its threads' buffers hold
 *   wait      write "ready PID\n" on stdout, then wait for a SIGKILL from
 *             outside (the test's)
 *   _exit     _exit(3)
 *   handled   installs its own SIGSEGV handler, which ends with _exit(5),
 *             then writes through a NULL pointer (the program's handler
 *             replaces the recorder's)
 *
 * Steps, the same in every mode:
 *   1. site_a: 1000 x malloc(100); frees 400 of them (i % 5 < 2)
 *   2. site_b: 500 x malloc(200); frees 100 of them (i % 5 == 0)
 *   3. a second thread: site_thread makes 7 x malloc(700), then the thread
 *      waits forever (its events are still in its buffer, never flushed
 *      by a thread exit)
 *   4. site_last: 3 x malloc(3000), right before the end (no flush period
 *      passes in between, except in modes kill and wait)
 *   5. the end chosen by MODE.
 * Expected, besides the calloc of glibc's thread vector in pthread_create
 * (see EXPECTED.md): allocations 1510, frees 500, peak 160000 bytes (after
 * step 2's mallocs: 600 x 100 + 500 x 200), still live at the end 153900
 * bytes in 1010 blocks (600 x 100 + 400 x 200 + 7 x 700 + 3 x 3000),
 * allocated in total 213900 bytes. The failed realloc of mode realloc is no
 * allocation.
 * Exit status 2 on a bad argument.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define A_COUNT 1000
#define B_COUNT 500
#define LAST_COUNT 3
#define THREAD_COUNT 7

static void *volatile blocks_a[A_COUNT];
static void *volatile blocks_b[B_COUNT];
static void *volatile blocks_last[LAST_COUNT];
static void *volatile blocks_thread[THREAD_COUNT];
static atomic_int thread_done;

__attribute__((noinline)) static void site_a(void)
{
    for (int i = 0; i < A_COUNT; i++) {
        blocks_a[i] = malloc(100);
    }
    for (int i = 0; i < A_COUNT; i++) {
        if (i % 5 < 2) {
            free(blocks_a[i]);
            blocks_a[i] = NULL;
        }
    }
}

__attribute__((noinline)) static void site_b(void)
{
    for (int i = 0; i < B_COUNT; i++) {
        blocks_b[i] = malloc(200);
    }
    for (int i = 0; i < B_COUNT; i++) {
        if (i % 5 == 0) {
            free(blocks_b[i]);
            blocks_b[i] = NULL;
        }
    }
}

__attribute__((noinline)) static void site_thread(void)
{
    for (int i = 0; i < THREAD_COUNT; i++) {
        blocks_thread[i] = malloc(700);
    }
}

static void *second_thread(void *arg)
{
    (void)arg;
    site_thread();
    atomic_store(&thread_done, 1);
    for (;;) {
        pause();
    }
}

__attribute__((noinline)) static void site_last(void)
{
    for (int i = 0; i < LAST_COUNT; i++) {
        blocks_last[i] = malloc(3000);
    }
}

static void on_segv(int sig)
{
    (void)sig;
    _exit(5);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        return 2;
    }
    const char *mode = argv[1];
    if (strcmp(mode, "segv") && strcmp(mode, "abort") && strcmp(mode, "realloc") && strcmp(mode, "kill") &&
        strcmp(mode, "killnow") && strcmp(mode, "wait") && strcmp(mode, "_exit") && strcmp(mode, "handled")) {
        return 2;
    }
    if (strcmp(mode, "handled") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_segv;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, NULL);
    }
    site_a();
    site_b();
    pthread_t t;
    if (pthread_create(&t, NULL, second_thread, NULL) != 0) {
        return 1;
    }
    while (!atomic_load(&thread_done)) {
        sched_yield();
    }
    site_last();
    if (strcmp(mode, "segv") == 0 || strcmp(mode, "handled") == 0) {
        volatile int *volatile nowhere = NULL;
        *nowhere = 1;
    } else if (strcmp(mode, "abort") == 0) {
        abort();
    } else if (strcmp(mode, "realloc") == 0) {
        /* One byte into a live block is no chunk of glibc's: "realloc():
         * invalid pointer", then abort() from inside realloc. */
        void *volatile bad = (char *)blocks_last[0] + 1;
        blocks_last[0] = realloc(bad, 5000);
    } else if (strcmp(mode, "kill") == 0) {
        struct timespec wait = {0, 300 * 1000000L};
        nanosleep(&wait, NULL);
        raise(SIGKILL);
    } else if (strcmp(mode, "killnow") == 0) {
        raise(SIGKILL);
    } else if (strcmp(mode, "wait") == 0) {
        /* "ready PID\n", without stdio (it allocates). */
        char line[32] = "ready ";
        char digits[16];
        int n = 0, len = 6;
        for (unsigned pid = (unsigned)getpid(); pid || !n; pid /= 10) {
            digits[n++] = (char)('0' + pid % 10);
        }
        while (n) {
            line[len++] = digits[--n];
        }
        line[len++] = '\n';
        if (write(1, line, (size_t)len) != (ssize_t)len) {
            return 1;
        }
        for (;;) {
            pause();
        }
    } else {
        _exit(3);
    }
    return 1; /* not reached */
}
