// SPDX-License-Identifier: MIT
/* memrec's socket: where recorders ask for their pipe (the connection
 * protocol in memwire.h). */
#ifndef HUB_H
#define HUB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A request, with what the kernel says about the asker. */
struct hub_request {
    int fd; /* the connection; hub_reply() closes it */
    pid_t pid; /* the peer's pid (SO_PEERCRED), not its own claim */
    uid_t uid;
    unsigned kind; /* enum memfmt_conn_kind */
    /* MEMFMT_CONN_REACH: the recorder's own mappings (start, length
     * pairs, xmalloc'd; hub_reply() frees them), whether the list is
     * complete, and its service thread (0: none). */
    uint64_t *own;
    size_t nown;
    int own_complete;
    pid_t service_tid;
    int passed; /* MEMFMT_CONN_AREA: the area's descriptor, now the caller's; else -1 */
};

/** Listen on a new abstract socket with an unguessable name, written to
 * `name` (without the leading NUL: the value of MEMREC_SOCK). Returns the
 * listening descriptor (non-blocking, close-on-exec) or -1 with errno. */
int hub_listen(char *name, size_t cap);
/** Take one waiting request. Returns 1 with `req` filled, 0 when none is
 * waiting, or -1 for a connection that sent nothing valid (dropped). */
int hub_accept(int lfd, struct hub_request *req);
/** Answer: `pipe_fd` >= 0 hands that descriptor over, -1 refuses. An
 * area request (MEMFMT_CONN_AREA) is answered with `pipe_fd` 0 (taken,
 * no descriptor goes back) or -1. */
void hub_reply(struct hub_request *req, int pipe_fd);
/** Say the request is taken and the answer follows (MEMFMT_CONN_WORKING),
 * the connection left open for hub_reply_status(). */
void hub_reply_working(struct hub_request *req);
/** Answer without a descriptor: 0 done, 1 refused (MEMFMT_CONN_REACH). */
void hub_reply_status(struct hub_request *req, int status);

#endif
