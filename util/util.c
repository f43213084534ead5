// SPDX-License-Identifier: MIT
/* Message and memory helpers of the tools (see util.h). */
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *util_progname = "memrec";
void (*util_message_hook)(int last);

static void vreport(const char *prefix, int last, const char *fmt, va_list ap)
{
    if (util_message_hook) {
        util_message_hook(last);
    }
    fprintf(stderr, "%s: %s", util_progname, prefix);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("", 1, fmt, ap);
    va_end(ap);
    exit(1);
}

void die_code(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("", 1, fmt, ap);
    va_end(ap);
    exit(code);
}

int error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("", 0, fmt, ap);
    va_end(ap);
    return -1;
}

void warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("warning: ", 0, fmt, ap);
    va_end(ap);
}

void util_bug(const char *file, int line, const char *msg)
{
    fprintf(stderr, "%s: BUG at %s:%d: %s\n", util_progname, file, line, msg);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        die("out of memory (%zu bytes)", n);
    }
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        die("out of memory (%zu x %zu bytes)", n, size);
    }
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        die("out of memory (%zu bytes)", n);
    }
    return q;
}

char *xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d) {
        die("out of memory");
    }
    return d;
}

void xgrow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) {
        return;
    }
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        ncap *= 2;
    }
    *p = xrealloc(*p, ncap * elem);
    memset((char *)*p + *cap * elem, 0, (ncap - *cap) * elem);
    *cap = ncap;
}

size_t util_addf(char *buf, size_t cap, size_t at, const char *fmt, ...)
{
    if (at >= cap) {
        return at;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + at, cap - at, fmt, ap);
    va_end(ap);
    return n < 0 ? at : at + (size_t)n;
}

const char *util_bytes(char *buf, size_t cap, uint64_t bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    if (u == 0) {
        snprintf(buf, cap, "%llu B", (unsigned long long)bytes);
    } else {
        snprintf(buf, cap, "%.2f %s", v, units[u]);
    }
    return buf;
}

const char *util_ns(char *buf, size_t cap, uint64_t ns)
{
    if (ns < 1000) {
        snprintf(buf, cap, "%llu ns", (unsigned long long)ns);
    } else if (ns < 1000000) {
        snprintf(buf, cap, "%.2f us", (double)ns / 1e3);
    } else if (ns < 1000000000) {
        snprintf(buf, cap, "%.3f ms", (double)ns / 1e6);
    } else {
        snprintf(buf, cap, "%.3f s", (double)ns / 1e9);
    }
    return buf;
}

const char *util_plural(uint64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}
