// SPDX-License-Identifier: MIT
/* Reaching memrec (conn.c): whether this process is recorded, and the descriptor of its pipe,
 * placed out of the program's way. */
#ifndef RECORDER_CONN_H
#define RECORDER_CONN_H

#include "hidden.h"

/** Read MEMREC_SOCK, MEMREC_TARGET and MEMREC_FOLLOW from `envp`. */
HIDDEN void conn_init(char **envp);
/** Whether memrec wants this process recorded (it is the process memrec
 * started, or memrec follows forks). */
HIDDEN int conn_wanted(void);
/** Whether memrec records fork children too (--follow-fork). */
HIDDEN int conn_follows_forks(void);
/** Ask memrec for the pipe (enum memfmt_conn_kind). Returns a close-on-exec
 * descriptor placed high, or -1 (memrec absent, refused, unreachable). */
HIDDEN int conn_open(int kind);
/** Ask memrec to classify the live blocks as the program ends
 * (MEMFMT_CONN_REACH) and wait for its answer: `ack_ms` ms for memrec to
 * take the request (a stopped memrec does not), then at most `timeout_s`
 * seconds (`service_tid`: the recorder's thread, 0: none, which memrec
 * leaves out of the roots): memrec stops the threads, reads their memory and lets them go
 * before it answers. Returns 0 when memrec answered, -1 otherwise (the
 * program then exits as it would have). */
HIDDEN int conn_reach(int ack_ms, int timeout_s, int service_tid);
/** Hand memrec this image's buffer area (shmbuf.c's memfd), which it
 * reads if the process is killed outright. 0 taken, -1 not (memrec
 * absent or refusing: the recording goes on through the pipe alone). The
 * caller still owns `area_fd`. */
HIDDEN int conn_send_area(int area_fd);
/** close(2) without our own close() hook. */
HIDDEN int sys_close(int fd);
/** Move `fd` to a close-on-exec descriptor near the top of the program's
 * range (RLIMIT_NOFILE, at most 1024), so that the program's own open()
 * calls get the numbers they would get without us. Returns the new
 * descriptor (the old one is closed), or -1 when there is no room up
 * there (`fd` is left as it was). */
HIDDEN int conn_move_high(int fd);

#endif
