// SPDX-License-Identifier: MIT
/* The recorder's messages (log.c): rate-limited lines written with write(2), never through
 * stdio or malloc. */
#ifndef RECORDER_LOG_H
#define RECORDER_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "hidden.h"

/** Write one line "memrec: <msg>" to stderr with write(2), at most
 * 20 lines per process. Async-signal-safe, never allocates. */
HIDDEN void log_msg(const char *msg, const char *detail);
/** Write `v` in decimal into buf, NUL-terminated; returns the number of
 * digits. buf must hold LOG_U64_CHARS bytes (the recorder's only number
 * formatting: no stdio in the target). Async-signal-safe, never allocates. */
#define LOG_U64_CHARS 21
HIDDEN size_t log_fmt_u64(char *buf, uint64_t v);

#endif
