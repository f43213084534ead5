// SPDX-License-Identifier: MIT
/* Start-up and shut-down of the recorder inside the target. Recording starts
 * at the first intercepted call (libraries initialized before us allocate
 * too), the service thread at our constructor, and at exit every buffer is
 * flushed after the program's atexit handlers and destructors ran. */
#define _GNU_SOURCE
#include "init.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "buffer.h"
#include "conn.h"
#include "crash.h"
#include "envhide.h"
#include "guard.h"
#include "memwire.h"
#include "modules.h"
#include "options.h"
#include "pipe.h"
#include "resolve.h"
#include "service.h"
#include "sysnext.h"
#include "unwind.h"

extern char **environ;

HIDDEN atomic_int init_state = INIT_NEW;
static pid_t recorded_pid; /* the process being recorded */
static int started_once; /* the parts of start-up done once per image */
static int restart_service; /* a fork child: its service thread is still to start */

void init_start(void)
{
    int expected = INIT_NEW;
    if (!atomic_compare_exchange_strong(&init_state, &expected, INIT_STARTING)) {
        return;
    }
    int saved = tstate.in_hook;
    tstate.in_hook = 1;
    if (!started_once) {
        options_init(environ);
        conn_init(environ);
        envhide_init(); /* after the two readers above, before any program code */
        if (conn_wanted()) {
            /* Otherwise the hooks resolve on first use: loaded into a
             * running process (memrec --pid), RTLD_NEXT may find nothing. */
            resolve_init();
        }
        sysnext_resolve();
        started_once = 1;
        if (conn_wanted()) {
            unwind_init();
        }
    }
    recorded_pid = getpid();
    int fd = conn_wanted() ? conn_open(MEMFMT_CONN_START) : -1;
    if (fd >= 0) {
        if (buffer_setup(fd, modules_note_frame) == 0) {
            init_watch_forks();
            modules_send_process(environ);
            modules_scan();
            crash_install();
        } else {
            sys_close(fd);
        }
    }
    atomic_store_explicit(&init_state, INIT_READY, memory_order_release);
    if (restart_service && atomic_load(&rec_enabled)) {
        restart_service = 0;
        service_start();
    }
    tstate.in_hook = saved;
}

void init_attached(void)
{
    recorded_pid = getpid();
    started_once = 1;
    atomic_store(&init_state, INIT_READY);
}

/* The atfork child handler: the child never writes into the parent's
 * recording; with --follow-fork it starts one of its own. */
static void forked_child(void)
{
    buffer_forget();
    init_forked();
}

void init_watch_forks(void)
{
    static int once;
    if (!once) {
        pthread_atfork(NULL, NULL, forked_child);
        once = 1;
    }
}

void init_forked(void)
{
    if (!conn_follows_forks()) {
        return;
    }
    /* Start again, as a process of its own, at the child's next hook. */
    modules_forget();
    restart_service = 1;
    atomic_store(&init_state, INIT_NEW);
}

void hook_send_deferred(void)
{
    while (tstate.deferred && !tstate.in_hook && atomic_load_explicit(&rec_enabled, memory_order_relaxed)) {
        hook_mark_inside(__builtin_frame_address(0));
        buffer_send_deferred();
        tstate.in_hook = 0;
        atomic_signal_fence(memory_order_seq_cst);
        tstate.frame = NULL;
    }
}

__attribute__((constructor)) static void on_load(void)
{
    init_start();
    if (atomic_load(&rec_enabled)) {
        int saved = tstate.in_hook;
        tstate.in_hook = 1;
        service_start();
        tstate.in_hook = saved;
    }
}

/* A followed fork child that never allocated still gets its recording. */
static void start_late(void)
{
    if (atomic_load(&init_state) == INIT_NEW && restart_service) {
        restart_service = 0;
        init_start();
    }
}

/* Runs after the program's atexit handlers and its own destructors. */
__attribute__((destructor)) static void on_unload(void)
{
    start_late();
    if (!atomic_load(&rec_enabled) || getpid() != recorded_pid) {
        return;
    }
    if (opts.freeres) {
        /* libstdc++ keeps an emergency exception pool for the whole run and
         * offers this call so that tools do not report it as a leak. Its
         * free is the program's, so it is recorded. */
        tstate.in_hook = 1;
        void (*freeres)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "_ZN9__gnu_cxx9__freeresEv");
        tstate.in_hook = 0;
        if (freeres) {
            freeres();
        }
    }
    tstate.in_hook = 1;
    buffer_finish(-1);
    unwind_report();
    tstate.in_hook = 0;
}

/* Whether this process is the one recorded, not a vfork child sharing its
 * memory, and recording is on. */
static int recording_here(void)
{
    return init_is_ready() && atomic_load(&rec_enabled) && !tstate.in_hook && getpid() == recorded_pid;
}

/* _exit and _Exit skip destructors, so the buffers would go unflushed. */
static void flush_before_exit(int status)
{
    start_late();
    if (!recording_here()) {
        return;
    }
    tstate.in_hook = 1;
    buffer_finish(status & 0xff);
    tstate.in_hook = 0;
}

void init_before_exec(void)
{
    if (!recording_here()) {
        return;
    }
    tstate.in_hook = 1;
    buffer_before_exec();
    tstate.in_hook = 0;
}

__attribute__((visibility("default"), noreturn)) void _exit(int status)
{
    flush_before_exit(status);
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

__attribute__((visibility("default"), noreturn)) void _Exit(int status)
{
    flush_before_exit(status);
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}
