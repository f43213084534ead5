// SPDX-License-Identifier: MIT
/* Text for the screen: widths, numbers in one format, matching. Names from
 * a recording are untrusted: every one is escaped with util/escape.h's
 * esc_text_for() before curses sees it (no control character, no invalid
 * UTF-8, nothing but ASCII in an ASCII locale). */
#define _GNU_SOURCE
#include "tui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "report.h"
#include "util.h"

int text_width(const char *s)
{
    mbstate_t st;
    memset(&st, 0, sizeof st);
    int w = 0;
    size_t n = strlen(s);
    while (n > 0) {
        wchar_t wc;
        size_t len = mbrtowc(&wc, s, n, &st);
        if (len == 0 || len == (size_t)-1 || len == (size_t)-2) {
            w++;
            s++;
            n--;
            memset(&st, 0, sizeof st);
            continue;
        }
        int cw = wcwidth(wc);
        w += cw > 0 ? cw : 0;
        s += len;
        n -= len;
    }
    return w;
}

const char *text_cost(char *buf, size_t cap, uint64_t v)
{
    snprintf(buf, cap, "%llu", (unsigned long long)v);
    return buf;
}

const char *text_bytes(char *buf, size_t cap, uint64_t v)
{
    return util_bytes(buf, cap, v);
}

int text_match(const char *hay, const char *needle)
{
    return *needle && strcasestr(hay, needle) != NULL;
}
