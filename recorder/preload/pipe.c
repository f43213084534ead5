// SPDX-License-Identifier: MIT
/* The pipe to memrec, for the buffers: whole batches written with one
 * write(2) each, SIGPIPE kept from the target, and the descriptor taken
 * back from the writers and fetched again when the program closes it.
 * Runs inside the target: never allocates; a lost memrec turns recording
 * off, it never stops the program. */
#define _GNU_SOURCE
#include "pipe.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "conn.h"
#include "log.h"
#include "memwire.h"
#include "options.h"

HIDDEN atomic_int rec_enabled;

/* The pipe to memrec. The program may close or replace its descriptor
 * (daemons close everything): the hooks of close() and friends call
 * pipe_fd_closing() first, which takes the descriptor away from the
 * writers (conn_fd = -1), waits for writes in progress, and leaves the
 * next write to fetch a new descriptor for the same pipe from memrec. A
 * writer announces itself in conn_writers before it reads conn_fd; the
 * closer clears conn_fd before it reads conn_writers (both sequentially
 * consistent): either the writer sees -1 or the closer waits for it. */
static atomic_int conn_fd = -1;
static atomic_int conn_writers;
static atomic_int conn_lost; /* reopen before the next write */
static atomic_int conn_reopening;
static atomic_int silent; /* pipe_silent(): the program's stderr is not ours */
/* Waiting for another thread of the recorder (a reopen, the writes in
 * progress): that thread may itself wait on a full pipe, for as long as
 * memrec does not read, so the naps grow (20 us doubling to 10 ms) rather
 * than wake the CPU thousands of times a second for nothing. */
static void nap(int *n)
{
    long us = 20L << (*n < 9 ? *n : 9);
    ++*n;
    struct timespec t = {0, us * 1000};
    nanosleep(&t, NULL);
}

/* ---- the bound on waiting for memrec (opts.max_wait_ms) ----
 *
 * With a bound, the descriptor is non-blocking: a batch that does not fit
 * waits in poll(2) for room, at most max_wait_ms, and is then dropped. From
 * the first drop on, the pipe is "stalled": a batch that does not fit is
 * dropped at once, without waiting, until one fits again (memrec reads
 * again). Each drop is counted with its time (the span memrec reports). */
HIDDEN atomic_int pipe_stalled;
static atomic_uint_fast64_t lost_events, lost_first_ms, lost_last_ms;

void pipe_count_drop(uint64_t events)
{
    uint64_t now = clock_mono_ms();
    uint64_t zero = 0;
    atomic_compare_exchange_strong(&lost_first_ms, &zero, now);
    uint64_t last = atomic_load(&lost_last_ms);
    while (last < now && !atomic_compare_exchange_weak(&lost_last_ms, &last, now)) {
    }
    atomic_fetch_add(&lost_events, events ? events : 1);
}

int pipe_probe(void)
{
    int fd = atomic_load(&conn_fd);
    struct pollfd pf = {.fd = fd, .events = POLLOUT};
    if (fd >= 0 && poll(&pf, 1, 0) == 1 && (pf.revents & POLLOUT)) {
        atomic_store(&pipe_stalled, 0);
        return 1;
    }
    return 0;
}

int pipe_lost(uint64_t *events, uint64_t *first_ms, uint64_t *last_ms)
{
    *events = atomic_load(&lost_events);
    *first_ms = atomic_load(&lost_first_ms);
    *last_ms = atomic_load(&lost_last_ms);
    return *events != 0;
}

void pipe_lost_said(uint64_t events)
{
    if (atomic_fetch_sub(&lost_events, events) == events) {
        /* Nothing more lost since: the next drop starts a new span. A drop
         * racing with this lands in this span or the next, never nowhere. */
        atomic_store(&lost_first_ms, 0);
        atomic_store(&lost_last_ms, 0);
    }
}

/* Wait in poll(2) until fd takes a write or the deadline passes: 1 room,
 * 0 timed out. No busy waiting: the thread sleeps in the kernel. */
static int wait_room(int fd, uint64_t deadline_ms)
{
    for (;;) {
        uint64_t now = clock_mono_ms();
        if (now >= deadline_ms) {
            return 0;
        }
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        int r = poll(&pf, 1, (int)(deadline_ms - now));
        if (r > 0) {
            return 1; /* room, or an error the next write reports */
        }
        if (r < 0 && errno != EINTR) {
            return 1;
        }
    }
}

/* With a bound, writes must not block: the wait is wait_room()'s. The
 * flag belongs to the open pipe, shared only with memrec's copy of this
 * end, which memrec never writes to. */
static void set_bound(int fd)
{
    if (opts.max_wait_ms >= 0) {
        int fl = fcntl(fd, F_GETFL);
        if (fl >= 0 && !(fl & O_NONBLOCK)) {
            fcntl(fd, F_SETFL, fl | O_NONBLOCK);
        }
    }
}

/* The descriptor was taken away: one writer asks memrec for a new one,
 * the others wait for it. */
