// SPDX-License-Identifier: MIT
/* Hooks outside the allocator that keep a recording whole in real
 * programs:
 *  - close, dup2, dup3, close_range, closefrom: a daemon closing every
 *    descriptor, or a dup2 over ours, must neither cut the recording nor
 *    get recorder data in its own files (pipe_fd_closing());
 *  - the exec family: every event recorded so far leaves before the image
 *    is replaced (init_before_exec()); the new image reconnects by itself.
 * Each forwards to the next definition (RTLD_NEXT) with unchanged
 * arguments and errno. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conn.h"
#include "envhide.h"
#include "guard.h"
#include "init.h"
#include "mem.h"
#include "pipe.h"
#include "sysnext.h"
#include "unwind.h"

#define EXPORT __attribute__((visibility("default")))

extern char **environ;

/* Before start-up has resolved the next definitions (a constructor that
 * runs before our first hook), the system call does the same work. */
static void ensure_started(void)
{
    if (!init_is_ready() && !tstate.in_hook) {
        init_start();
    }
}

/* ---- descriptors ---- */

/* The program is closing or replacing descriptors lo..hi: neither our
 * pipe nor libunwind's may be among them afterwards. */
static void closing(int lo, int hi, const void *ret)
{
    pipe_fd_closing(lo, hi);
    if (!unwind_is_caller(ret)) {
        unwind_fd_closing(lo, hi);
    }
}

EXPORT int close(int fd)
{
    ensure_started();
    closing(fd, fd, __builtin_return_address(0));
    return sysnext.close ? sysnext.close(fd) : (int)syscall(SYS_close, fd);
}

EXPORT int dup2(int oldfd, int newfd)
{
    ensure_started();
    if (oldfd != newfd) {
        closing(newfd, newfd, __builtin_return_address(0));
    }
    return sysnext.dup2 ? sysnext.dup2(oldfd, newfd) : (int)syscall(SYS_dup3, oldfd, newfd, 0);
}

EXPORT int dup3(int oldfd, int newfd, int flags)
{
    ensure_started();
    if (oldfd != newfd) {
        closing(newfd, newfd, __builtin_return_address(0));
    }
    return sysnext.dup3 ? sysnext.dup3(oldfd, newfd, flags) : (int)syscall(SYS_dup3, oldfd, newfd, flags);
}

EXPORT int close_range(unsigned first, unsigned last, int flags)
{
    ensure_started();
    /* CLOSE_RANGE_CLOEXEC only marks them: ours is close-on-exec already. */
    if (!(flags & 4) && first <= (unsigned)INT32_MAX) {
        closing((int)first, last > (unsigned)INT32_MAX ? INT32_MAX : (int)last, __builtin_return_address(0));
    }
    return sysnext.close_range ? sysnext.close_range(first, last, flags)
                               : (int)syscall(SYS_close_range, first, last, flags);
}

EXPORT void closefrom(int lowfd)
{
    ensure_started();
    closing(lowfd < 0 ? 0 : lowfd, INT32_MAX, __builtin_return_address(0));
    if (sysnext.closefrom) {
        sysnext.closefrom(lowfd);
    } else {
        syscall(SYS_close_range, (unsigned)(lowfd < 0 ? 0 : lowfd), ~0u, 0);
    }
}

EXPORT int pipe2(int fds[2], int flags)
{
    if (unwind_is_caller(__builtin_return_address(0))) {
        return unwind_pipe2(fds, flags);
    }
    return sysnext.pipe2 ? sysnext.pipe2(fds, flags) : (int)syscall(SYS_pipe2, fds, flags);
}

/* ---- exec ---- */

/* The environment an exec passes on: memrec's variables go back in when
 * the new image continues a recording (this process is recorded, or
 * memrec follows forks), whatever environment the program passes; else
 * the program's, untouched (docs/capture.md, "What the program sees"). */
static char *const *exec_env(char *const *envp, struct envhide_space *sp)
{
    if (!conn_wanted()) {
        memset(sp, 0, offsetof(struct envhide_space, local));
        return envp;
    }
    return envhide_for_exec(envp, sp);
}

/* exec returned: it failed. errno is the exec's. */
static int exec_failed(struct envhide_space *sp, int rc)
{
    int e = errno;
    envhide_release(sp);
    errno = e;
    return rc;
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    ensure_started();
    init_before_exec();
    struct envhide_space sp;
    char *const *env = exec_env(envp, &sp);
    if (!sysnext.execve) {
        return exec_failed(&sp, (int)syscall(SYS_execve, path, argv, env));
    }
    return exec_failed(&sp, sysnext.execve(path, argv, env));
}

