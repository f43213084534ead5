// SPDX-License-Identifier: MIT
/* crt.c's contract: the terminal (curses set-up and teardown, colours,
 * writing escaped text in cells). It knows nothing of the recording or of
 * the views. */
#ifndef TUI_CRT_H
#define TUI_CRT_H

#include <stddef.h>
#include <stdio.h>

enum crt_color {
    CRT_NORMAL,
    CRT_TITLE,
    CRT_SELECTED,
    CRT_MATCH,
    CRT_HEAP,
    CRT_MAPPED,
    CRT_RSS,
    CRT_WINDOW,
    CRT_LIVE,
    CRT_FLAME_A,
    CRT_FLAME_B,
    CRT_NCOLORS,
};

/** Batch mode: curses on a screen of w x h cells that goes nowhere
 * (/dev/null), no colours, no signal handlers. Returns 0, or -1 when
 * curses cannot start. */
int crt_init_batch(int w, int h);
/** 1 in batch mode (crt_init_batch()): no terminal to hand to a program. */
int crt_batch(void);
/** Batch mode: write the screen's text to `out`, one line per row,
 * trailing spaces removed. */
void crt_dump(FILE *out);
/** Refuse terminals curses cannot drive well (TERM unset or "dumb",
 * output not a terminal): 0 when usable, else -1 with a message in buf. */
int crt_check(char *buf, size_t cap);
/** Take the screen: curses, colours unless NO_COLOR, mouse, and signal
 * handlers that give the terminal back (SIGTERM, SIGINT, SIGHUP set a
 * flag; SIGSEGV, SIGABRT, SIGBUS, SIGFPE end curses and re-raise). */
void crt_init(void);
/** Give the terminal back. Idempotent. */
void crt_done(void);
/** Set by SIGINT/SIGTERM/SIGHUP: the loop ends. */
extern volatile int crt_quit_signal;
/** 1 when colours are in use. */
extern int crt_has_color;
/** Attribute of a role. */
int crt_attr(enum crt_color c);
/** Write `s` (escaped) at (y, x), at most `w` columns, with `attr`;
 * returns the columns written. */
int crt_put(int y, int x, const char *s, int w, int attr);
/** Fill `w` columns at (y, x) with `ch` (an ASCII character). */
void crt_fill(int y, int x, int w, char ch, int attr);
/** `s` written with its first occurrence of `hl` (case-insensitive) in
 * the match colour. */
int crt_put_hl(int y, int x, const char *s, int w, int attr, const char *hl);
/** A name in `w` columns at (y, x), as crt_put_hl() with `hl` but from
 * its column `skip` on (a horizontal scroll): where the name goes on past
 * the last column, or starts before the first, that column shows `more`
 * (one column: "…", or ">" in ASCII) instead, so a cut name reads as
 * cut. Returns the columns written. */
int crt_put_name(int y, int x, const char *s, int skip, int w, int attr, const char *hl, const char *more);

#endif