static int reopen(void)
{
    if (!atomic_load(&conn_lost)) {
        return -1;
    }
    int zero = 0;
    if (!atomic_compare_exchange_strong(&conn_reopening, &zero, 1)) {
        int naps = 0;
        while (atomic_load(&conn_reopening)) {
            nap(&naps);
        }
        return atomic_load(&conn_fd);
    }
    int fd = conn_open(MEMFMT_CONN_REOPEN);
    if (fd >= 0) {
        set_bound(fd);
        atomic_store(&conn_fd, fd);
        atomic_store(&conn_lost, 0);
    } else if (atomic_exchange(&rec_enabled, 0)) {
        atomic_store(&conn_lost, 0);
        log_msg("the program closed the recorder's descriptor and memrec cannot be reached; recording stopped", NULL);
    }
    atomic_store(&conn_reopening, 0);
    return fd;
}

/* After conn_fd was cleared: no write is using the old descriptor. */
static void wait_writers(void)
{
    int naps = 0;
    while (atomic_load(&conn_writers)) {
        nap(&naps);
    }
}

void pipe_silent(int on)
{
    atomic_store(&silent, on);
}

void pipe_fd_closing(int lo, int hi)
{
    int fd = atomic_load(&conn_fd);
    if (fd < 0 || fd < lo || fd > hi) {
        return;
    }
    if (!atomic_compare_exchange_strong(&conn_fd, &fd, -1)) {
        return;
    }
    atomic_store(&conn_lost, 1);
    wait_writers();
}

/* Write one batch. SIGPIPE is blocked around the write so that a memrec
 * that died cannot kill the target; recording just stops. */
int pipe_send(const uint8_t *p, size_t n, uint32_t events)
{
    atomic_fetch_add(&conn_writers, 1);
    int fd = atomic_load(&conn_fd);
    if (fd < 0) {
        fd = reopen();
        if (fd < 0) {
            atomic_fetch_sub(&conn_writers, 1);
            return PIPE_LOST;
        }
    }
    sigset_t block, old, pending;
    sigemptyset(&block);
    sigaddset(&block, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    sigpending(&pending);
    int was_pending = sigismember(&pending, SIGPIPE);
    int rc = PIPE_SENT;
    uint64_t deadline = 0;
    for (int tries = 0;;) {
        ssize_t k = write(fd, p, n);
        if (k >= 0) {
            if (atomic_load_explicit(&pipe_stalled, memory_order_relaxed)) {
                atomic_store(&pipe_stalled, 0);
            }
            break;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno == EAGAIN) {
            /* Bounded (the descriptor is non-blocking): wait for room at
             * most max_wait_ms, or not at all once the pipe is stalled. */
            if (!deadline && !atomic_load(&pipe_stalled)) {
                deadline = clock_mono_ms() + (uint64_t)opts.max_wait_ms;
            }
            if (deadline && wait_room(fd, deadline)) {
                continue;
            }
            atomic_store(&pipe_stalled, 1);
            pipe_count_drop(events);
            rc = PIPE_DROPPED;
            break;
        }
        if (errno == EBADF && tries++ == 0) {
            /* Closed behind our back (a raw system call, not a hook). */
            if (atomic_compare_exchange_strong(&conn_fd, &fd, -1)) {
                atomic_store(&conn_lost, 1);
            }
            fd = reopen();
            if (fd >= 0) {
                continue;
            }
            rc = PIPE_LOST;
            break;
        }
        if (errno == EPIPE && !was_pending) {
            struct timespec zero = {0, 0};
            sigtimedwait(&block, NULL, &zero);
        }
        /* Attached, the program's stderr is not ours to write to: the
         * service thread disarms the recorder without a word. */
        if (atomic_exchange(&rec_enabled, 0) && !atomic_load(&silent)) {
            log_msg("lost the connection to memrec; recording stopped", NULL);
        }
        rc = PIPE_LOST;
        break;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    atomic_fetch_sub(&conn_writers, 1);
    return rc;
}

void pipe_open(int fd)
{
    set_bound(fd);
    atomic_store(&pipe_stalled, 0);
    atomic_store(&conn_fd, fd);
    atomic_store(&conn_lost, 0);
}

void pipe_close(void)
{
    /* Not pipe_fd_closing(): nothing may ask memrec for a new one. */
    atomic_store(&conn_lost, 0);
    int fd = atomic_exchange(&conn_fd, -1);
    wait_writers();
    if (fd >= 0) {
        sys_close(fd);
    }
}

void pipe_forget(void)
{
    int fd = atomic_exchange(&conn_fd, -1);
    if (fd >= 0) {
        sys_close(fd);
    }
    atomic_store(&conn_lost, 0);
    atomic_store(&conn_writers, 0);
    atomic_store(&conn_reopening, 0);
    atomic_store(&pipe_stalled, 0);
    atomic_store(&lost_events, 0);
    atomic_store(&lost_first_ms, 0);
    atomic_store(&lost_last_ms, 0);
}
