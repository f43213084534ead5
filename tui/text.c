// SPDX-License-Identifier: MIT
/* Text for the screen: names from a recording are untrusted, so every one
 * is escaped before curses sees it (no control character, no invalid
 * UTF-8, nothing but ASCII in an ASCII locale); numbers in one format. */
#define _GNU_SOURCE
#include "tui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "report.h"
#include "util.h"

/* Length of the valid UTF-8 character at s (n bytes left), 0 if none:
 * overlong forms, surrogates and values above U+10FFFF are not valid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    unsigned v;
    if (c < 0x80) {
        return 1;
    } else if (c >= 0xc2 && c <= 0xdf) {
        len = 2, min = 0x80, v = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, min = 0x800, v = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, min = 0x10000, v = c & 0x07;
    } else {
        return 0;
    }
    if (n < len) {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            return 0;
        }
        v = (v << 6) | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) {
        return 0;
    }
    return len;
}

char *text_escape(const char *s, int utf8)
{
    if (!s) {
        return xstrdup("?");
    }
    size_t n = strlen(s);
    /* Worst case: every byte becomes \xHH. */
    char *out = xmalloc(4 * n + 1);
    char *o = out;
    const unsigned char *p = (const unsigned char *)s;
    while (n > 0) {
        size_t len = utf8_len(p, n);
        int c1 = len == 2 && p[0] == 0xc2 && p[1] < 0xa0; /* C1 control */
        if (len == 1 && *p >= 0x20 && *p != 0x7f && *p != '\\') {
            *o++ = (char)*p;
        } else if (len == 1 && *p == '\\') {
            *o++ = '\\';
            *o++ = '\\';
        } else if (len > 1 && utf8 && !c1) {
            memcpy(o, p, len);
            o += len;
        } else {
            if (len == 0) {
                len = 1;
            }
            for (size_t i = 0; i < len; i++) {
                o += sprintf(o, "\\x%02x", p[i]);
            }
        }
        p += len;
        n -= len;
    }
    *o = 0;
    return out;
}

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
