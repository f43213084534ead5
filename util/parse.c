// SPDX-License-Identifier: MIT
/* The command lines' numbers (parse.h). The checks are those the tools
 * made each on its own before: strtoll/strtod's full-string, errno and
 * range tests, so that every spelling a tool took it still takes. */
#include "parse.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* strtoll() of `s` with the checks parse_uint() and parse_size() share:
 * something there, digits read, no overflow; `*end` after the digits. */
static int integer(const char *s, long long *v, char **end)
{
    if (*s == 0) {
        return -1;
    }
    errno = 0;
    *v = strtoll(s, end, 10);
    if (errno || *end == s) {
        return -1;
    }
    return 0;
}

int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    long long v;
    char *end;
    if (integer(s, &v, &end) < 0 || *end || v < 0 || (uint64_t)v < min || (uint64_t)v > max) {
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    long long v;
    char *end;
    if (integer(s, &v, &end) < 0 || v < 0) {
        return -1;
    }
    uint64_t mult = 1;
    switch (*end) {
    case 'K':
    case 'k': mult = 1024; break;
    case 'M':
    case 'm': mult = 1024ull * 1024; break;
    case 'G':
    case 'g': mult = 1024ull * 1024 * 1024; break;
    default: break;
    }
    if (mult != 1) {
        end++;
    }
    /* max / mult first: the product itself may not fit. */
    if (*end || (uint64_t)v > max / mult || (uint64_t)v * mult < min) {
        return -1;
    }
    *out = (uint64_t)v * mult;
    return 0;
}

int parse_time_ms(const char *s, double unit_ms, double max_ms, uint64_t *ms)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*s == 0 || end == s || errno || !isfinite(v) || v < 0) {
        return -1;
    }
    double mult = unit_ms;
    if (strcmp(end, "ms") == 0) {
        mult = 1;
    } else if (strcmp(end, "s") == 0) {
        mult = 1000;
    } else if (strcmp(end, "m") == 0) {
        mult = 60000;
    } else if (strcmp(end, "h") == 0) {
        mult = 3600000;
    } else if (*end) {
        return -1;
    }
    v *= mult;
    if (v > max_ms) {
        return -1;
    }
    *ms = (uint64_t)llround(v);
    return 0;
}

int parse_seconds_ms(const char *s, double max_s, uint64_t *ms)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*s == 0 || *end || errno || !isfinite(v) || v < 0 || v > max_s) {
        return -1;
    }
    *ms = (uint64_t)llround(v * 1000.0);
    return 0;
}
