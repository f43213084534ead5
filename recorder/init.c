// SPDX-License-Identifier: MIT
/* Start-up and shut-down of the recorder inside the target. Recording starts
 * at the first intercepted call (libraries initialized before us allocate
 * too), the service thread at our constructor, and at exit every buffer is
 * flushed after the program's atexit handlers and destructors ran. */
#define _GNU_SOURCE
#include "init.h"
#include "recorder_internal.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

enum { ST_NEW, ST_STARTING, ST_READY };
static atomic_int state = ST_NEW;
static pid_t recorded_pid; /* the process being recorded */

/* MEMREC_PIPE=fd:inode:pid. The inode and pid make sure we write into
 * memrec's pipe and nothing else: a child that inherited the variable but
 * not the descriptor, or whose fd number now means another file, stays
 * unrecorded. */
static int pipe_from_env(void)
{
    const char *s = options_env(environ, "MEMREC_PIPE");
    if (!s) {
        return -1;
    }
    unsigned long long v[3] = {0, 0, 0};
    int i = 0;
    for (; *s && i < 3; s++) {
        if (*s == ':') {
            i++;
        } else if (*s >= '0' && *s <= '9') {
            v[i] = v[i] * 10 + (unsigned long long)(*s - '0');
        } else {
            return -1;
        }
    }
    if (i != 2 || (pid_t)v[2] != getpid()) {
        return -1;
    }
    struct stat st;
    int fd = (int)v[0];
    if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode) || st.st_ino != (ino_t)v[1]) {
        return -1;
    }
    return fd;
}

int init_is_ready(void)
{
    return atomic_load_explicit(&state, memory_order_acquire) == ST_READY;
}

void init_start(void)
{
    int expected = ST_NEW;
    if (!atomic_compare_exchange_strong(&state, &expected, ST_STARTING)) {
        return;
    }
    int saved = tstate.in_hook;
    tstate.in_hook = 1;
    resolve_init();
    options_init(environ);
    int fd = pipe_from_env();
    recorded_pid = getpid();
    if (fd >= 0) {
        /* An exec'd program would start a second recording in the same
         * pipe, numbered from scratch: the recording ends at exec instead
         * (following exec is issue 3's work). Also keeps the pipe out of
         * programs this one starts. */
        fcntl(fd, F_SETFD, FD_CLOEXEC);
        unwind_init();
        if (buffer_setup(fd) == 0) {
            modules_send_process(environ);
            modules_scan();
            crash_install();
        }
    }
    atomic_store_explicit(&state, ST_READY, memory_order_release);
    tstate.in_hook = saved;
}

__attribute__((constructor)) static void on_load(void)
{
    init_start();
    if (atomic_load(&rec_enabled)) {
        int saved = tstate.in_hook;
        tstate.in_hook = 1;
        buffer_start_service();
        tstate.in_hook = saved;
    }
}

/* Runs after the program's atexit handlers and its own destructors. */
__attribute__((destructor)) static void on_unload(void)
{
    if (!atomic_load(&rec_enabled)) {
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
    buffer_finish();
    unwind_report();
    tstate.in_hook = 0;
}

/* _exit and _Exit skip destructors, so the buffers would go unflushed.
 * Only in the recorded process itself: a vfork child shares its memory but
 * is not it. */
static void flush_before_exit(void)
{
    if (!init_is_ready() || !atomic_load(&rec_enabled) || tstate.in_hook || getpid() != recorded_pid) {
        return;
    }
    tstate.in_hook = 1;
    buffer_finish();
    tstate.in_hook = 0;
}

__attribute__((visibility("default"), noreturn)) void _exit(int status)
{
    flush_before_exit();
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

__attribute__((visibility("default"), noreturn)) void _Exit(int status)
{
    flush_before_exit();
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}