EXPORT int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    ensure_started();
    init_before_exec();
    if (!sysnext.execvpe) {
        errno = ENOSYS;
        return -1;
    }
    struct envhide_space sp;
    char *const *env = exec_env(envp, &sp);
    return exec_failed(&sp, sysnext.execvpe(file, argv, env));
}

EXPORT int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    ensure_started();
    init_before_exec();
    if (!sysnext.fexecve) {
        errno = ENOSYS;
        return -1;
    }
    struct envhide_space sp;
    char *const *env = exec_env(envp, &sp);
    return exec_failed(&sp, sysnext.fexecve(fd, argv, env));
}

EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
    ensure_started();
    init_before_exec();
    struct envhide_space sp;
    char *const *env = exec_env(envp, &sp);
    if (!sysnext.execveat) {
        return exec_failed(&sp, (int)syscall(SYS_execveat, dirfd, path, argv, env, flags));
    }
    return exec_failed(&sp, sysnext.execveat(dirfd, path, argv, env, flags));
}

/* ---- spawn ---- */

/* A spawned program is another process: it gets memrec's variables only
 * when memrec follows forks. */
static int spawn(int search, pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    ensure_started();
    struct envhide_space sp;
    memset(&sp, 0, offsetof(struct envhide_space, local));
    char *const *env = conn_follows_forks() ? envhide_for_exec(envp, &sp) : envp;
    int (*fn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *, char *const[],
              char *const[]) = search ? sysnext.posix_spawnp : sysnext.posix_spawn;
    int rc = fn ? fn(pid, path, fa, attr, argv, env) : ENOSYS;
    envhide_release(&sp);
    return rc;
}

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    return spawn(0, pid, path, fa, attr, argv, envp);
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    return spawn(1, pid, file, fa, attr, argv, envp);
}

/* ---- system and popen ---- */

/* glibc's system() and popen() start their shell with its internal
 * posix_spawn, which no hook sees, and the program's environment, which
 * holds no variable of memrec's: their children would go unrecorded with
 * --follow-fork. So when memrec follows forks they are done here, through
 * spawn() above, as glibc does them; otherwise glibc's run untouched. */

static int follow_spawns(void)
{
    ensure_started();
    return conn_follows_forks() && envhide_active();
}

/* sh -c -- cmd, as glibc runs it. */
static void shell_argv(char *argv[5], const char *cmd)
{
    static char sh[] = "sh", dash_c[] = "-c", dashes[] = "--";
    argv[0] = sh;
    argv[1] = dash_c;
    argv[2] = dashes;
    argv[3] = (char *)cmd;
    argv[4] = NULL;
}

static int wait_child(pid_t pid, int *status)
{
    while (waitpid(pid, status, 0) < 0) {
        if (errno != EINTR) {
            return -1;
        }
    }
    return 0;
}

EXPORT int system(const char *cmd)
{
    if (!cmd || !follow_spawns()) {
        return sysnext.system ? sysnext.system(cmd) : -1;
    }
    /* As POSIX says: SIGINT and SIGQUIT ignored and SIGCHLD blocked in the
     * caller while it waits; the shell starts with the caller's mask and
     * default actions for what the caller ignores here. */
    struct sigaction ign, intr, quit;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigset_t chld, omask, reset;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &omask);
    sigaction(SIGINT, &ign, &intr);
    sigaction(SIGQUIT, &ign, &quit);
    sigemptyset(&reset);
    if (intr.sa_handler != SIG_IGN) {
        sigaddset(&reset, SIGINT);
    }
    if (quit.sa_handler != SIG_IGN) {
        sigaddset(&reset, SIGQUIT);
    }
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setsigdefault(&attr, &reset);
    posix_spawnattr_setsigmask(&attr, &omask);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    char *argv[5];
    shell_argv(argv, cmd);
    pid_t pid;
    int status;
    if (spawn(0, &pid, "/bin/sh", NULL, &attr, argv, environ) != 0) {
        status = 127 << 8; /* as if the shell exited with 127 */
    } else if (wait_child(pid, &status) != 0) {
        status = -1;
    }
    posix_spawnattr_destroy(&attr);
    int e = errno;
    sigaction(SIGINT, &intr, NULL);
    sigaction(SIGQUIT, &quit, NULL);
    sigprocmask(SIG_SETMASK, &omask, NULL);
    errno = e;
    return status;
}

/* The streams popen() made here and their children, for pclose(). */
#define POPEN_MAX 64
static struct {
    FILE *f;
    pid_t pid;
} popened[POPEN_MAX];
static atomic_int popen_lock;

static void popen_table_lock(void)
{
    while (atomic_exchange(&popen_lock, 1)) {
        sched_yield();
    }
}

