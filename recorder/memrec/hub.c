// SPDX-License-Identifier: MIT
/* memrec's end of the connection protocol (hub.h). */
#define _GNU_SOURCE
#include "hub.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "memwire.h"
#include "util.h"

int hub_listen(char *name, size_t cap)
{
    uint64_t r[2] = {0, 0};
    if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r[0] = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid();
        r[1] = (uint64_t)ts.tv_sec ^ (uintptr_t)&r;
    }
    int n = snprintf(name, cap, "memrec.%d.%016llx%016llx", (int)getpid(), (unsigned long long)r[0],
                     (unsigned long long)r[1]);
    struct sockaddr_un a;
    if (n <= 0 || (size_t)n >= cap || (size_t)n + 1 > sizeof a.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        return -1;
    }
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    memcpy(a.sun_path + 1, name, (size_t)n);
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
    if (bind(fd, (struct sockaddr *)&a, len) != 0 || listen(fd, 64) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* MEMFMT_CONN_REACH's second message (struct memfmt_conn_ranges and the
 * pairs). */
static int read_ranges(int c, struct hub_request *req)
{
    size_t cap = sizeof(struct memfmt_conn_ranges) + MEMFMT_CONN_MAX_RANGES * 16;
    uint8_t *buf = xmalloc(cap);
    ssize_t k;
    do {
        k = recv(c, buf, cap, 0);
    } while (k < 0 && errno == EINTR);
    struct memfmt_conn_ranges h;
    if (k < (ssize_t)sizeof h) {
        free(buf);
        return -1;
    }
    memcpy(&h, buf, sizeof h);
    if (h.count > MEMFMT_CONN_MAX_RANGES || (size_t)k != sizeof h + (size_t)h.count * 16) {
        free(buf);
        return -1;
    }
    req->own = xmalloc((h.count + 1) * 16);
    memcpy(req->own, buf + sizeof h, (size_t)h.count * 16);
    req->nown = h.count;
    req->own_complete = h.complete != 0;
    req->service_tid = h.service_tid;
    free(buf);
    return 0;
}

int hub_accept(int lfd, struct hub_request *req)
{
    int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) {
        return 0;
    }
    struct ucred cr;
    socklen_t crlen = sizeof cr;
    /* The recorder sends its request right after connecting. */
    struct timeval tv = {1, 0};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    struct memfmt_conn_request r;
    struct iovec iov = {&r, sizeof r};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = ctl.buf;
    msg.msg_controllen = sizeof ctl.buf;
    ssize_t k;
    do {
        k = recvmsg(c, &msg, MSG_CMSG_CLOEXEC);
    } while (k < 0 && errno == EINTR);
    /* A descriptor comes only with an area (MEMFMT_CONN_AREA); more than
     * one is cut off by the kernel (MSG_CTRUNC), never installed. */
    int passed = -1;
    struct cmsghdr *cm = k > 0 ? CMSG_FIRSTHDR(&msg) : NULL;
    if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len == CMSG_LEN(sizeof(int))) {
        memcpy(&passed, CMSG_DATA(cm), sizeof passed);
    }
    if (k != (ssize_t)sizeof r || r.magic != MEMFMT_CONN_MAGIC ||
        getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) != 0 || (r.kind == MEMFMT_CONN_AREA) != (passed >= 0)) {
        if (passed >= 0) {
            close(passed);
        }
        close(c);
        return -1;
    }
    req->fd = c;
    req->pid = cr.pid;
    req->uid = cr.uid;
    req->kind = r.kind;
    req->own = NULL;
    req->nown = 0;
    req->own_complete = 0;
    req->service_tid = 0;
    if (r.kind == MEMFMT_CONN_REACH && read_ranges(c, req) != 0) {
        free(req->own);
        req->own = NULL;
        close(c);
        return -1;
    }
    req->passed = passed;
    return 1;
}

static void reply(struct hub_request *req, int status, int pipe_fd)
{
    struct memfmt_conn_reply rep = {MEMFMT_CONN_MAGIC, status};
    struct iovec iov = {&rep, sizeof rep};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    memset(&ctl, 0, sizeof ctl);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (pipe_fd >= 0 && req->kind != MEMFMT_CONN_AREA) {
        msg.msg_control = ctl.buf;
        msg.msg_controllen = sizeof ctl.buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &pipe_fd, sizeof pipe_fd);
    }
    ssize_t k;
    do {
        k = sendmsg(req->fd, &msg, MSG_NOSIGNAL);
    } while (k < 0 && errno == EINTR);
    close(req->fd);
    req->fd = -1;
    free(req->own);
    req->own = NULL;
}

void hub_reply(struct hub_request *req, int pipe_fd)
{
    reply(req, pipe_fd >= 0 ? 0 : 1, pipe_fd);
}

void hub_reply_working(struct hub_request *req)
{
    struct memfmt_conn_reply rep = {MEMFMT_CONN_MAGIC, MEMFMT_CONN_WORKING};
    ssize_t k;
    do {
        k = send(req->fd, &rep, sizeof rep, MSG_NOSIGNAL);
    } while (k < 0 && errno == EINTR);
}

void hub_reply_status(struct hub_request *req, int status)
{
    reply(req, status, -1);
}
