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
#include <stdarg.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static struct {
    int (*close)(int);
    int (*dup2)(int, int);
    int (*dup3)(int, int, int);
    int (*close_range)(unsigned, unsigned, int);
    void (*closefrom)(int);
    int (*execve)(const char *, char *const[], char *const[]);
    int (*execv)(const char *, char *const[]);
    int (*execvp)(const char *, char *const[]);
    int (*execvpe)(const char *, char *const[], char *const[]);
    int (*fexecve)(int, char *const[], char *const[]);
    int (*execveat)(int, const char *, char *const[], char *const[], int);
} next;

void hooks_resolve(void)
{
    next.close = (int (*)(int))dlsym(RTLD_NEXT, "close");
    next.dup2 = (int (*)(int, int))dlsym(RTLD_NEXT, "dup2");
    next.dup3 = (int (*)(int, int, int))dlsym(RTLD_NEXT, "dup3");
    next.close_range = (int (*)(unsigned, unsigned, int))dlsym(RTLD_NEXT, "close_range");
    next.closefrom = (void (*)(int))dlsym(RTLD_NEXT, "closefrom");
    next.execve = (int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execve");
    next.execv = (int (*)(const char *, char *const[]))dlsym(RTLD_NEXT, "execv");
    next.execvp = (int (*)(const char *, char *const[]))dlsym(RTLD_NEXT, "execvp");
    next.execvpe = (int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execvpe");
    next.fexecve = (int (*)(int, char *const[], char *const[]))dlsym(RTLD_NEXT, "fexecve");
    next.execveat = (int (*)(int, const char *, char *const[], char *const[], int))dlsym(RTLD_NEXT, "execveat");
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

EXPORT int close(int fd)
{
    ensure_started();
    buffer_fd_closing(fd, fd);
    return next.close ? next.close(fd) : (int)syscall(SYS_close, fd);
}

EXPORT int dup2(int oldfd, int newfd)
{
    ensure_started();
    if (oldfd != newfd) {
        buffer_fd_closing(newfd, newfd);
    }
    return next.dup2 ? next.dup2(oldfd, newfd) : (int)syscall(SYS_dup3, oldfd, newfd, 0);
}

EXPORT int dup3(int oldfd, int newfd, int flags)
{
    ensure_started();
    if (oldfd != newfd) {
        buffer_fd_closing(newfd, newfd);
    }
    return next.dup3 ? next.dup3(oldfd, newfd, flags) : (int)syscall(SYS_dup3, oldfd, newfd, flags);
}

EXPORT int close_range(unsigned first, unsigned last, int flags)
{
    ensure_started();
    /* CLOSE_RANGE_CLOEXEC only marks them: ours is close-on-exec already. */
    if (!(flags & 4) && first <= (unsigned)INT32_MAX) {
        buffer_fd_closing((int)first, last > (unsigned)INT32_MAX ? INT32_MAX : (int)last);
    }
    return next.close_range ? next.close_range(first, last, flags) : (int)syscall(SYS_close_range, first, last, flags);
}

EXPORT void closefrom(int lowfd)
{
    ensure_started();
    buffer_fd_closing(lowfd < 0 ? 0 : lowfd, INT32_MAX);
    if (next.closefrom) {
        next.closefrom(lowfd);
    } else {
        syscall(SYS_close_range, (unsigned)(lowfd < 0 ? 0 : lowfd), ~0u, 0);
    }
}

/* ---- exec ---- */

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    ensure_started();
    init_before_exec();
    if (!next.execve) {
        return (int)syscall(SYS_execve, path, argv, envp);
    }
    return next.execve(path, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
    ensure_started();
    init_before_exec();
    if (!next.execv) {
        errno = ENOSYS;
        return -1;
    }
    return next.execv(path, argv);
}

EXPORT int execvp(const char *file, char *const argv[])
{
    ensure_started();
    init_before_exec();
    if (!next.execvp) {
        errno = ENOSYS;
        return -1;
    }
    return next.execvp(file, argv);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    ensure_started();
    init_before_exec();
    if (!next.execvpe) {
        errno = ENOSYS;
        return -1;
    }
    return next.execvpe(file, argv, envp);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    ensure_started();
    init_before_exec();
    if (!next.fexecve) {
        errno = ENOSYS;
        return -1;
    }
    return next.fexecve(fd, argv, envp);
}

EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
    ensure_started();
    init_before_exec();
    if (!next.execveat) {
        return (int)syscall(SYS_execveat, dirfd, path, argv, envp, flags);
    }
    return next.execveat(dirfd, path, argv, envp, flags);
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