EXPORT FILE *popen(const char *cmd, const char *mode)
{
    int reading = mode && mode[0] == 'r', writing = mode && mode[0] == 'w';
    if (!follow_spawns() || !(reading || writing)) {
        return sysnext.popen ? sysnext.popen(cmd, mode) : NULL;
    }
    int cloexec = mode[1] == 'e' || (mode[1] && mode[2] == 'e');
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        return NULL;
    }
    int mine = reading ? fds[0] : fds[1], theirs = reading ? fds[1] : fds[0];
    int target = reading ? STDOUT_FILENO : STDIN_FILENO;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (theirs == target) {
        /* Already in place: dup2 onto itself would keep close-on-exec. */
        fcntl(theirs, F_SETFD, 0);
    } else {
        posix_spawn_file_actions_adddup2(&fa, theirs, target);
    }
    /* POSIX: the child does not keep the streams of earlier popen()s. */
    popen_table_lock();
    for (int i = 0; i < POPEN_MAX; i++) {
        if (popened[i].f && fileno(popened[i].f) != target) {
            posix_spawn_file_actions_addclose(&fa, fileno(popened[i].f));
        }
    }
    atomic_store(&popen_lock, 0);
    char *argv[5];
    shell_argv(argv, cmd);
    pid_t pid;
    int rc = spawn(0, &pid, "/bin/sh", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    sys_close(theirs);
    FILE *f = NULL;
    if (rc == 0) {
        if (!cloexec) {
            fcntl(mine, F_SETFD, 0);
        }
        f = fdopen(mine, reading ? "r" : "w");
    }
    if (!f) {
        int e = rc ? rc : errno;
        sys_close(mine);
        if (rc == 0) {
            wait_child(pid, &rc);
        }
        errno = e;
        return NULL;
    }
    popen_table_lock();
    int slot = -1;
    for (int i = 0; i < POPEN_MAX && slot < 0; i++) {
        if (!popened[i].f) {
            slot = i;
        }
    }
    if (slot >= 0) {
        popened[slot].f = f;
        popened[slot].pid = pid;
    }
    atomic_store(&popen_lock, 0);
    if (slot < 0) {
        /* No room to remember it: pclose() could not wait for it. */
        fclose(f);
        wait_child(pid, &rc);
        errno = EMFILE;
        return NULL;
    }
    return f;
}

EXPORT int pclose(FILE *f)
{
    pid_t pid = 0;
    popen_table_lock();
    for (int i = 0; i < POPEN_MAX; i++) {
        if (f && popened[i].f == f) {
            pid = popened[i].pid;
            popened[i].f = NULL;
        }
    }
    atomic_store(&popen_lock, 0);
    if (!pid) {
        return sysnext.pclose ? sysnext.pclose(f) : -1;
    }
    fclose(f);
    int status;
    return wait_child(pid, &status) == 0 ? status : -1;
}

/* The list forms: count the arguments, copy them into an array of our own
 * memory (not the program's heap), and take the array form above, which
 * flushes. The array outlives the call only if exec fails. */

/* The arguments of a list form from `arg0` on, up to the NULL, in an
 * array of our own memory; *n gets their count. `ap` is left after the
 * NULL. NULL with errno when memory is short. */
static char **list_args(const char *arg0, va_list *ap, size_t *n)
{
    va_list count;
    va_copy(count, *ap);
    size_t k = arg0 ? 1 : 0;
    while (arg0 && va_arg(count, const char *)) {
        k++;
    }
    va_end(count);
    char **argv = mem_map((k + 1) * sizeof *argv);
    if (!argv) {
        errno = ENOMEM;
        return NULL;
    }
    for (size_t i = 0; i < k; i++) {
        argv[i] = (char *)(i == 0 ? arg0 : va_arg(*ap, const char *));
    }
    if (k) {
        (void)va_arg(*ap, const char *); /* the NULL ending the list */
    }
    argv[k] = NULL;
    *n = k;
    return argv;
}

static int drop_args(char **argv, size_t n, int rc)
{
    int e = errno;
    mem_unmap(argv, (n + 1) * sizeof *argv);
    errno = e;
    return rc;
}

EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    size_t n;
    char **argv = list_args(arg, &ap, &n);
    va_end(ap);
    return argv ? drop_args(argv, n, execv(path, argv)) : -1;
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    size_t n;
    char **argv = list_args(arg, &ap, &n);
    va_end(ap);
    return argv ? drop_args(argv, n, execvp(file, argv)) : -1;
}

EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    size_t n;
    char **argv = list_args(arg, &ap, &n);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return argv ? drop_args(argv, n, execve(path, argv, envp)) : -1;
}
