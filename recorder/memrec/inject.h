// SPDX-License-Identifier: MIT
/* inject: memrec's own ptrace-based way to run a function call inside one
 * thread of a running process (x86-64 Linux), used to load the recorder
 * into it (memrec --pid) and to unload it again. No debugger needed. */
#ifndef INJECT_H
#define INJECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct inject {
    pid_t pid; /* the process */
    pid_t tid; /* the thread that runs the calls */
    struct user_regs_struct saved; /* its registers when it was stopped */
    /* Its floating-point and vector registers (the XSAVE area, or the
     * x87/SSE part where the kernel offers no more): the injected calls
     * use them, and the code stopped may hold live values there. */
    uint8_t xstate[8192] __attribute__((aligned(64)));
    size_t xstate_len; /* 0: only `fpregs` was saved */
    struct user_fpregs_struct fpregs;
    uint64_t scratch; /* where strings go: below its stack pointer */
    /* The trampoline (see inject.c): its address in the target, 0 when
     * there is none (calls return to address 0, the old way); where the
     * XSAVE area was copied; the registers it resumes the thread with (the
     * saved ones, an interrupted system call set up to restart); whether
     * the thread is stopped at the trampoline's stop, its call returned. */
    uint64_t tramp;
    uint64_t xsave_at;
    struct user_regs_struct resume;
    int at_tramp;
    int running; /* a call was started and has not reached the trampoline */
    int crashed; /* a call faulted: only memrec can put the registers back */
    int released; /* a free-running call ended: the thread is back in the program */
    int pending[8]; /* signals that arrived while it was ours, re-sent at the end */
    int npending;
    uint64_t stopped_ns; /* how long the thread has been stopped, at inject_end() */
    uint64_t t0;
    void (*idle)(void *); /* called while waiting for the thread (may be NULL) */
    void *idle_ctx;
    /* A free-running call's result (see inject_call()): the address of a
     * 64-bit word of the target that the function itself sets before it
     * returns, 0 for none. The trampoline's own slot lies below the
     * program's stack, which the program reuses as soon as it is back. */
    uint64_t result_at;
    /* When non-zero, inject_begin() gives up (the user pressed Ctrl+C).
     * A call already running is always waited for: a thread left in the
     * middle of dlopen would keep the loader's lock. May be NULL. */
    const volatile int *cancel;
};

/* Where a function lives in the target: libc's (or libdl's) dlopen/dlsym. */
struct inject_libc {
    char path[4096]; /* the C library as the target sees it */
    uint64_t dlopen, dlsym, dlerror; /* addresses in the target, 0 if missing */
    /* Where the trampoline goes: the slack between the end of the C
     * library's code and the end of its last page, 0 when too small. */
    uint64_t tramp_at;
    uint64_t busy_lo[24], busy_hi[24]; /* functions the thread must not be inside */
    int nbusy;
};

/** Why the process cannot be traced, as one phrase for an error line, or
 * NULL when nothing speaks against it (the attach itself may still fail).
 * Checks: existence, owner, a tracer already attached, Yama's
 * ptrace_scope. */
const char *inject_obstacle(pid_t pid, char *buf, size_t cap);

/** Find the C library of `pid` and the functions the injection needs.
 * Returns 0, or -1 with a reason in `err` (no libc: a static executable). */
int inject_find_libc(pid_t pid, struct inject_libc *lc, char *err, size_t cap);

/** Also count the executable mappings of the object whose file name is
 * `base` as busy (the recorder itself, before calling into it again). */
void inject_add_busy_object(pid_t pid, struct inject_libc *lc, const char *base);

/** Stop one thread of `pid` at a point where it is not inside the
 * allocator (retrying for up to `timeout_ms`). A thread blocked in a
 * system call that the allocator never makes (read, accept, poll, a futex
 * wait...) is taken as it is, whatever stale addresses its stack holds.
 * Keeps `idle`, `idle_ctx` and `cancel` of `in`; the rest is set here.
 * Returns 0, or -1 with a reason in `err` (-2 when `*in->cancel` became
 * non-zero). The process's other threads keep running. */
int inject_begin(struct inject *in, pid_t pid, const struct inject_libc *lc, int timeout_ms, char *err, size_t cap);

/** Copy `len` bytes into the target's scratch area below the stopped
 * thread's stack; returns their address there, or 0. */
uint64_t inject_put(struct inject *in, const void *data, size_t len);

/** Call fn(a, b, c) in the stopped thread and return its result in *ret.
 * Returns 0, or -1 with a reason in `err` (the thread died, a crash).
 * With `idle` set, the call runs free (it may talk to memrec) and the
 * thread goes back into the program when it returns: it must be the last
 * call before inject_end(), and `result_at` must be set (the result is
 * read there, once it differs from the value memrec writes there first). */
int inject_call(struct inject *in, uint64_t fn, uint64_t a, uint64_t b, uint64_t c, uint64_t *ret, int timeout_ms,
                char *err, size_t cap);

/** Let the thread go: through the trampoline, which puts its registers
 * back itself, or by putting them back here (no trampoline, or a call
 * that crashed); signals that arrived in between are delivered again. */
void inject_end(struct inject *in);

#endif
