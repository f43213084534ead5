// SPDX-License-Identifier: MIT
/* The conditions of memprint's CI gate (checks.h): parsing, evaluation on
 * the figures of figures.h, and printing. The figures are integers, so
 * every comparison is exact; only a percentage limit is a real number. */
#include "checks.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "util.h"

static const char *const op_text[] = {"==", "!=", "<", "<=", ">", ">="};

/* The names a condition may use, comma-separated, into `buf`. */
static void check_names(char *buf, size_t cap)
{
    size_t at = 0;
    if (cap) {
        buf[0] = 0;
    }
    for (size_t i = 0; i < FIGURES_COUNT && at < cap; i++) {
        int n = snprintf(buf + at, cap - at, "%s%s", i ? ", " : "", figures_name(i));
        if (n < 0) {
            break;
        }
        at += (size_t)n;
    }
}

/* The figure name at the start of `s` (letters, digits, '_'), looked up;
 * *end is set past it. */
static int parse_name(const char *s, const char **end, struct check *c, char *err, size_t cap)
{
    const char *p = s;
    while (isalnum((unsigned char)*p) || *p == '_') {
        p++;
    }
    *end = p;
    if (p == s) {
        snprintf(err, cap, "malformed condition '%s' (it does not start with a figure name)", s);
        return CHECK_E_SYNTAX;
    }
    char name[64];
    size_t len = (size_t)(p - s);
    int idx = -1;
    if (len < sizeof name) {
        memcpy(name, s, len);
        name[len] = 0;
        idx = figures_find(name);
    }
    if (idx < 0) {
        char names[1024];
        check_names(names, sizeof names);
        snprintf(err, cap, "unknown figure '%.*s' in '%s' (known: %s)", (int)(len > 60 ? 60 : len), s, s, names);
        return CHECK_E_NAME;
    }
    c->figure = idx;
    return 0;
}

/* A number with an optional K/M/G suffix (1024-based), the whole of `s`.
 * Integers are exact; a decimal point is taken as a real number and
 * rounded. With `percent`, a trailing '%' is allowed and reported. */
static int parse_value(const char *s, int64_t *out, int allow_percent, int *is_percent, double *percent)
{
    while (*s == ' ') {
        s++;
    }
    size_t len = strlen(s);
    while (len && s[len - 1] == ' ') {
        len--;
    }
    if (len == 0 || len > 40) {
        return -1;
    }
    char buf[48];
    memcpy(buf, s, len);
    buf[len] = 0;
    if (is_percent) {
        *is_percent = 0;
    }
    if (allow_percent && buf[len - 1] == '%') {
        buf[--len] = 0;
        char *end;
        errno = 0;
        double v = strtod(buf, &end);
        if (len == 0 || *end || errno || !isfinite(v) || v < 0 || !isdigit((unsigned char)buf[0])) {
            return -1;
        }
        *is_percent = 1;
        *percent = v;
        return 0;
    }
    uint64_t mult = 1;
    char last = (char)toupper((unsigned char)buf[len - 1]);
    if (last == 'K' || last == 'M' || last == 'G') {
        mult = last == 'K' ? 1024ull : last == 'M' ? 1024ull * 1024 : 1024ull * 1024 * 1024;
        buf[--len] = 0;
    }
    const char *digits = buf[0] == '-' ? buf + 1 : buf;
    if (len == 0 || !isdigit((unsigned char)digits[0])) {
        return -1;
    }
    char *end;
    errno = 0;
    if (strchr(buf, '.')) {
        double v = strtod(buf, &end);
        if (*end || errno || !isfinite(v) || fabs(v * (double)mult) > 9.0e18) {
            return -1;
        }
        *out = (int64_t)llround(v * (double)mult);
        return 0;
    }
    long long v = strtoll(buf, &end, 10);
    if (*end || errno) {
        return -1;
    }
    if (v > INT64_MAX / (long long)mult || v < INT64_MIN / (long long)mult) {
        return -1;
    }
    *out = (int64_t)v * (int64_t)mult;
    return 0;
}

