// SPDX-License-Identifier: MIT
/* Allocations made by a signal handler while its thread is inside the
 * recorder. The interrupted code may hold the thread's buffer, and its
 * trace tree and stack-walk cache may be half-updated, so the handler
 * cannot record there and then, nor walk its stack (the walker's cache
 * and libunwind's are the thread's, and may be half-updated; libunwind is
 * also far too slow for a handler). It notes the call and its call site in
 * a per-thread queue instead, and the interrupted code sends the queue
 * before its own next event (sigevents.c). Runs in signal handlers: system
 * calls only, no locks, never malloc. */
#define _GNU_SOURCE
#include "sigdefer.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <unistd.h>

#include "guard.h"
#include "log.h"
#include "mem.h"

/* The kernel's struct sigaction for rt_sigaction(2). */
struct k_sigaction {
    void *handler;
    unsigned long flags;
    void *restorer;
    uint64_t mask;
};
#define K_SA_RESTORER 0x04000000ul

/* The return address the kernel puts on top of a signal frame: glibc's
 * __restore_rt, which is not exported; the installed handlers say it. */
static _Atomic(uintptr_t) restorer;

static uintptr_t find_restorer(void)
{
    uintptr_t r = atomic_load_explicit(&restorer, memory_order_relaxed);
    if (r) {
        return r;
    }
    int saved_errno = errno;
    for (int sig = 1; sig < 65; sig++) {
        struct k_sigaction k;
        if (syscall(SYS_rt_sigaction, sig, NULL, &k, sizeof k.mask) == 0 && (k.flags & K_SA_RESTORER) && k.restorer &&
            k.handler != (void *)SIG_DFL && k.handler != (void *)SIG_IGN) {
            r = (uintptr_t)k.restorer;
            atomic_store_explicit(&restorer, r, memory_order_relaxed);
            break;
        }
    }
    errno = saved_errno;
    return r;
}

/* Whether the word at `w`, equal to the restorer, starts a signal frame of
 * a handler that interrupted code running below `outer`: what the kernel
 * put above the restorer is a ucontext whose saved stack pointer lies
 * between the frame and `outer`, with its floating-point state between the
 * two (x86-64 places it above the frame, below the interrupted stack), and
 * no uc_link. Stale stack words (a struct sigaction that once held the
 * restorer, in a slot a frame at -O0 leaves unwritten) pass the first
 * check alone: a nested call of the recorder's then went to the queue as a
 * handler's, and its free was recorded twice (cxx under a -O0 recorder,
 * one run in five). */
/* The stack is read past our own frames on purpose: outside the preload
 * library (test_sigdefer under ASan) its redzones are not ours to police. */
#define READS_OTHER_FRAMES __attribute__((no_sanitize("address")))

READS_OTHER_FRAMES static int signal_frame_at(const uintptr_t *w, uintptr_t outer)
{
#if defined(__x86_64__)
    /* glibc's ucontext_t starts as the kernel's: the fields read here
     * have the same places (its tail, larger, is never read). */
    const ucontext_t *uc = (const ucontext_t *)(w + 1);
    uintptr_t end = (uintptr_t)(&uc->uc_mcontext.fpregs + 1);
    if (end > outer || uc->uc_link) {
        return 0;
    }
    uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
    uintptr_t fp = (uintptr_t)uc->uc_mcontext.fpregs;
    return sp > end && sp <= outer && fp >= end && fp < sp;
#else
    (void)w;
    (void)outer;
    return 1;
#endif
}

READS_OTHER_FRAMES int sigdefer_classify(const void *frame)
{
    uintptr_t here = (uintptr_t)frame, outer = (uintptr_t)tstate.frame;
    if (here >= outer || outer - here >= (1u << 20)) {
        /* Not deeper on the same stack, as the recorder's own nested calls
         * always are: a handler on an alternate signal stack. */
        return 1;
    }
    uintptr_t r = find_restorer();
    if (!r) {
        return 0;
    }
    /* A signal frame between this call and the recorded one: its return
     * address, __restore_rt, sits at the handler's entry. */
    for (const uintptr_t *w = (const uintptr_t *)(here & ~(uintptr_t)7); (uintptr_t)w < outer; w++) {
        if (*w == r && signal_frame_at(w, outer)) {
            return 1;
        }
    }
    return 0;
}

static atomic_uint lost;

/* The queue of this thread, mapped on first use (mmap is a system call:
 * fine in a handler). */
static struct sigdefer_queue *queue(void)
{
    struct sigdefer_queue *q = tstate.sigq;
    if (!q) {
        q = mem_map(sizeof *q);
        tstate.sigq = q;
    }
    return q;
}

void sigdefer_add(unsigned op, unsigned kind, void *old, void *p, size_t size, const void *site)
{
    int saved_errno = errno; /* the handler's, and the code it interrupted */
    struct sigdefer_queue *q = queue();
    unsigned i = q ? atomic_fetch_add(&q->reserved, 1) : SIGDEFER_MAX;
    if (i >= SIGDEFER_MAX) {
        if (atomic_fetch_add(&lost, 1) == 0) {
            log_msg("a signal handler allocated too often inside one allocation: some of its calls are not recorded",
                    NULL);
        }
        errno = saved_errno;
        return;
    }
    struct sigdefer_event *e = &q->ev[i];
    e->op = (uint8_t)op;
    e->kind = (uint8_t)kind;
    e->old = old;
    e->p = p;
    e->size = size;
    e->site = (uint64_t)(uintptr_t)site;
    atomic_signal_fence(memory_order_seq_cst);
    tstate.deferred = 1;
    errno = saved_errno;
}

void sigdefer_release(void)
{
    mem_unmap(tstate.sigq, sizeof *tstate.sigq);
    tstate.sigq = NULL;
}
