// SPDX-License-Identifier: MIT
/* The pipe to memrec, for the buffers: whole batches written with one
 * write(2) each, SIGPIPE kept from the target, and the descriptor taken
 * back from the writers and fetched again when the program closes it.
 * Runs inside the target: never allocates; a lost memrec turns recording
 * off, it never stops the program. */
#define _GNU_SOURCE
#include "pipe.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "conn.h"
#include "log.h"
#include "memwire.h"

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
static void nap(void)
{
    struct timespec t = {0, 50 * 1000};
    nanosleep(&t, NULL);
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
        while (atomic_load(&conn_reopening)) {
            nap();
        }
        return atomic_load(&conn_fd);
    }
    int fd = conn_open(MEMFMT_CONN_REOPEN);
    if (fd >= 0) {
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
    while (atomic_load(&conn_writers)) {
        nap();
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
void pipe_send(const uint8_t *p, size_t n)
{
    atomic_fetch_add(&conn_writers, 1);
    int fd = atomic_load(&conn_fd);
    if (fd < 0) {
        fd = reopen();
        if (fd < 0) {
            atomic_fetch_sub(&conn_writers, 1);
            return;
        }
    }
    sigset_t block, old, pending;
    sigemptyset(&block);
    sigaddset(&block, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    sigpending(&pending);
    int was_pending = sigismember(&pending, SIGPIPE);
    for (int tries = 0;;) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) {
            continue;
        }
        if (k < 0 && errno == EBADF && tries++ == 0) {
            /* Closed behind our back (a raw system call, not a hook). */
            if (atomic_compare_exchange_strong(&conn_fd, &fd, -1)) {
                atomic_store(&conn_lost, 1);
            }
            fd = reopen();
            if (fd >= 0) {
                continue;
            }
            break;
        }
        if (k < 0) {
            if (errno == EPIPE && !was_pending) {
                struct timespec zero = {0, 0};
                sigtimedwait(&block, NULL, &zero);
            }
            /* Attached, the program's stderr is not ours to write to: the
             * service thread disarms the recorder without a word. */
            if (atomic_exchange(&rec_enabled, 0) && !atomic_load(&silent)) {
                log_msg("lost the connection to memrec; recording stopped", NULL);
            }
        }
        break;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    atomic_fetch_sub(&conn_writers, 1);
}

void pipe_open(int fd)
{
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
}
