// SPDX-License-Identifier: MIT
/* Unit tests of util/parse.c (the command lines' numbers) and
 * util_addf(): every spelling the tools took before the parsers were
 * shared is still taken, every one they refused is still refused. */
#include "parse.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "util.h"

static int uint_is(const char *s, uint64_t min, uint64_t max, uint64_t want)
{
    uint64_t v = 12345;
    int ok = parse_uint(s, min, max, &v) == 0 && v == want;
    if (!ok) {
        fprintf(stderr, "parse_uint('%s', %llu, %llu) gave %llu, want %llu\n", s, (unsigned long long)min,
                (unsigned long long)max, (unsigned long long)v, (unsigned long long)want);
    }
    return ok;
}

static int uint_bad(const char *s, uint64_t min, uint64_t max)
{
    uint64_t v = 777;
    return parse_uint(s, min, max, &v) < 0 && v == 777;
}

static int size_is(const char *s, uint64_t want)
{
    uint64_t v = 0;
    return parse_size(s, 1, 1ull << 30, &v) == 0 && v == want;
}

static int size_bad(const char *s)
{
    uint64_t v = 0;
    return parse_size(s, 1, 1ull << 30, &v) < 0;
}

static int secs_is(const char *s, uint64_t want)
{
    uint64_t ms = 0;
    return parse_seconds_ms(s, 1e12, &ms) == 0 && ms == want;
}

static int secs_bad(const char *s)
{
    uint64_t ms = 0;
    return parse_seconds_ms(s, 1e12, &ms) < 0;
}

int main(void)
{
    /* Counts: memprint's -n/-f/--points/--thread, memrec's -p/-l/-d. */
    CHECK(uint_is("0", 0, 1000000, 0));
    CHECK(uint_is("1000000", 0, 1000000, 1000000));
    CHECK(uint_is("+7", 0, 10, 7));
    CHECK(uint_is(" 7", 0, 10, 7)); /* strtol's leading blanks */
    CHECK(uint_is("-0", 0, 10, 0));
    CHECK(uint_is("19", 1, 19, 19));
    CHECK(uint_is("2147483647", 1, INT32_MAX, INT32_MAX));
    CHECK(uint_bad("", 0, 10));
    CHECK(uint_bad(" ", 0, 10));
    CHECK(uint_bad("abc", 0, 10));
    CHECK(uint_bad("5x", 0, 10));
    CHECK(uint_bad("-1", 0, 10));
    CHECK(uint_bad("1000001", 0, 1000000));
    CHECK(uint_bad("0", 1, 19));
    CHECK(uint_bad("20", 1, 19));
    CHECK(uint_bad("7", 8, 1024));
    CHECK(uint_bad("2147483648", 1, INT32_MAX));
    CHECK(uint_bad("99999999999999999999", 0, INT64_MAX));
    CHECK(uint_bad("1.5", 0, 10));

    /* Sizes: memrec's -s. */
    CHECK(size_is("1", 1));
    CHECK(size_is("512K", 512 * 1024));
    CHECK(size_is("64k", 64 * 1024));
    CHECK(size_is("1M", 1024 * 1024));
    CHECK(size_is("1g", 1ull << 30));
    CHECK(size_is("1048576K", 1ull << 30));
    CHECK(size_is("1073741824", 1ull << 30));
    CHECK(size_bad("0"));
    CHECK(size_bad("0K"));
    CHECK(size_bad("-0K"));
    CHECK(size_bad("-5"));
    CHECK(size_bad("K"));
    CHECK(size_bad(""));
    CHECK(size_bad("2G"));
    CHECK(size_bad("1048577K"));
    CHECK(size_bad("1073741825"));
    CHECK(size_bad("5KB"));
    CHECK(size_bad("5T"));
    CHECK(size_bad("18014398509481984K")); /* 2^54 K: the product does not fit 64 bits */

    /* Seconds: memprint's --from, --to, --at. */
    CHECK(secs_is("0", 0));
    CHECK(secs_is("1.5", 1500));
    CHECK(secs_is("0.0004", 0));
    CHECK(secs_is("0.0005", 1)); /* rounded to the nearest */
    CHECK(secs_is("2e3", 2000000));
    CHECK(secs_bad(""));
    CHECK(secs_bad("-1"));
    CHECK(secs_bad("1s"));
    CHECK(secs_bad("inf"));
    CHECK(secs_bad("nan"));
    CHECK(secs_bad("1e13"));
    CHECK(secs_bad("1e-400")); /* underflow: strtod's ERANGE */

    /* Times with a unit: memrec's --max-wait (ms by default) and
     * --duration (seconds by default). */
    uint64_t ms = 0;
    CHECK(parse_time_ms("100", 1, 3.6e6, &ms) == 0 && ms == 100);
    CHECK(parse_time_ms("100ms", 1000, 3.6e6, &ms) == 0 && ms == 100);
    CHECK(parse_time_ms("2s", 1, 3.6e6, &ms) == 0 && ms == 2000);
    CHECK(parse_time_ms("1.5", 1000, 3.6e6, &ms) == 0 && ms == 1500);
    CHECK(parse_time_ms("1m", 1, 3.6e6, &ms) == 0 && ms == 60000);
    CHECK(parse_time_ms("1h", 1000, 3.6e6, &ms) == 0 && ms == 3600000);
    CHECK(parse_time_ms("0.4", 1, 3.6e6, &ms) == 0 && ms == 0);
    CHECK(parse_time_ms("2h", 1000, 3.6e6, &ms) < 0);
    CHECK(parse_time_ms("", 1, 3.6e6, &ms) < 0);
    CHECK(parse_time_ms("s", 1, 3.6e6, &ms) < 0);
    CHECK(parse_time_ms("5x", 1, 3.6e6, &ms) < 0);
    CHECK(parse_time_ms("5 s", 1, 3.6e6, &ms) < 0);
    CHECK(parse_time_ms("-1s", 1, 3.6e6, &ms) < 0);
    CHECK(parse_time_ms("inf", 1, 3.6e6, &ms) < 0);
    CHECK(parse_time_ms("nan", 1, 3.6e6, &ms) < 0);

    /* util_addf(): pieces appended, cut at the buffer's end, still a string. */
    char buf[8];
    size_t n = util_addf(buf, sizeof buf, 0, "%s", "abc");
    CHECK_EQ(n, 3);
    n = util_addf(buf, sizeof buf, n, "-%d", 42);
    CHECK_EQ(n, 6);
    CHECK(strcmp(buf, "abc-42") == 0);
    n = util_addf(buf, sizeof buf, n, "%s", "xyz");
    CHECK_EQ(n, 9);
    CHECK(strcmp(buf, "abc-42x") == 0);
    CHECK_EQ(util_addf(buf, sizeof buf, n, "more"), 9);
    CHECK(strcmp(buf, "abc-42x") == 0);

    return check_summary("test_parse");
}
