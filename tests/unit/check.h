// SPDX-License-Identifier: MIT
/* A tiny header-only test harness: named checks, a summary, non-zero exit
 * when any check failed. */
#ifndef CHECK_H
#define CHECK_H

#include <stdio.h>

static int check_failed;
static int check_count;

static inline int check_at(int ok, const char *what, const char *file, int line)
{
    check_count++;
    if (!ok) {
        check_failed++;
        fprintf(stderr, "FAIL %s:%d: %s\n", file, line, what);
    }
    return ok;
}

#define CHECK(cond) check_at((cond) != 0, #cond, __FILE__, __LINE__)
#define CHECK_EQ(a, b) check_at((unsigned long long)(a) == (unsigned long long)(b), #a " == " #b, __FILE__, __LINE__)

static inline int check_summary(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, check_count, check_failed);
    return check_failed ? 1 : 0;
}

#endif
