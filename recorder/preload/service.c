// SPDX-License-Identifier: MIT
/* The service thread: every flush period it announces newly loaded modules,
 * does what an attach asks (hook new objects, detach), and runs a flush
 * round (buffer_sync()). It belongs to the recorder's lifecycle, above the
 * buffers: it calls into modules and buffers, reaches attach.c (above it)
 * only through the functions service_set_attach() handed it, and nothing
 * below calls it. Runs inside the target: it never allocates through the hooked
 * malloc (its allocations are the recorder's) and never receives the
 * program's signals. */
#define _GNU_SOURCE
#include "service.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "buffer.h"
#include "guard.h"
#include "heapinfo.h"
#include "log.h"
#include "modules.h"
#include "options.h"
#include "pipe.h"

/* What an attach does on every tick and at the end (attach_poll() and
 * attach_disarm()), handed down by service_set_attach(): attach.c starts
 * and stops this thread, so the thread must not call up into it by name. */
static int (*attach_poll_fn)(void);
static void (*attach_end_fn)(void);

/* Bumped at detach: a service thread of an earlier attach ends even when a
 * new attach turned recording on again before it woke up. */
static atomic_uint service_gen;

/* The thread's kernel id while it runs (0: none), which the reachability
 * scan leaves out of the roots: its stack is the recorder's. */
static atomic_int service_thread_tid;

int service_tid(void)
{
    return atomic_load_explicit(&service_thread_tid, memory_order_relaxed);
}

static void *service_main(void *arg)
{
    unsigned gen = (unsigned)(uintptr_t)arg;
    atomic_store_explicit(&service_thread_tid, (int)syscall(SYS_gettid), memory_order_relaxed);
    tstate.in_hook = 1; /* this thread's own allocations are the recorder's */
    struct timespec period = {0, (long)opts.flush_ms * 1000000L};
    while (atomic_load(&rec_enabled) && atomic_load(&service_gen) == gen) {
        nanosleep(&period, NULL);
        if (buffer_records_lost()) {
            modules_relearn(); /* memrec may have missed modules while it did not read */
        }
        modules_scan();
        if (attach_poll_fn && attach_poll_fn()) {
            break;
        }
        heapinfo_tick(); /* before the round: its record goes out with it */
        buffer_sync();
    }
    /* Attached (memrec --pid): a detach request, or memrec gone (a write
     * failed and turned recording off). Either way the program is left as
     * it was: hooks out, pipe closed, and this thread ends. */
    if (atomic_load(&service_gen) == gen && attach_end_fn) {
        attach_end_fn();
    }
    atomic_store_explicit(&service_thread_tid, 0, memory_order_relaxed);
    return NULL;
}

void service_start(void)
{
    pthread_t th;
    pthread_attr_t attr;
    sigset_t all, old;
    /* The target's signals must never be delivered to our thread. */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256u << 10);
    if (pthread_create(&th, &attr, service_main, (void *)(uintptr_t)atomic_load(&service_gen)) != 0) {
        log_msg("cannot start the service thread; events are sent when buffers fill", NULL);
    }
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void service_set_attach(int (*poll)(void), void (*end)(void))
{
    attach_poll_fn = poll;
    attach_end_fn = end;
}

void service_stop(void)
{
    atomic_fetch_add(&service_gen, 1);
}
