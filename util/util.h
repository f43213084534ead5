// SPDX-License-Identifier: MIT
/* Helpers for the command-line tools: messages in one style, memory that
 * dies on exhaustion. Never linked into the recorder library: these
 * allocate and print. */
#ifndef UTIL_H
#define UTIL_H

#include <stddef.h>
#include <stdint.h>

/** Program name used as the message prefix ("memprint"). Set once in main(). */
extern const char *util_progname;
/* Called before each message of die(), die_code(), error() and warning()
 * (`last`: the process ends after it), so that a progress line on stderr
 * is erased first (progress.c sets it). NULL: none. */
extern void (*util_message_hook)(int last);

/** Print "<prog>: <message>" to stderr and exit(1). */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/** Print "<prog>: <message>" to stderr and exit with `code`. */
void die_code(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
/** Print "<prog>: <message>" to stderr; returns -1. */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** Print "<prog>: warning: <message>" to stderr. */
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** An internal error: file:line and message, then abort(). */
#define BUG(msg) util_bug(__FILE__, __LINE__, (msg))
void util_bug(const char *file, int line, const char *msg) __attribute__((noreturn));

/** malloc/calloc/realloc/strdup that die when memory runs out. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/** Grow `*p` (of `*cap` elements of `elem` bytes) to hold at least `need`. */
void xgrow(void **p, size_t *cap, size_t need, size_t elem);

/** Append to the string in buf[0..cap) at offset `at`, as snprintf() at
 * buf + at would: the text is cut to fit and stays NUL-terminated. Returns
 * the offset of the end of the whole text, which may pass `cap` when it
 * was cut (a later call at such an offset adds nothing), or `at` on an
 * encoding error. Builds a line from pieces without a length check per
 * piece. */
size_t util_addf(char *buf, size_t cap, size_t at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/** Human-readable bytes into buf: "512 B" below 1 KiB, else two decimals and a binary unit
 * ("1.50 MiB"). Returns buf. */
const char *util_bytes(char *buf, size_t cap, uint64_t bytes);
/** `one` when n is 1, else `many`: "1 block", "2 blocks", "0 blocks". */
const char *util_plural(uint64_t n, const char *one, const char *many);
/** A duration in nanoseconds the human way ("850 ns", "12.50 us",
 * "3.214 ms", "1.500 s") into buf; returns buf. */
const char *util_ns(char *buf, size_t cap, uint64_t ns);

#endif
