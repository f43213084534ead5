// SPDX-License-Identifier: MIT
/* Target for signals sent to memrec alone (test_forward): allocates one
 * block of 10001 bytes (kept), prints "ready" and waits. With no argument,
 * SIGINT, SIGTERM or SIGHUP makes it allocate 5 blocks of 20002 bytes
 * (kept) after the signal and exit with 40 + the signal's number: memrec
 * must pass the signal on, record until the end (6 allocations, 110011
 * bytes leaked) and exit with 40 + N. With the argument "ignore" it ignores
 * the three signals and runs until SIGKILL, allocating 30003 bytes every
 * 10 ms (freed). It writes nothing else. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *volatile keep[6];
static volatile sig_atomic_t got;

static void on_signal(int sig)
{
    got = sig;
}

int main(int argc, char **argv)
{
    int ignore = argc > 1 && strcmp(argv[1], "ignore") == 0;
    struct sigaction sa = {0};
    sa.sa_handler = ignore ? SIG_IGN : on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    keep[0] = malloc(10001);
    printf("ready\n");
    fflush(stdout);
    while (!got) {
        if (ignore) {
            free(malloc(30003));
        }
        usleep(10000);
    }
    for (int i = 1; i < 6; i++) {
        keep[i] = malloc(20002);
    }
    return 40 + got;
}