int check_parse_condition(const char *text, struct check *c, char *err, size_t cap)
{
    memset(c, 0, sizeof *c);
    c->text = text;
    const char *p = text;
    while (*p == ' ') {
        p++;
    }
    int rc = parse_name(p, &p, c, err, cap);
    if (rc < 0) {
        return rc;
    }
    while (*p == ' ') {
        p++;
    }
    /* Two-character operators first: "<=" is not "<" followed by "=". */
    static const enum check_op order[] = {CHECK_EQ, CHECK_NE, CHECK_LE, CHECK_GE, CHECK_LT, CHECK_GT};
    int found = 0;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        const char *op = op_text[order[i]];
        if (strncmp(p, op, strlen(op)) == 0) {
            c->op = order[i];
            p += strlen(op);
            found = 1;
            break;
        }
    }
    if (!found) {
        snprintf(err, cap,
                 "malformed condition '%s' (expected NAME OP VALUE, OP one of == != < <= > >=, e.g. "
                 "'leaked_bytes==0' or 'peak_heap_bytes<50M')",
                 text);
        return CHECK_E_SYNTAX;
    }
    if (parse_value(p, &c->value, 0, NULL, NULL) < 0) {
        snprintf(err, cap, "malformed value in condition '%s' (expected an integer with an optional K, M or G suffix)",
                 text);
        return CHECK_E_SYNTAX;
    }
    return 0;
}

int check_parse_increase(const char *text, struct check *c, char *err, size_t cap)
{
    memset(c, 0, sizeof *c);
    c->text = text;
    c->is_increase = 1;
    const char *p = text;
    int rc = parse_name(p, &p, c, err, cap);
    if (rc < 0) {
        return rc;
    }
    if (*p != '=' || parse_value(p + 1, &c->value, 1, &c->is_percent, &c->percent) < 0 ||
        (!c->is_percent && c->value < 0)) {
        snprintf(err, cap,
                 "malformed limit '%s' (expected NAME=PERCENT%% or NAME=AMOUNT, e.g. 'peak_heap_bytes=5%%' or "
                 "'allocations=1K')",
                 text);
        return CHECK_E_SYNTAX;
    }
    return 0;
}

void check_eval(struct check *c, const struct figure *now, const struct figure *old)
{
    const struct figure *n = &now[c->figure];
    c->now = n->value;
    c->measured = n->measured;
    if (c->is_increase) {
        const struct figure *o = &old[c->figure];
        c->old = o->value;
        c->measured = c->measured && o->measured;
        /* A percentage of 0 is 0: a figure that was 0 may not grow at all
         * under a relative limit (say an absolute amount for such figures). */
        c->allowed = c->is_percent ? (double)c->old * c->percent / 100.0 : (double)c->value;
        if (c->allowed < 0) {
            c->allowed = 0; /* a negative baseline figure (-1: none) allows no increase */
        }
        c->pass = c->measured && (double)(c->now - c->old) <= c->allowed;
        return;
    }
    int64_t a = c->now, b = c->value;
    int ok = 0;
    switch (c->op) {
    case CHECK_EQ: ok = a == b; break;
    case CHECK_NE: ok = a != b; break;
    case CHECK_LT: ok = a < b; break;
    case CHECK_LE: ok = a <= b; break;
    case CHECK_GT: ok = a > b; break;
    case CHECK_GE: ok = a >= b; break;
    }
    c->pass = c->measured && ok;
}

/* One line: PASS or FAIL, the condition, the measured values. */
static void check_print_text(const struct check *c, FILE *f)
{
    const char *name = figures_name((size_t)c->figure);
    fputs(c->pass ? "PASS  " : "FAIL  ", f);
    if (!c->is_increase) {
        fprintf(f, "%s %s %lld: ", name, op_text[c->op], (long long)c->value);
        if (c->measured) {
            fprintf(f, "measured %lld\n", (long long)c->now);
        } else {
            fprintf(f, "not measured in this recording\n");
        }
        return;
    }
    if (c->is_percent) {
        fprintf(f, "%s may grow by %g%%: ", name, c->percent);
    } else {
        fprintf(f, "%s may grow by %lld: ", name, (long long)c->value);
    }
    if (!c->measured) {
        fprintf(f, "not measured in one of the recordings\n");
        return;
    }
    long long inc = (long long)(c->now - c->old);
    fprintf(f, "old %lld, new %lld, increase %+lld", (long long)c->old, (long long)c->now, inc);
    if (c->old > 0) {
        fprintf(f, " (%+.2f%%)", 100.0 * (double)inc / (double)c->old);
    }
    fprintf(f, ", limit %.0f\n", floor(c->allowed));
}

/* The check as given is the user's own text: written as a JSON string. */
static void json_text(const char *s, FILE *f)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            fprintf(f, "\\%c", *p);
        } else if (*p < 0x20 || *p >= 0x7f) {
            fprintf(f, "\\u%04x", *p);
        } else {
            fputc(*p, f);
        }
    }
    fputc('"', f);
}

