// SPDX-License-Identifier: MIT
/* Per-thread recorder state. Initial-exec TLS: reading it never calls into
 * the dynamic loader (which may allocate), so the hooks can test it first. */
#define _GNU_SOURCE
#include "guard.h"

#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

HIDDEN __thread struct thread_state tstate __attribute__((tls_model("initial-exec")));

pid_t gettid_cached(void)
{
    if (!tstate.tid) {
        tstate.tid = (pid_t)syscall(SYS_gettid);
    }
    return tstate.tid;
}
