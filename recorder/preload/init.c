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
#include <stdint.h>
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
#include "log.h"
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

/* The exit status, for the recording's end. _exit's hook below gets it as
 * its argument, but exit() and a return from main reach glibc's _exit by
 * internal calls that no hook sees. An on_exit() handler is given the
 * status in both cases. It must run before the destructors (on_unload()),
 * and exit handlers run in the reverse order of their registration, so it
 * is registered from main's wrapper: by then __libc_start_main has
 * registered the runner of the destructors. When memrec attaches, the
 * service thread registers it (attach_poll()): not the main thread memrec
 * stopped, which may have been stopped inside __cxa_atexit() holding the
 * lock on_exit() takes. The library stays loaded after a detach, so the
 * handler never dangles. The note carries the pid: a
 * vfork child that calls exit() writes into its parent's memory. */
static _Atomic uint64_t exit_note; /* pid << 32 | (status + 1); 0: none */

static void note_exit(int status, void *arg)
{
    (void)arg;
    uint64_t v = (uint64_t)(uint32_t)getpid() << 32 | (uint32_t)((status & 0xff) + 1);
    atomic_store_explicit(&exit_note, v, memory_order_relaxed);
}

/* The status exit() was given in this process, or -1. */
static int noted_exit_status(void)
{
    uint64_t v = atomic_load_explicit(&exit_note, memory_order_relaxed);
    if (!v || (pid_t)(v >> 32) != getpid()) {
        return -1;
    }
    return (int)(uint32_t)v - 1;
}

static atomic_int exit_watched;

void init_watch_exit(void)
{
    if (!atomic_load_explicit(&exit_watched, memory_order_relaxed) && !atomic_exchange(&exit_watched, 1)) {
        on_exit(note_exit, NULL);
    }
}

void init_attached(void)
{
    recorded_pid = getpid();
    started_once = 1;
    atomic_store(&init_state, INIT_READY);
}

/* In a fork child (atfork handler): when memrec follows forks, start a
 * recording of the child's own at its next hook. */
static void init_forked(void)
{
    if (!conn_follows_forks()) {
        return;
    }
    /* Start again, as a process of its own, at the child's next hook. */
    modules_forget();
    restart_service = 1;
    atomic_store(&init_state, INIT_NEW);
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
        pthread_atfork(buffer_fork_prepare, buffer_fork_parent, forked_child);
        once = 1;
    }
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

typedef int (*main_fn)(int, char **, char **);
typedef int (*start_main_fn)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *);
static main_fn program_main;

static int main_wrapper(int argc, char **argv, char **envp)
{
    int saved = tstate.in_hook;
    tstate.in_hook = 1; /* on_exit may allocate its table: not the program's block */
    init_watch_exit();
    tstate.in_hook = saved;
    return program_main(argc, argv, envp);
}

/* The program's _start calls this through its GOT, so the preloaded
 * recorder comes first. Only main changes: the same arguments go on to
 * glibc's, which ignores init and fini since 2.34. */
__attribute__((visibility("default"))) int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
                                                             void (*fini)(void), void (*rtld_fini)(void),
                                                             void *stack_end)
{
    int saved = tstate.in_hook;
    tstate.in_hook = 1; /* dlsym may allocate */
    start_main_fn next = (start_main_fn)dlsym(RTLD_NEXT, "__libc_start_main");
    tstate.in_hook = saved;
    if (!next) {
        log_msg("cannot find the C library's function", "__libc_start_main");
        syscall(SYS_exit_group, 127);
        __builtin_unreachable();
    }
    program_main = main;
    return next(main_wrapper, argc, argv, init, fini, rtld_fini, stack_end);
}

/* The longest the program waits at its end for memrec's reachability scan:
 * memrec gives up its own scan after 10 s (memrec(1)). */
#define REACH_WAIT_S 30

/* How long the program waits for memrec to take the request: a memrec
 * that does not read (stopped) must not keep it longer than --max-wait
 * would; without that bound the program waits for memrec, as its events do. */
int init_reach_ack_ms(void)
{
    if (opts.max_wait_ms < 0) {
        return 10000;
    }
    return opts.max_wait_ms > 10 ? opts.max_wait_ms : 10;
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
    buffer_finish(noted_exit_status());
    if (opts.reachability) {
        /* Every event is in the pipe now, and the program's exit handlers
         * and destructors have run (LeakSanitizer's moment): memrec stops
         * the threads, classifies the live blocks and lets them go. A
         * memrec that does not answer in time changes nothing: the
         * program exits as it would have. */
        conn_reach(init_reach_ack_ms(), REACH_WAIT_S, service_tid());
    }
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
