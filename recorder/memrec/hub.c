// SPDX-License-Identifier: MIT
/* memrec's end of the connection protocol (hub.h). */
#define _GNU_SOURCE
#include "hub.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "memwire.h"

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
    req->passed = passed;
    return 1;
}

void hub_reply(struct hub_request *req, int pipe_fd)
{
    struct memfmt_conn_reply rep = {MEMFMT_CONN_MAGIC, pipe_fd >= 0 ? 0 : 1};
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
}
