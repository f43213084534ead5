// SPDX-License-Identifier: MIT
/* Per-thread recorder state. Initial-exec TLS: reading it never calls into
 * the dynamic loader (which may allocate), so the hooks can test it first. */
#include "recorder_internal.h"

HIDDEN __thread struct thread_state tstate __attribute__((tls_model("initial-exec")));
