// SPDX-License-Identifier: MIT
/* Live blocks of known reachability at the normal end (test_reach.py,
 * EXPECTED.md "reach"). Each kind comes from a function of its own, so the
 * test finds its figures by stack:
 *   hold_global     4 x 100 B held by a global array          reachable
 *   hold_inside     1 x 1000 B held by a global pointer to its middle: possibly reachable
 *   lose_last       3 x 200 B, each pointer overwritten         unreachable (direct)
 *   leak_list_head  1 x 64 B, the only pointer dropped          unreachable (direct)
 *   leak_list_node  5 x 48 B, a list hanging from that head     unreachable (indirect)
 *   on_thread_stack 1 x 300 B held only by a running thread's stack   reachable
 *   in_tls          1 x 400 B held only by that thread's TLS            reachable
 *   disguised       2 x 700 B whose addresses are stored as integers in a
 *                   reachable 1 MiB buffer: a conservative scan keeps them  reachable
 *   hidden          2 x 800 B whose addresses are stored XOR-ed           unreachable (direct)
 *   big_buffer      1 x 1 MiB held by a global                            reachable
 * It prints one line and exits with status 3 while the thread still runs.
 * "reach wait": the same blocks, made once a byte comes on stdin (after
 * memrec --pid attached), then it prints its line and waits to be killed.
 * "reach mainexit": the main thread ends with pthread_exit() first (it
 * stays a zombie until the process ends) and another thread makes the
 * blocks and calls exit(3). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* volatile: the compiler must not drop stores nothing reads (and with
 * them the mallocs). */
void *volatile held[4];
char *volatile inside;
uint64_t *volatile buffer;
__thread void *volatile tls_block;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready;

struct node {
    struct node *next;
    char pad[40];
};

__attribute__((noinline)) static void hold_global(void)
{
    for (int i = 0; i < 4; i++) {
        held[i] = malloc(100);
    }
}

__attribute__((noinline)) static void hold_inside(void)
{
    inside = (char *)malloc(1000) + 500;
}

__attribute__((noinline)) static void *lose_last(void)
{
    return malloc(200);
}

__attribute__((noinline)) static struct node *leak_list_node(struct node *next)
{
    struct node *n = malloc(sizeof *n);
    memset(n, 0, sizeof *n);
    n->next = next;
    return n;
}

__attribute__((noinline)) static void *leak_list_head(struct node *first)
{
    void **h = malloc(64);
    memset(h, 0, 64);
    h[0] = first;
    return h;
}

__attribute__((noinline)) static void *disguised(void)
{
    return malloc(700);
}

__attribute__((noinline)) static void *hidden(void)
{
    return malloc(800);
}

__attribute__((noinline)) static void big_buffer(void)
{
    buffer = malloc(1 << 20);
    /* Integers that point nowhere in the heap. */
    for (size_t i = 0; i < (1 << 20) / 8; i++) {
        buffer[i] = (uint64_t)i * 0x9E3779B97F4A7C15ull | 1;
    }
}

__attribute__((noinline)) static void *on_thread_stack(void)
{
    return malloc(300);
}

__attribute__((noinline)) static void in_tls(void)
{
    tls_block = malloc(400);
}

static void *runner(void *arg)
{
    (void)arg;
    void *volatile mine = on_thread_stack();
    in_tls();
    pthread_mutex_lock(&mu);
    ready = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    for (;;) {
        pause();
    }
    return mine;
}

/* Stack cells the calls above used still hold their pointers: clear them
 * so that only what the program keeps on purpose is found. */
__attribute__((noinline)) static void scrub_stack(void)
{
    volatile char junk[64 << 10];
    memset((char *)junk, 0, sizeof junk);
}

__attribute__((noinline)) static void build(void)
{
    hold_global();
    hold_inside();
    void *volatile p = NULL;
    for (int i = 0; i < 3; i++) {
        p = lose_last();
    }
    p = NULL;
    struct node *list = NULL;
    for (int i = 0; i < 5; i++) {
        list = leak_list_node(list);
    }
    p = leak_list_head(list);
    p = NULL;
    list = NULL;
    big_buffer();
    for (int i = 0; i < 2; i++) {
        buffer[1000 + i] = (uint64_t)(uintptr_t)disguised();
    }
    for (int i = 0; i < 2; i++) {
        buffer[2000 + i] = (uint64_t)(uintptr_t)hidden() ^ 0x5555555555555555ull;
    }
    (void)p;
}

static void *builder(void *arg)
{
    (void)arg;
    build();
    scrub_stack();
    static const char msg[] = "reach: built\n";
    ssize_t k = write(1, msg, sizeof msg - 1);
    (void)k;
    exit(3);
}

int main(int argc, char **argv)
{
    int wait = argc > 1 && strcmp(argv[1], "wait") == 0;
    pthread_t t;
    pthread_create(&t, NULL, runner, NULL);
    pthread_mutex_lock(&mu);
    while (!ready) {
        pthread_cond_wait(&cv, &mu);
    }
    pthread_mutex_unlock(&mu);
    if (argc > 1 && strcmp(argv[1], "mainexit") == 0) {
        pthread_t b;
        pthread_create(&b, NULL, builder, NULL);
        pthread_exit(NULL);
    }
    if (wait) {
        char c;
        if (read(0, &c, 1) != 1) {
            return 1;
        }
    }
    build();
    scrub_stack();
    static const char msg[] = "reach: built\n";
    ssize_t k = write(1, msg, sizeof msg - 1);
    (void)k;
    while (wait) {
        pause();
    }
    exit(3);
}
