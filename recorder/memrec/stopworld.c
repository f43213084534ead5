// SPDX-License-Identifier: MIT
/* Stopping a process's threads with ptrace (stopworld.h). PTRACE_SEIZE
 * does not stop a thread by itself, and PTRACE_INTERRUPT stops it without
 * a signal the program could see; a thread that was about to take a
 * signal stops on it instead, and gets it back when it goes on. A system
 * call it was in is restarted as after any ptrace stop (a few, epoll_wait
 * among them, return EINTR then, as under a debugger or LeakSanitizer's
 * own stop: docs/definitions.md, "Reachability"). Bounded: a thread that
 * does not stop by the deadline ends the attempt. Part of memrec. */
#define _GNU_SOURCE
#include "stopworld.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>

#include "util.h"

_Static_assert(sizeof(struct user_regs_struct) == STOPWORLD_NREGS * sizeof(uint64_t), "stopworld: registers");

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int known(const struct stopworld *sw, pid_t tid)
{
    for (size_t i = 0; i < sw->n; i++) {
        if (sw->tids[i] == tid) {
            return 1;
        }
    }
    return 0;
}

static void add(struct stopworld *sw, pid_t tid)
{
    if (sw->n == sw->cap) {
        size_t cap = sw->cap;
        xgrow((void **)&sw->tids, &cap, sw->n + 1, sizeof *sw->tids);
        cap = sw->cap;
        xgrow((void **)&sw->sig, &cap, sw->n + 1, sizeof *sw->sig);
        cap = sw->cap;
        xgrow((void **)&sw->sp, &cap, sw->n + 1, sizeof *sw->sp);
        sw->regs = xrealloc(sw->regs, cap * STOPWORLD_NREGS * sizeof *sw->regs);
        sw->cap = cap;
    }
    sw->tids[sw->n] = tid;
    sw->sig[sw->n] = 0;
    sw->sp[sw->n] = 0;
    sw->n++;
}

static void drop(struct stopworld *sw, size_t i)
{
    sw->n--;
    sw->tids[i] = sw->tids[sw->n];
    sw->sig[i] = sw->sig[sw->n];
    sw->sp[i] = sw->sp[sw->n];
    memcpy(sw->regs + i * STOPWORLD_NREGS, sw->regs + sw->n * STOPWORLD_NREGS, STOPWORLD_NREGS * sizeof *sw->regs);
}

/* Wait for thread i's stop. Returns 1 stopped, 0 gone (it exited), -1 not
 * stopped by the deadline. */
static int wait_stop(struct stopworld *sw, size_t i, uint64_t deadline)
{
    for (;;) {
        int st;
        pid_t r = waitpid(sw->tids[i], &st, __WALL | WNOHANG);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            return 0; /* ECHILD: no longer ours to wait for, it ended */
        }
        if (r == sw->tids[i]) {
            if (WIFEXITED(st) || WIFSIGNALED(st)) {
                return 0;
            }
            if (WIFSTOPPED(st)) {
                if ((st >> 16) != PTRACE_EVENT_STOP) {
                    /* On its way to a signal: it gets it when let go. */
                    sw->sig[i] = WSTOPSIG(st);
                }
                return 1;
            }
        }
        if (now_ns() > deadline) {
            return -1;
        }
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
}

/* A thread that ended but is not reaped yet: a main thread that called
 * pthread_exit() stays a zombie until the last thread ends. It cannot be
 * seized, and it has no stack or registers left to read. */
static int is_zombie(pid_t pid, pid_t tid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
    FILE *f = fopen(path, "re");
    if (!f) {
        return 1; /* gone */
    }
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *e = strrchr(buf, ')'); /* the name may hold anything but ends at the last ')' */
    return e && (e[1] == ' ') && (e[2] == 'Z' || e[2] == 'X');
}

/* One pass over /proc/PID/task: seize and stop the threads not stopped
 * yet. Returns how many were new, or -1 with `why`. */
