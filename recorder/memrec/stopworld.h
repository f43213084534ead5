// SPDX-License-Identifier: MIT
/* Stopping every thread of a process for memrec's reachability scan
 * (stopworld.c): ptrace seize and interrupt, their registers, reads of its
 * memory that cannot fault it (process_vm_readv), and letting it go with
 * any signal that was on its way delivered as it would have been. */
#ifndef STOPWORLD_H
#define STOPWORLD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

struct stopworld {
    pid_t pid;
    size_t n, cap;
    pid_t *tids; /* the threads stopped */
    int *sig; /* per thread: the signal it stopped on its way to, given back at the resume (0: none) */
    uint64_t *sp; /* per thread: its stack pointer */
    uint64_t *regs; /* per thread: STOPWORLD_NREGS general registers */
};

#define STOPWORLD_NREGS 27 /* the words of x86-64's struct user_regs_struct */

/** Stop every thread of `pid` (those it starts meanwhile too) before
 * CLOCK_MONOTONIC passes `deadline_ns`, and read their registers. Returns
 * 0, or -1 with the reason in `why` (every thread then runs again). */
int stopworld_stop(struct stopworld *sw, pid_t pid, uint64_t deadline_ns, char *why, size_t cap);
/** Let every stopped thread go on, and release. */
void stopworld_resume(struct stopworld *sw);
/** A struct reach_reader's readv for `ctx` = the struct stopworld. */
ssize_t stopworld_readv(void *ctx, const struct iovec *local, const struct iovec *remote, unsigned long n);

#endif
