// SPDX-License-Identifier: MIT
/* Text for the screen: numbers in one format, matching. Names from
 * a recording are untrusted: every one is escaped with util/escape.h's
 * esc_text_for() before curses sees it (no control character, no invalid
 * UTF-8, nothing but ASCII in an ASCII locale). */
#define _GNU_SOURCE
#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

const char *text_bytes(char *buf, size_t cap, uint64_t v)
{
    return util_bytes(buf, cap, v);
}

int text_match(const char *hay, const char *needle)
{
    return *needle && strcasestr(hay, needle) != NULL;
}
