// SPDX-License-Identifier: MIT
/* Safe output of strings taken from a recording (function names, file
 * names, module paths, the program's name and arguments): a recording is
 * untrusted input, and a name holding ESC or another control character
 * must never reach a terminal as such. One implementation for every tool
 * (memprint, memrec's summary, memtui). Allocates; never linked into the
 * preload library. */
#ifndef ESCAPE_H
#define ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* How to use: text for a person goes through esc_text_fputs() (or
 * esc_text() for a buffer, as a curses front end needs); a JSON string
 * value goes through esc_json_fputs().
 *
 * Text form: the bytes of valid UTF-8 characters are copied, except
 * control characters; every control character (C0 0x00-0x1f, DEL 0x7f,
 * C1 U+0080-U+009F) and every byte that is not part of valid UTF-8 is
 * written as \xHH, so that the output holds no byte a terminal acts on.
 * A backslash is copied as it is: a program line quoted for the shell
 * ('it'\''s') must read as one, so a name that holds the four characters
 * "\x1b" reads like an escaped ESC (the JSON output tells them apart). A C1
 * character, two bytes in UTF-8, becomes \xc2\x9b (for example). */

/** Write `s` (NUL-terminated; NULL writes "?") to `f` in the text form. */
void esc_text_fputs(const char *s, FILE *f);
/** `s` in the text form, as a new string the caller frees (xmalloc:
 * dies when memory runs out). NULL gives "?". */
char *esc_text(const char *s);
/** As esc_text(), and with `ascii_only` every character outside ASCII is
 * written as \xHH of its bytes too: for a terminal whose locale is not
 * UTF-8 (memtui in the C locale). */
char *esc_text_for(const char *s, int ascii_only);
/** Write `s` as a JSON string value, quotes included (NULL writes null).
 * The output is valid UTF-8 whatever `s` holds: valid UTF-8 characters are
 * copied (quote, backslash and controls escaped as RFC 8259 asks, and DEL
 * and the C1 controls U+0080-U+009F escaped too, so that JSON printed to a
 * terminal is as safe as text), and
 * each byte that is not part of valid UTF-8 is written as the escape
 * \u00XX of its value (0x80-0xff). Valid characters U+0080-U+00FF are
 * copied as their UTF-8 bytes, never escaped (but for the C1 controls), so
 * an escape \u00a0-\u00ff in memrec's JSON always stands for an invalid
 * byte; \u0080-\u009f stands for a C1 control or for an invalid byte of
 * that value. */
void esc_json_fputs(const char *s, FILE *f);
/** Length of the valid UTF-8 character at `s` (at most `n` bytes
 * available), or 0 when the bytes there are not one (overlong forms,
 * surrogates and values above U+10FFFF are not valid). */
size_t esc_utf8_len(const unsigned char *s, size_t n);

#endif
