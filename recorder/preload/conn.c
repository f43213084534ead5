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

#include "mem.h"
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

/* One request on memrec's socket and its reply, each way at most
 * `first_ms` ms, then, once memrec said it works on it
 * (MEMFMT_CONN_WORKING), `then_s` s for the answer; descriptor `pass`
 * (SCM_RIGHTS) with the request when it is not -1; `extra` (when not
 * NULL) as a second message after the request. Returns 0 with the
 * descriptor handed over in *got (-1: none), or -1 when memrec refused or
 * did not answer. */
static int ask(int kind, int first_ms, int then_s, int pass, const void *extra, size_t extra_len, int *got_fd)
{
    int result = -1;
    *got_fd = -1;
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0) {
        goto out;
    }
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    memcpy(a.sun_path, sock_name, sock_len);
    socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + sock_len);
    /* A memrec that hangs must not hang the program with it. */
    struct timeval tv = {first_ms / 1000, (first_ms % 1000) * 1000};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int rc;
    do {
        rc = connect(s, (struct sockaddr *)&a, alen);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        goto out;
    }
    struct memfmt_conn_request req = {MEMFMT_CONN_MAGIC, (uint32_t)kind, (int32_t)getpid(), (int32_t)getppid()};
    struct iovec req_iov = {&req, sizeof req};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } pass_ctl;
    struct msghdr req_msg;
    memset(&req_msg, 0, sizeof req_msg);
    memset(&pass_ctl, 0, sizeof pass_ctl);
    req_msg.msg_iov = &req_iov;
    req_msg.msg_iovlen = 1;
    if (pass >= 0) {
        req_msg.msg_control = pass_ctl.buf;
        req_msg.msg_controllen = sizeof pass_ctl.buf;
        struct cmsghdr *pc = CMSG_FIRSTHDR(&req_msg);
        pc->cmsg_level = SOL_SOCKET;
        pc->cmsg_type = SCM_RIGHTS;
        pc->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(pc), &pass, sizeof pass);
    }
    ssize_t k;
    do {
        k = sendmsg(s, &req_msg, MSG_NOSIGNAL);
    } while (k < 0 && errno == EINTR);
    if (k != (ssize_t)sizeof req) {
        goto out;
    }
    if (extra) {
        do {
            k = send(s, extra, extra_len, MSG_NOSIGNAL);
        } while (k < 0 && errno == EINTR);
        if (k != (ssize_t)extra_len) {
            goto out;
        }
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
    for (int round = 0;; round++) {
        do {
            k = recvmsg(s, &msg, MSG_CMSG_CLOEXEC);
        } while (k < 0 && errno == EINTR);
        if (k != (ssize_t)sizeof rep || rep.magic != MEMFMT_CONN_MAGIC) {
            goto out;
        }
        if (rep.status != MEMFMT_CONN_WORKING || round > 0) {
            break;
        }
        /* memrec took the request and works on it: now the longer wait. */
        struct timeval then = {then_s, 0};
        setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &then, sizeof then);
        msg.msg_controllen = sizeof ctl.buf;
    }
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    int got = -1;
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int))) {
        memcpy(&got, CMSG_DATA(c), sizeof got);
    }
    if (rep.status != 0) {
        if (got >= 0) {
            sys_close(got);
        }
        goto out;
    }
    *got_fd = got;
    result = 0;
out:
    if (s >= 0) {
        sys_close(s);
    }
    return result;
}

int conn_send_area(int area_fd)
{
    if (!sock_len) {
        return -1;
    }
    int saved_errno = errno;
    int got = -1;
    int rc = ask(MEMFMT_CONN_AREA, 10000, 10, area_fd, NULL, 0, &got);
    if (got >= 0) {
        sys_close(got); /* memrec sends none back: never keep one */
    }
    errno = saved_errno;
    return rc;
}

int conn_open(int kind)
{
    if (!sock_len) {
        return -1;
    }
    int saved_errno = errno;
    int got, fd = -1;
    /* memrec answers at once. */
    if (ask(kind, 10000, 10, -1, NULL, 0, &got) == 0 && got >= 0) {
        fd = conn_move_high(got);
        if (fd < 0) {
            fd = got; /* no room up there: a low descriptor beats no recording */
        }
    }
    errno = saved_errno;
    return fd;
}

int conn_reach(int ack_ms, int timeout_s, int service_tid)
{
    if (!sock_len) {
        return -1;
    }
    int saved_errno = errno;
    /* What memrec must not take for the program's memory: our own
     * mappings (memwire.h, struct memfmt_conn_ranges). */
    static struct {
        struct memfmt_conn_ranges h;
        struct mem_range r[MEM_MAX_RANGES];
    } own;
    int n = mem_own_ranges(own.r);
    own.h.count = n < 0 ? MEM_MAX_RANGES : (uint32_t)n;
    own.h.complete = n >= 0;
    own.h.service_tid = service_tid;
    int got;
    int rc = ask(MEMFMT_CONN_REACH, ack_ms, timeout_s, -1, &own, sizeof own.h + own.h.count * sizeof own.r[0], &got);
    if (got >= 0) {
        sys_close(got);
    }
    errno = saved_errno;
    return rc;
}
