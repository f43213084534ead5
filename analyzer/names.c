// SPDX-License-Identifier: MIT
/* Template and parameter lists shortened (names.h). */
#include "names.h"

#include <stdint.h>
#include <string.h>

#include "util.h"

/* Index just past the bracket that closes the one at s[i] ('<' or '('),
 * counting both kinds; 0 when it is never closed. Operators inside
 * ("operator<" in a template argument) are rare enough to treat like any
 * bracket: the name is then left as it is. */
static size_t closing(const char *s, size_t i)
{
    int depth = 0;
    for (; s[i]; i++) {
        if (s[i] == '<' || s[i] == '(') {
            depth++;
        } else if (s[i] == '>' || s[i] == ')') {
            if (--depth == 0) {
                return i + 1;
            }
        }
    }
    return 0;
}

/* 1 when the bracket at s[i] belongs to an operator's name. */
static int is_operator(const char *s, size_t i)
{
    size_t j = i;
    /* "operator<<" and "operator<": skip back over the operator's own '<'.
     * A '(' is the operator's only in "operator()". */
    while (s[i] == '<' && j > 0 && s[j - 1] == '<') {
        j--;
    }
    return j >= 8 && strncmp(s + j - 8, "operator", 8) == 0;
}

char *names_shorten(const char *name)
{
    size_t len = strlen(name);
    char *out = xmalloc(len + 1);
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        char c = name[i];
        if ((c == '<' || c == '(') && !is_operator(name, i)) {
            size_t end = closing(name, i);
            if (end == 0) {
                memcpy(out + o, name + i, len - i); /* unbalanced: the rest as it is */
                o += len - i;
                break;
            }
            /* "(anonymous namespace)" and short lists stay. */
            if (end - i - 2 > NAMES_KEEP && strncmp(name + i, "(anonymous namespace)", 21) != 0) {
                /* "<…>" is 5 bytes: never longer than what it replaces. */
                out[o++] = c;
                memcpy(out + o, "\xe2\x80\xa6", 3);
                o += 3;
                out[o++] = c == '<' ? '>' : ')';
                i = end;
                continue;
            }
        }
        out[o++] = c;
        i++;
    }
    out[o] = 0;
    return out;
}

size_t names_utf8_len(const unsigned char *s)
{
    if (s[0] < 0x80) {
        return 1;
    }
    size_t n;
    uint32_t cp;
    if ((s[0] & 0xe0) == 0xc0) {
        n = 2;
        cp = s[0] & 0x1f;
    } else if ((s[0] & 0xf0) == 0xe0) {
        n = 3;
        cp = s[0] & 0x0f;
    } else if ((s[0] & 0xf8) == 0xf0) {
        n = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        /* A NUL ends the string here: it is no continuation byte. */
        if ((s[i] & 0xc0) != 0x80) {
            return 0;
        }
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff) {
        return 0;
    }
    return n;
}
