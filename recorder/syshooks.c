// SPDX-License-Identifier: MIT
/* Hooks outside the allocator that keep a recording whole in real
 * programs:
 *  - close, dup2, dup3, close_range, closefrom: a daemon closing every
 *    descriptor, or a dup2 over ours, must neither cut the recording nor
 *    get recorder data in its own files (buffer_fd_closing());
 *  - the exec family: every event recorded so far leaves before the image
 *    is replaced (init_before_exec()); the new image reconnects by itself.
 * Each forwards to the next definition (RTLD_NEXT) with unchanged
 * arguments and errno. */
#define _GNU_SOURCE
#include "init.h"
#include "recorder_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

extern char **environ;

static struct {
    int (*close)(int);
    int (*dup2)(int, int);
    int (*dup3)(int, int, int);
    int (*close_range)(unsigned, unsigned, int);
    void (*closefrom)(int);
    int (*execve)(const char *, char *const[], char *const[]);
    int (*execvpe)(const char *, char *const[], char *const[]);
    int (*fexecve)(int, char *const[], char *const[]);
    int (*execveat)(int, const char *, char *const[], char *const[], int);
    int (*posix_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
                       char *const[], char *const[]);
    int (*posix_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
                        char *const[], char *const[]);
    int (*pipe2)(int[2], int);
} next;

void hooks_resolve(void)
{
    next.close = (int (*)(int))dlsym(RTLD_NEXT, "close");
    next.dup2 = (int (*)(int, int))dlsym(RTLD_NEXT, "dup2");
    next.dup3 = (int (*)(int, int, int))dlsym(RTLD_NEXT, "dup3");
    next.close_range = (int (*)(unsigned, unsigned, int))dlsym(RTLD_NEXT, "close_range");
    next.closefrom = (void (*)(int))dlsym(RTLD_NEXT, "closefrom");
    next.execve = (int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execve");
    next.execvpe = (int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execvpe");
    next.fexecve = (int (*)(int, char *const[], char *const[]))dlsym(RTLD_NEXT, "fexecve");
    next.execveat = (int (*)(int, const char *, char *const[], char *const[], int))dlsym(RTLD_NEXT, "execveat");
    *(void **)&next.posix_spawn = dlsym(RTLD_NEXT, "posix_spawn");
    *(void **)&next.posix_spawnp = dlsym(RTLD_NEXT, "posix_spawnp");
    next.pipe2 = (int (*)(int[2], int))dlsym(RTLD_NEXT, "pipe2");
}

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
    buffer_fd_closing(lo, hi);
    if (!unwind_is_caller(ret)) {
        unwind_fd_closing(lo, hi);
    }
}

EXPORT int close(int fd)
{
    ensure_started();
    closing(fd, fd, __builtin_return_address(0));
    return next.close ? next.close(fd) : (int)syscall(SYS_close, fd);
}

EXPORT int dup2(int oldfd, int newfd)
{
    ensure_started();
    if (oldfd != newfd) {
        closing(newfd, newfd, __builtin_return_address(0));
    }
    return next.dup2 ? next.dup2(oldfd, newfd) : (int)syscall(SYS_dup3, oldfd, newfd, 0);
}

EXPORT int dup3(int oldfd, int newfd, int flags)
{
    ensure_started();
    if (oldfd != newfd) {
        closing(newfd, newfd, __builtin_return_address(0));
    }
    return next.dup3 ? next.dup3(oldfd, newfd, flags) : (int)syscall(SYS_dup3, oldfd, newfd, flags);
}

EXPORT int close_range(unsigned first, unsigned last, int flags)
{
    ensure_started();
    /* CLOSE_RANGE_CLOEXEC only marks them: ours is close-on-exec already. */
    if (!(flags & 4) && first <= (unsigned)INT32_MAX) {
        closing((int)first, last > (unsigned)INT32_MAX ? INT32_MAX : (int)last, __builtin_return_address(0));
    }
    return next.close_range ? next.close_range(first, last, flags) : (int)syscall(SYS_close_range, first, last, flags);
}

EXPORT void closefrom(int lowfd)
{
    ensure_started();
    closing(lowfd < 0 ? 0 : lowfd, INT32_MAX, __builtin_return_address(0));
    if (next.closefrom) {
        next.closefrom(lowfd);
    } else {
        syscall(SYS_close_range, (unsigned)(lowfd < 0 ? 0 : lowfd), ~0u, 0);
    }
}

EXPORT int pipe2(int fds[2], int flags)
{
    if (unwind_is_caller(__builtin_return_address(0))) {
        return unwind_pipe2(fds, flags);
    }
    return next.pipe2 ? next.pipe2(fds, flags) : (int)syscall(SYS_pipe2, fds, flags);
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
    if (!next.execve) {
        return exec_failed(&sp, (int)syscall(SYS_execve, path, argv, env));
    }
    return exec_failed(&sp, next.execve(path, argv, env));
}

EXPORT int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    ensure_started();
    init_before_exec();
    if (!next.execvpe) {
        errno = ENOSYS;
        return -1;
    }
    struct envhide_space sp;
    char *const *env = exec_env(envp, &sp);
    return exec_failed(&sp, next.execvpe(file, argv, env));
}

EXPORT int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    ensure_started();
    init_before_exec();
    if (!next.fexecve) {
        errno = ENOSYS;
        return -1;
    }
    struct envhide_space sp;
    char *const *env = exec_env(envp, &sp);
    return exec_failed(&sp, next.fexecve(fd, argv, env));
}

EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
    ensure_started();
    init_before_exec();
    struct envhide_space sp;
    char *const *env = exec_env(envp, &sp);
    if (!next.execveat) {
        return exec_failed(&sp, (int)syscall(SYS_execveat, dirfd, path, argv, env, flags));
    }
    return exec_failed(&sp, next.execveat(dirfd, path, argv, env, flags));
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
              char *const[]) = search ? next.posix_spawnp : next.posix_spawn;
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
