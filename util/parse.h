// SPDX-License-Identifier: MIT
/* The numbers of the tools' command lines: counts, byte sizes with a
 * binary suffix, seconds. One parser per kind, so that memrec, memprint
 * and memtui take the same spellings. Pure functions: no message, no exit
 * (the caller says what was wrong, in its own words). */
#ifndef PARSE_H
#define PARSE_H

#include <stdint.h>

/** A decimal integer from `min` to `max` (max at most INT64_MAX), as
 * strtoll() reads it: leading blanks and a sign are allowed, nothing may
 * follow. 0 with the value in `*out`, or -1 (empty, not a number,
 * something after it, out of range; `*out` untouched). */
int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/** A byte count: a decimal integer and an optional suffix K, M or G
 * (either case; 1024-based), whose product is from `min` to `max`. 0 with
 * the bytes in `*out`, or -1 as parse_uint(). */
int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/** A time in seconds (a decimal number, e.g. 1.5, from 0 to `max_s`) into
 * milliseconds, rounded to the nearest. 0 with `*ms`, or -1 (empty, not a
 * number, something after it, negative, not finite, above `max_s`). */
int parse_seconds_ms(const char *s, double max_s, uint64_t *ms);

/** A time: a decimal number and an optional unit, ms, s, m or h; without
 * one, `unit_ms` milliseconds each (memrec's --max-wait counts in ms, its
 * --duration in seconds). Into milliseconds, rounded to the nearest, from
 * 0 to `max_ms`. 0 with `*ms`, or -1 as parse_seconds_ms(). */
int parse_time_ms(const char *s, double unit_ms, double max_ms, uint64_t *ms);

#endif
