// SPDX-License-Identifier: MIT
/* A program whose only thread is blocked in a system call, for memrec
 * --pid. argv[1] says where: "read" (from stdin), "accept" (on a TCP
 * socket of 127.0.0.1, whose port it prints), "futex" (pthread_cond_wait;
 * a second thread reads stdin and signals it), "open" (opening the FIFO
 * argv[2] for reading, before any writer), or "dlopen" (inside dlopen of
 * argv[2], libidlector.so, whose constructor reads stdin: stopped in the
 * middle of dlopen, holding the loader's lock). Before blocking it
 * allocates through a few nested calls, then blocks in a function whose
 * frame it never writes: return addresses of malloc stay in that frame,
 * above the blocked call's stack pointer (bash's frames hold such words). It prints "ready" (and
 * the port), then, once woken, allocates 1000 blocks of 10001 bytes, frees
 * them, prints "done" and exits 0. Nothing else is written. With "spin" it
 * never blocks: it spins in its own code over stale malloc return
 * addresses (in wait_here()) until SIGTERM. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int woken;

__attribute__((noinline)) static void churn(int depth)
{
    void *p[8];
    for (int i = 0; i < 8; i++) {
        p[i] = malloc(16 + (size_t)i * 100);
    }
    if (depth > 0) {
        churn(depth - 1);
    }
    for (int i = 0; i < 8; i++) {
        free(p[i]);
    }
}

static void *waker(void *arg)
{
    (void)arg;
    char c;
    if (read(0, &c, 1) < 0) {
        return NULL;
    }
    pthread_mutex_lock(&mu);
    woken = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    return NULL;
}

static volatile sig_atomic_t stop_spin;

static void on_term(int sig)
{
    (void)sig;
    stop_spin = 1;
}

static void ready(void)
{
    printf("ready\n");
    fflush(stdout);
}

/* Blocks with a 4 KiB frame it never writes, as bash's do: the frame keeps
 * the return addresses into malloc that churn()'s calls left there, above
 * the stack pointer of the blocked system call. */
__attribute__((noinline)) static int wait_here(int argc, char **argv)
{
    volatile unsigned char *frame = __builtin_alloca(4096);
    frame[4095] = 0;
    const char *mode = argv[1];
    if (strcmp(mode, "read") == 0) {
        ready();
        char c;
        if (read(0, &c, 1) != 1) {
            return 4;
        }
    } else if (strcmp(mode, "accept") == 0) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof a;
        if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 1) != 0 ||
            getsockname(s, (struct sockaddr *)&a, &len) != 0) {
            return 4;
        }
        printf("port %d\n", ntohs(a.sin_port));
        ready();
        int c = accept(s, NULL, NULL);
        if (c < 0) {
            return 4;
        }
        close(c);
        close(s);
    } else if (strcmp(mode, "futex") == 0) {
        pthread_t th;
        pthread_create(&th, NULL, waker, NULL);
        ready();
        pthread_mutex_lock(&mu);
        while (!woken) {
            pthread_cond_wait(&cv, &mu);
        }
        pthread_mutex_unlock(&mu);
        pthread_join(th, NULL);
    } else if (strcmp(mode, "open") == 0 && argc > 2) {
        ready();
        int fd = open(argv[2], O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            return 4;
        }
        close(fd);
    } else if (strcmp(mode, "dlopen") == 0 && argc > 2) {
        ready();
        void *h = dlopen(argv[2], RTLD_NOW);
        if (!h) {
            return 4;
        }
    } else if (strcmp(mode, "spin") == 0) {
        /* Never in a system call, and the stack pointer stays just below
         * the frame holding churn()'s stale return addresses. */
        struct sigaction sa = {0};
        sa.sa_handler = on_term;
        sigaction(SIGTERM, &sa, NULL);
        ready();
        while (!stop_spin) {
            frame[4095]++;
        }
    } else {
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: idle read|accept|futex|spin|open FIFO|dlopen LIB\n");
        return 2;
    }
    churn(6);
    int rc = wait_here(argc, argv);
    if (rc != 0) {
        return rc;
    }
    void *blocks[1000];
    for (int i = 0; i < 1000; i++) {
        blocks[i] = malloc(10001);
    }
    for (int i = 0; i < 1000; i++) {
        free(blocks[i]);
    }
    printf("done\n");
    return 0;
}
