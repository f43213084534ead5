// SPDX-License-Identifier: MIT
/* Parsing memtui's filter and making its keep mask (filter.h). */
#define _GNU_SOURCE
#include "filter.h"

#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memfmt.h"
#include "wrappers.h"

static const char *const field_words[] = {"function", "file", "module"};

/* `s` starts with `word` and a space: the rest after the spaces; else NULL. */
static const char *after_word(const char *s, const char *word)
{
    size_t n = strlen(word);
    if (strncmp(s, word, n) != 0 || (s[n] != ' ' && s[n] != '\t')) {
        return NULL;
    }
    s += n;
    while (*s == ' ' || *s == '\t') {
        s++;
    }
    return s;
}

int filter_parse(const char *spec, struct filter *f, char *err, size_t cap)
{
    memset(f, 0, sizeof *f);
    while (*spec == ' ' || *spec == '\t') {
        spec++;
    }
    if (!*spec) {
        return 0;
    }
    const char *rest = after_word(spec, "thread");
    if (rest) {
        char *end;
        unsigned long n = strtoul(rest, &end, 10);
        if (!isdigit((unsigned char)*rest) || *end || n == 0 || n > UINT32_MAX) {
            snprintf(err, cap, "not a thread: '%s' (expected thread N, N from 1: memprint --threads)", rest);
            return -1;
        }
        f->on = 1;
        f->thread = (uint32_t)n;
        snprintf(f->text, sizeof f->text, "thread %u", f->thread);
        return 0;
    }
    f->field = ANALYSIS_FIELD_FUNCTION;
    rest = spec;
    for (int i = 0; i < 3; i++) {
        const char *r = after_word(spec, field_words[i]);
        if (r) {
            f->field = (enum analysis_field)i;
            rest = r;
            break;
        }
    }
    if (*rest == '!') {
        f->exclude = 1;
        rest++;
    }
    if (!*rest || strlen(rest) >= sizeof f->re) {
        snprintf(err, cap, "%s", *rest ? "the expression is too long" : "no expression to filter with");
        return -1;
    }
    regex_t re;
    int rc = regcomp(&re, rest, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        char msg[128];
        regerror(rc, &re, msg, sizeof msg);
        snprintf(err, cap, "invalid regular expression '%s': %s", rest, msg);
        return -1;
    }
    regfree(&re);
    memcpy(f->re, rest, strlen(rest) + 1);
    f->on = 1;
    snprintf(f->text, sizeof f->text, "%s %s'%s'", field_words[f->field], f->exclude ? "not " : "", f->re);
    return 0;
}

int filter_mask(const struct filter *f, struct frames *fr, uint8_t **mask, char *err, size_t cap)
{
    *mask = NULL;
    if (!f->on || !f->re[0]) {
        return 0;
    }
    return analysis_keep_frames(fr, f->field, f->exclude ? NULL : f->re, f->exclude ? f->re : NULL, mask, err, cap);
}

const char *fold_regex(const struct fold *f, char *buf, size_t cap)
{
    if (!f->re[0]) {
        snprintf(buf, cap, "%s", wrappers_known);
    } else {
        snprintf(buf, cap, "%s|%s", wrappers_known, f->re);
    }
    return buf;
}
