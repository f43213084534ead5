// SPDX-License-Identifier: MIT
/* How the recorder reaches memrec (the connection protocol in
 * memwire.h): one request on memrec's socket, answered with the
 * write end of the recording's pipe. Used when a process image starts (the
 * program memrec ran, the image after an exec, a fork child memrec follows)
 * and when the program closed or replaced our descriptor. System calls
 * only: it runs inside a first malloc, in fork children and in hooks. */
#define _GNU_SOURCE
#include "conn.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#include "memwire.h"
#include "options.h"

static char sock_name[sizeof(((struct sockaddr_un *)0)->sun_path)];
static size_t sock_len; /* 0: memrec is not there */
static pid_t target_pid; /* the process memrec started */
static int follow; /* memrec records fork children too */

int sys_close(int fd)
{
    return (int)syscall(SYS_close, fd);
}

static pid_t parse_pid(const char *s)
{
    long v = 0;
    if (!s || !*s) {
        return 0;
    }
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (1L << 30)) {
            return 0;
        }
        v = v * 10 + (*s - '0');
    }
    return (pid_t)v;
}

void conn_init(char **envp)
{
    const char *name = options_env(envp, "MEMREC_SOCK");
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n + 1 > sizeof sock_name) {
        return;
    }
    memcpy(sock_name + 1, name, n); /* abstract: a leading NUL byte */
    sock_len = n + 1;
    target_pid = parse_pid(options_env(envp, "MEMREC_TARGET"));
    const char *f = options_env(envp, "MEMREC_FOLLOW");
    follow = f && f[0] == '1';
}

int conn_wanted(void)
{
    return sock_len && (follow || getpid() == target_pid);
}

int conn_follows_forks(void)
{
    return sock_len && follow;
}

/* The descriptor goes far above those the program uses: its own open()
 * calls then get the numbers they would get without us. */
int conn_move_high(int fd)
{
    struct rlimit rl;
    int top = 1024;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)top) {
        top = (int)rl.rlim_cur;
    }
    if (top <= 64 || fd >= top - 32) {
        return fd >= top - 32 ? fd : -1;
    }
    int hi = fcntl(fd, F_DUPFD_CLOEXEC, top - 32);
    if (hi < 0) {
        return -1;
    }
    sys_close(fd);
    return hi;
}

/* A connected socket to memrec, or -1. */
static int dial(void)
{
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0) {
        return -1;
    }
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    memcpy(a.sun_path, sock_name, sock_len);
    socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + sock_len);
    /* memrec answers at once; a memrec that hangs must not hang the
     * program with it. */
    struct timeval tv = {10, 0};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int rc;
    do {
        rc = connect(s, (struct sockaddr *)&a, alen);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        sys_close(s);
        return -1;
    }
    return s;
}

/* Send a request of `kind`, with descriptor `pass` (SCM_RIGHTS) when it is
 * not -1. 0 sent, -1 not. */
static int request(int s, int kind, int pass)
{
    struct memfmt_conn_request req = {MEMFMT_CONN_MAGIC, (uint32_t)kind, (int32_t)getpid(), (int32_t)getppid()};
    struct iovec iov = {&req, sizeof req};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    memset(&ctl, 0, sizeof ctl);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (pass >= 0) {
        msg.msg_control = ctl.buf;
        msg.msg_controllen = sizeof ctl.buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &pass, sizeof pass);
    }
    ssize_t k;
    do {
        k = sendmsg(s, &msg, MSG_NOSIGNAL);
    } while (k < 0 && errno == EINTR);
    return k == (ssize_t)sizeof req ? 0 : -1;
}

int conn_send_area(int area_fd)
{
    if (!sock_len) {
        return -1;
    }
    int saved_errno = errno;
    int ok = -1;
    int s = dial();
    if (s >= 0 && request(s, MEMFMT_CONN_AREA, area_fd) == 0) {
        struct memfmt_conn_reply rep;
        ssize_t k;
        do {
            k = recv(s, &rep, sizeof rep, 0);
        } while (k < 0 && errno == EINTR);
        ok = k == (ssize_t)sizeof rep && rep.magic == MEMFMT_CONN_MAGIC && rep.status == 0 ? 0 : -1;
    }
    if (s >= 0) {
        sys_close(s);
    }
    errno = saved_errno;
    return ok;
}

int conn_open(int kind)
{
    if (!sock_len) {
        return -1;
    }
    int saved_errno = errno;
    int fd = -1;
    ssize_t k;
    int s = dial();
    if (s < 0 || request(s, kind, -1) != 0) {
        goto out;
    }
    struct memfmt_conn_reply rep;
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    struct iovec iov = {&rep, sizeof rep};
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = ctl.buf;
    msg.msg_controllen = sizeof ctl.buf;
    do {
        k = recvmsg(s, &msg, MSG_CMSG_CLOEXEC);
    } while (k < 0 && errno == EINTR);
    if (k != (ssize_t)sizeof rep || rep.magic != MEMFMT_CONN_MAGIC) {
        goto out;
    }
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    int got = -1;
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int))) {
        memcpy(&got, CMSG_DATA(c), sizeof got);
    }
    if (rep.status != 0 || got < 0) {
        if (got >= 0) {
            sys_close(got);
        }
        goto out;
    }
    fd = conn_move_high(got);
    if (fd < 0) {
        fd = got; /* no room up there: a low descriptor beats no recording */
    }
out:
    if (s >= 0) {
        sys_close(s);
    }
    errno = saved_errno;
    return fd;
}
