// SPDX-License-Identifier: MIT
/* The recorder's only way to speak: single write(2) calls to stderr, capped,
 * because it runs inside someone else's program. Never allocates. */
#include "log.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define LOG_MAX_LINES 20

static atomic_int lines;

void log_msg(const char *msg, const char *detail)
{
    if (atomic_fetch_add(&lines, 1) >= LOG_MAX_LINES) {
        return;
    }
    char line[512];
    size_t n = 0;
    const char *parts[] = {"memrec: ", msg, detail ? ": " : "", detail ? detail : "", "\n"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        size_t k = strlen(parts[i]);
        if (k > sizeof line - 1 - n) {
            k = sizeof line - 1 - n;
        }
        memcpy(line + n, parts[i], k);
        n += k;
    }
    ssize_t rc = write(STDERR_FILENO, line, n);
    (void)rc;
}

size_t log_fmt_u64(char *buf, uint64_t v)
{
    char tmp[LOG_U64_CHARS];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++) {
        buf[i] = tmp[n - 1 - i];
    }
    buf[n] = 0;
    return n;
}
