// SPDX-License-Identifier: MIT
/* Unit tests of util/escape.c: the text form holds no byte a terminal acts
 * on and is unambiguous; the JSON form is valid UTF-8 whatever the input. */
#define _GNU_SOURCE
#include "escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static char *text_via_file(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    esc_text_fputs(s, f);
    fclose(f);
    return buf;
}

static char *json(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    esc_json_fputs(s, f);
    fclose(f);
    return buf;
}

/* esc_text() and esc_text_fputs() agree, and give `want`. */
static int text_is(const char *s, const char *want)
{
    char *a = esc_text(s);
    char *b = text_via_file(s);
    int ok = strcmp(a, want) == 0 && strcmp(b, want) == 0;
    if (!ok) {
        fprintf(stderr, "text of %s: '%s' / '%s', want '%s'\n", s ? s : "NULL", a, b, want);
    }
    free(a);
    free(b);
    return ok;
}

static int json_is(const char *s, const char *want)
{
    char *a = json(s);
    int ok = strcmp(a, want) == 0;
    if (!ok) {
        fprintf(stderr, "json: '%s', want '%s'\n", a, want);
    }
    free(a);
    return ok;
}

int main(void)
{
    CHECK(text_is("plain_name(int) const", "plain_name(int) const"));
    CHECK(text_is(NULL, "?"));
    CHECK(text_is("", ""));
    /* OSC title, clear screen, BEL, DEL, newline and tab. */
    CHECK(text_is("a\x1b]0;pwned\x07z", "a\\x1b]0;pwned\\x07z"));
    CHECK(text_is("\x1b[2J\x7f\n\t", "\\x1b[2J\\x7f\\x0a\\x09"));
    /* A backslash is copied: a program line quoted for the shell keeps its
     * quotes. */
    CHECK(text_is("'it'\\''s'", "'it'\\''s'"));
    /* Valid UTF-8 is copied (é, €, 𝄞), a C1 control (U+009B, CSI) is not. */
    CHECK(text_is("caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e"));
    CHECK(text_is("\xc2\x9b"
                  "31m",
                  "\\xc2\\x9b31m"));
    CHECK(text_is("\xc2\xa0", "\xc2\xa0"));
    /* Not UTF-8: a lone continuation byte, a raw C1 byte, a cut sequence,
     * an overlong form, a surrogate, a value above U+10FFFF. */
    CHECK(text_is("\x80", "\\x80"));
    CHECK(text_is("\x9b"
                  "2J",
                  "\\x9b2J"));
    CHECK(text_is("\xe2\x82", "\\xe2\\x82"));
    CHECK(text_is("\xc0\xaf", "\\xc0\\xaf"));
    CHECK(text_is("\xed\xa0\x80", "\\xed\\xa0\\x80"));
    CHECK(text_is("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"));
    CHECK(text_is("\xff\xfe", "\\xff\\xfe"));

    CHECK(json_is(NULL, "null"));
    CHECK(json_is("a\"b\\c", "\"a\\\"b\\\\c\""));
    CHECK(json_is("\x1b[2J\n", "\"\\u001b[2J\\u000a\""));
    CHECK(json_is("\x7f", "\"\\u007f\""));
    CHECK(json_is("\xc2\x9b", "\"\\u009b\""));
    CHECK(json_is("caf\xc3\xa9 \xc3\xbf", "\"caf\xc3\xa9 \xc3\xbf\""));
    CHECK(json_is("\xff", "\"\\u00ff\""));
    CHECK(json_is("a\xe2\x82z", "\"a\\u00e2\\u0082z\""));

    CHECK_EQ(esc_utf8_len((const unsigned char *)"\xf0\x9d\x84\x9e", 4), 4);
    CHECK_EQ(esc_utf8_len((const unsigned char *)"\xf0\x9d\x84\x9e", 3), 0);
    CHECK_EQ(esc_utf8_len((const unsigned char *)"\xe0\x9f\xbf", 3), 0); /* overlong */
    CHECK_EQ(esc_utf8_len((const unsigned char *)"\xef\xbf\xbf", 3), 3);
    return check_summary("test_escape");
}
