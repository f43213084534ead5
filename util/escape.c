// SPDX-License-Identifier: MIT
/* Escaping of untrusted strings for terminals and JSON (see escape.h). */
#include "escape.h"

#include <string.h>

#include "util.h"

size_t esc_utf8_len(const unsigned char *s, size_t n)
{
    if (n == 0) {
        return 0;
    }
    unsigned c = s[0];
    if (c < 0x80) {
        return 1;
    }
    size_t len;
    unsigned lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0) {
            lo = 0xa0; /* not overlong */
        } else if (c == 0xed) {
            hi = 0x9f; /* no surrogates */
        }
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0) {
            lo = 0x90;
        } else if (c == 0xf4) {
            hi = 0x8f; /* at most U+10FFFF */
        }
    } else {
        return 0;
    }
    if (n < len || s[1] < lo || s[1] > hi) {
        return 0;
    }
    for (size_t i = 2; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            return 0;
        }
    }
    return len;
}

/* The text form of the character at s: copied into out (at most 8 bytes)
 * or escaped. Returns bytes written to out; *used says how many of s. */
static size_t text_step(const unsigned char *s, size_t n, char out[16], size_t *used, int ascii_only)
{
    static const char hex[] = "0123456789abcdef";
    size_t len = esc_utf8_len(s, n);
    int control = len == 1 ? (s[0] < 0x20 || s[0] == 0x7f) : (len == 2 && s[0] == 0xc2 && s[1] < 0xa0);
    if (len > 0 && !control && (len == 1 || !ascii_only)) {
        memcpy(out, s, len);
        *used = len;
        return len;
    }
    /* A control character (one or two bytes), a byte that is not UTF-8, or
     * a character an ASCII-only output cannot show. */
    size_t k = len > 0 ? len : 1;
    size_t o = 0;
    for (size_t i = 0; i < k; i++) {
        out[o++] = '\\';
        out[o++] = 'x';
        out[o++] = hex[s[i] >> 4];
        out[o++] = hex[s[i] & 15];
    }
    *used = k;
    return o;
}

void esc_text_fputs(const char *s, FILE *f)
{
    if (!s) {
        fputc('?', f);
        return;
    }
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    while (n > 0) {
        /* Runs of plain printable ASCII go out in one call. */
        size_t run = 0;
        while (run < n && p[run] >= 0x20 && p[run] < 0x7f) {
            run++;
        }
        if (run > 0) {
            fwrite(p, 1, run, f);
            p += run;
            n -= run;
            continue;
        }
        char out[16];
        size_t used;
        size_t k = text_step(p, n, out, &used, 0);
        fwrite(out, 1, k, f);
        p += used;
        n -= used;
    }
}

char *esc_text(const char *s)
{
    return esc_text_for(s, 0);
}

char *esc_text_for(const char *s, int ascii_only)
{
    if (!s) {
        return xstrdup("?");
    }
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    /* Each input byte becomes at most 4 output bytes (\xHH). */
    char *d = xmalloc(n * 4 + 1);
    size_t o = 0;
    while (n > 0) {
        size_t used;
        o += text_step(p, n, d + o, &used, ascii_only);
        p += used;
        n -= used;
    }
    d[o] = 0;
    return d;
}

void esc_json_fputs(const char *s, FILE *f)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    while (n > 0) {
        unsigned c = p[0];
        size_t len = esc_utf8_len(p, n);
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc((int)c, f);
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(f, "\\u%04x", c);
        } else if (len == 2 && c == 0xc2 && p[1] < 0xa0) {
            fprintf(f, "\\u%04x", p[1]); /* a C1 control: escaped, as terminals may act on it */
        } else if (len == 0) {
            fprintf(f, "\\u%04x", c); /* not UTF-8: the byte's value */
            len = 1;
        } else {
            fwrite(p, 1, len, f);
        }
        len = len ? len : 1;
        p += len;
        n -= len;
    }
    fputc('"', f);
}