/* One JSON object (docs/man/memprint.md lists its members). */
static void check_print_json(const struct check *c, FILE *f)
{
    fputs("{\"check\": ", f);
    json_text(c->text, f);
    fprintf(f, ", \"kind\": \"%s\", \"figure\": \"%s\"", c->is_increase ? "max_increase" : "condition",
            figures_name((size_t)c->figure));
    if (!c->is_increase) {
        fprintf(f, ", \"op\": \"%s\", \"value\": %lld", op_text[c->op], (long long)c->value);
        if (c->measured) {
            fprintf(f, ", \"measured\": %lld", (long long)c->now);
        } else {
            fputs(", \"measured\": null", f);
        }
    } else {
        if (c->is_percent) {
            fprintf(f, ", \"limit_percent\": %g, \"limit_amount\": null", c->percent);
        } else {
            fprintf(f, ", \"limit_percent\": null, \"limit_amount\": %lld", (long long)c->value);
        }
        if (c->measured) {
            fprintf(f, ", \"old\": %lld, \"new\": %lld, \"increase\": %lld, \"allowed\": %.0f", (long long)c->old,
                    (long long)c->now, (long long)(c->now - c->old), floor(c->allowed));
        } else {
            fputs(", \"old\": null, \"new\": null, \"increase\": null, \"allowed\": null", f);
        }
    }
    fprintf(f, ", \"pass\": %s}", c->pass ? "true" : "false");
}

/* ---- the gate ---- */

int checks_parse_all(const char *const *conds, size_t nconds, const char *const *incs, size_t nincs, struct check **out,
                     size_t *n, char *err, size_t cap)
{
    size_t total = nconds + nincs;
    struct check *c = xcalloc(total ? total : 1, sizeof *c);
    for (size_t i = 0; i < total; i++) {
        int rc = i < nconds ? check_parse_condition(conds[i], &c[i], err, cap)
                            : check_parse_increase(incs[i - nconds], &c[i], err, cap);
        if (rc < 0) {
            free(c);
            return rc;
        }
    }
    *out = c;
    *n = total;
    return 0;
}

int checks_gate_code(const struct check *c, size_t n, int whole, int baseline_whole)
{
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        failed += !c[i].pass;
    }
    return !whole || !baseline_whole ? 3 : failed ? 1 : 0;
}

void checks_print_gate_json(const struct check *c, size_t n, int code, const char *baseline, int baseline_whole,
                            FILE *f)
{
    const char *result = code == 3 ? "incomplete" : code == 1 ? "fail" : "pass";
    fprintf(f, ", \"gate\": {\"result\": \"%s\", \"exit_code\": %d, \"baseline\": ", result, code);
    if (baseline) {
        esc_json_fputs(baseline, f);
        fprintf(f, ", \"baseline_complete\": %s", baseline_whole ? "true" : "false");
    } else {
        fputs("null, \"baseline_complete\": null", f);
    }
    fputs(", \"checks\": [", f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", " : "", f);
        check_print_json(&c[i], f);
    }
    fputs("]}", f);
}

void checks_print_gate_text(const struct check *c, size_t n, size_t nconds, const char *baseline,
                            const struct figures_suppressed *suppressed, int code, int whole, FILE *f)
{
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == nconds) {
            fputs("baseline: ", f);
            esc_text_fputs(baseline, f);
            fputc('\n', f);
        }
        check_print_text(&c[i], f);
        failed += !c[i].pass;
    }
    if (suppressed->blocks) {
        char b1[32];
        fprintf(f,
                "leaks suppressed (not in leaked_bytes): %s (%llu bytes) in %llu %s; 'memprint FILE' lists "
                "them\n",
                util_bytes(b1, sizeof b1, suppressed->bytes), (unsigned long long)suppressed->bytes,
                (unsigned long long)suppressed->blocks, util_plural(suppressed->blocks, "block", "blocks"));
    }
    if (code == 3) {
        fprintf(f, "gate: INCOMPLETE: %s does not hold the whole run (see the warning above): the gate fails\n",
                !whole ? "the recording" : "the baseline");
    } else if (failed) {
        fprintf(f, "gate: FAIL (%zu of %zu check%s failed)\n", failed, n, n == 1 ? "" : "s");
    } else {
        fprintf(f, "gate: PASS (%zu check%s)\n", n, n == 1 ? "" : "s");
    }
}