static int stop_new(struct stopworld *sw, uint64_t deadline, char *why, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)sw->pid);
    DIR *d = opendir(path);
    if (!d) {
        snprintf(why, cap, "cannot list its threads: %s", strerror(errno));
        return -1;
    }
    int added = 0;
    struct dirent *e;
    size_t first = sw->n;
    while ((e = readdir(d)) != NULL) {
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid <= 0 || known(sw, tid)) {
            continue;
        }
        if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0) {
            int err = errno;
            if (err == ESRCH || (err == EPERM && is_zombie(sw->pid, tid))) {
                continue; /* it ended */
            }
            errno = err;
            snprintf(why, cap, "cannot stop thread %d: %s", (int)tid, strerror(errno));
            closedir(d);
            return -1;
        }
        add(sw, tid);
        ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
        added++;
    }
    closedir(d);
    for (size_t i = first; i < sw->n;) {
        int w = wait_stop(sw, i, deadline);
        if (w < 0) {
            snprintf(why, cap, "thread %d did not stop in time", (int)sw->tids[i]);
            return -1;
        }
        if (w == 0) {
            drop(sw, i);
            continue;
        }
        struct user_regs_struct regs;
        if (ptrace(PTRACE_GETREGS, sw->tids[i], NULL, &regs) != 0) {
            /* Killed while stopped (the process is ending): nothing to read. */
            memset(&regs, 0, sizeof regs);
        }
        memcpy(sw->regs + i * STOPWORLD_NREGS, &regs, sizeof regs);
        sw->sp[i] = regs.rsp;
        i++;
    }
    return added;
}

int stopworld_stop(struct stopworld *sw, pid_t pid, uint64_t deadline_ns, char *why, size_t cap)
{
    memset(sw, 0, sizeof *sw);
    sw->pid = pid;
    /* A thread stopped cannot start another: once a pass finds none new,
     * every thread is stopped. */
    for (int pass = 0; pass < 64; pass++) {
        int k = stop_new(sw, deadline_ns, why, cap);
        if (k < 0) {
            stopworld_resume(sw);
            return -1;
        }
        if (k == 0 && sw->n) {
            return 0;
        }
        if (k == 0) {
            snprintf(why, cap, "it has no thread left");
            stopworld_resume(sw);
            return -1;
        }
    }
    snprintf(why, cap, "it keeps starting threads");
    stopworld_resume(sw);
    return -1;
}

void stopworld_resume(struct stopworld *sw)
{
    for (size_t i = 0; i < sw->n; i++) {
        if (ptrace(PTRACE_DETACH, sw->tids[i], NULL, (void *)(uintptr_t)sw->sig[i]) == 0 || errno != ESRCH) {
            continue;
        }
        /* Seized but not stopped yet (it did not stop in time): detach it
         * once it stops, waiting a second at most; past that it goes on
         * when memrec ends, which detaches every thread it traces. */
        for (int tries = 0; tries < 10000; tries++) {
            int st;
            pid_t r = waitpid(sw->tids[i], &st, __WALL | WNOHANG);
            if (r == sw->tids[i] && WIFSTOPPED(st)) {
                int sig = (st >> 16) == PTRACE_EVENT_STOP ? 0 : WSTOPSIG(st);
                ptrace(PTRACE_DETACH, sw->tids[i], NULL, (void *)(uintptr_t)sig);
                break;
            }
            if (r != 0) {
                break; /* gone */
            }
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
    }
    free(sw->tids);
    free(sw->sig);
    free(sw->sp);
    free(sw->regs);
    memset(sw, 0, sizeof *sw);
}

ssize_t stopworld_readv(void *ctx, const struct iovec *local, const struct iovec *remote, unsigned long n)
{
    const struct stopworld *sw = ctx;
    ssize_t k;
    /* Through a live thread: a main thread that ended (pthread_exit) has
     * no memory of its own any more, the process's is the threads'. */
    pid_t via = sw->n ? sw->tids[0] : sw->pid;
    do {
        k = process_vm_readv(via, local, n, remote, n, 0);
    } while (k < 0 && errno == EINTR);
    return k;
}
