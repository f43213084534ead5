// SPDX-License-Identifier: MIT
/* The recording of a program that dies of a fatal signal (SIGSEGV, abort()
 * and the like): a handler sends every thread's pending events, then lets
 * the process die of the same signal, core dump and exit status unchanged.
 * It runs in a dying process, possibly on a thread interrupted inside the
 * recorder: it only calls async-signal-safe functions, never allocates, and
 * waits for no lock longer than a bounded moment. */
#define _GNU_SOURCE
#include "crash.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "buffer.h"
#include "clock.h"
#include "crashflush.h"
#include "guard.h"
#include "pipe.h"

/* Signals whose default action ends the process at once, usually because
 * the program is broken. SIGKILL cannot be caught; SIGTERM and SIGINT end
 * a program on request and are memrec's to pass on. */
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS};

/* How long a crash handler waits for one lock, and for all of them: a lock
 * held longer belongs to a thread that is stuck (or is the interrupted
 * code itself), and the process must still die. */
#define LOCK_WAIT_NS (20 * 1000000L)
#define TOTAL_WAIT_NS (200 * 1000000L)
/* How long a second crashing thread waits for the first one's flush. */
#define OTHER_CRASH_WAIT_NS (1000 * 1000000L)

enum { CRASH_NONE, CRASH_FLUSHING, CRASH_FLUSHED };
static atomic_int crash_state;
static pid_t recorded_pid; /* the process crash_install() was called in */
static int64_t crash_deadline; /* of the whole flush; written by the one flushing thread */

static void nap(void)
{
    struct timespec t = {0, 50 * 1000};
    nanosleep(&t, NULL);
}

/* Whether a crash handler may wait a moment longer for a lock: each lock
 * for LOCK_WAIT_NS at most (*lock_deadline, 0 before the first wait), all
 * of them together until the flush's deadline. Naps, then returns 1; 0
 * when the time is up. */
static int crash_wait(int64_t *lock_deadline)
{
    int64_t now = (int64_t)clock_read_ns(CLOCK_MONOTONIC);
    if (*lock_deadline == 0) {
        *lock_deadline = now + LOCK_WAIT_NS;
    }
    if (now >= *lock_deadline || now >= crash_deadline) {
        return 0;
    }
    nap();
    return 1;
}

/* Let the signal's default action end the process: reset it to SIG_DFL and
 * send it to this thread again. It is blocked while the handler runs, so it
 * stays pending until the handler returns; the kernel then delivers it on
 * the restored context, so a core dump shows the faulting instruction, not
 * this handler. */
static void die_by(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
}

/* The first crashing thread flushes; a second one waits for it, since
 * dying at once would cut that flush short. */
static void flush_once(int sig)
{
    int expected = CRASH_NONE;
    if (atomic_compare_exchange_strong(&crash_state, &expected, CRASH_FLUSHING)) {
        crash_deadline = (int64_t)clock_read_ns(CLOCK_MONOTONIC) + TOTAL_WAIT_NS;
        /* Later events of other threads would come after the crash: they
         * stop being recorded now, and the service thread stops. */
        if (atomic_exchange(&rec_enabled, 0)) {
            crashflush_all(crash_wait);
            crashflush_say_signaled(sig);
        }
        atomic_store(&crash_state, CRASH_FLUSHED);
        return;
    }
    int64_t until = (int64_t)clock_read_ns(CLOCK_MONOTONIC) + OTHER_CRASH_WAIT_NS;
    while (atomic_load(&crash_state) == CRASH_FLUSHING && (int64_t)clock_read_ns(CLOCK_MONOTONIC) < until) {
        nap();
    }
}

static void on_fatal(int sig, siginfo_t *info, void *uctx)
{
    (void)info;
    (void)uctx;
    int saved_errno = errno;
    int saved_hook = tstate.in_hook;
    tstate.in_hook = 1; /* anything below that allocates is not the program's */
    /* A vfork child shares our memory but is not the recorded process (a
     * forked one has recording off already): its crash must not touch the
     * parent's buffers or stop its recording. */
    if (getpid() == recorded_pid) {
        flush_once(sig);
    }
    die_by(sig);
    tstate.in_hook = saved_hook;
    errno = saved_errno;
}

void crash_install(void)
{
    atomic_store(&crash_state, CRASH_NONE);
    recorded_pid = getpid();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal;
    /* SA_ONSTACK: where the program set up an alternate signal stack, a
     * stack overflow can still be flushed. We never set one up ourselves:
     * the stack is the program's. All signals are blocked while the handler
     * runs, so no other handler of the program runs in between. */
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigfillset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
        struct sigaction old;
        if (sigaction(fatal_signals[i], NULL, &old) != 0) {
            continue;
        }
        /* A handler or SIG_IGN the program chose before us stays; one it
         * installs later replaces ours, and the program decides. */
        if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) {
            continue;
        }
        sigaction(fatal_signals[i], &sa, NULL);
    }
}
