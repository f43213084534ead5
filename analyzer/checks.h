// SPDX-License-Identifier: MIT
/* memprint --check and --max-increase: conditions on the summary figures
 * (figures.h), parsed from the command line, tested on a recording's
 * figures (and a baseline's), printed as text or JSON. Pure apart from the
 * FILE it is given to print to; no allocation. */
#ifndef CHECKS_H
#define CHECKS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "figures.h"

/* Errors of the parsers, in the analyzer's scheme (negative values). */
#define CHECK_E_SYNTAX (-1) /* not of the form the option takes */
#define CHECK_E_NAME (-2) /* no figure of that name */

enum check_op { CHECK_EQ, CHECK_NE, CHECK_LT, CHECK_LE, CHECK_GT, CHECK_GE };

/* One --check condition (`figure op value`) or one --max-increase limit
 * (`figure=amount` or `figure=percent%`), and its result once evaluated. */
struct check {
    const char *text; /* as given on the command line (not copied) */
    int figure; /* index in figures.h's list */
    int is_increase; /* --max-increase, else --check */
    enum check_op op; /* --check */
    int64_t value; /* --check: the right-hand side; --max-increase: the amount when not a percentage */
    int is_percent; /* --max-increase: `percent` of the old value */
    double percent;
    /* Set by check_eval(). */
    int measured; /* 0: a figure the recording does not measure: the check fails */
    int64_t now, old; /* old: --max-increase only */
    double allowed; /* --max-increase: the increase allowed */
    int pass;
};

/** Parse a --check condition: a figure name, an operator (== != < <= > >=)
 * and an integer with an optional K, M or G suffix (times 1024, 1024^2,
 * 1024^3; a decimal point is allowed with a suffix: 1.5M). Spaces around
 * the operator are allowed. Returns 0, CHECK_E_SYNTAX or CHECK_E_NAME, with
 * a one-line message in `err` on error. */
int check_parse_condition(const char *text, struct check *c, char *err, size_t cap);
/** Parse a --max-increase limit: `figure=N` (N as in a condition, an
 * absolute amount) or `figure=P%` (P percent of the baseline's value; a
 * decimal point is allowed). Returns as check_parse_condition(). */
int check_parse_increase(const char *text, struct check *c, char *err, size_t cap);
/** Evaluate `c` on the figures `now` and, for --max-increase, `old` (the
 * baseline's; both FIGURES_COUNT entries from figures_collect()). A
 * percentage of an old value of 0 allows no increase at all. */
void check_eval(struct check *c, const struct figure *now, const struct figure *old);

/* ---- the gate: every check of one command line ---- */

/** Parse the conditions `conds[0 .. nconds)` and then the limits
 * `incs[0 .. nincs)` into a new array *out (xcalloc; the caller frees it)
 * of *n checks, in that order. Returns 0, or the first parser's error
 * with its message in `err`. */
int checks_parse_all(const char *const *conds, size_t nconds, const char *const *incs, size_t nincs, struct check **out,
                     size_t *n, char *err, size_t cap);
/** The gate's exit code for the evaluated `c[0 .. n)`: 0 all hold, 1 one
 * fails, 3 a recording is not whole (`whole`, `baseline_whole`): the gate
 * then fails whatever the checks say, as its figures may be short. */
int checks_gate_code(const struct check *c, size_t n, int whole, int baseline_whole);
/** The gate's JSON member `, "gate": {...}`: the result of `code`
 * (checks_gate_code()), the baseline's path (NULL: none) and whether it
 * was whole, and every check. */
void checks_print_gate_json(const struct check *c, size_t n, int code, const char *baseline, int baseline_whole,
                            FILE *f);
/** The gate as text: each check (the --max-increase ones, from index
 * `nconds`, after a line naming `baseline`), the leaks `suppressed`, and
 * the verdict of `code` (`whole`: the recording, not the baseline, was
 * whole). */
void checks_print_gate_text(const struct check *c, size_t n, size_t nconds, const char *baseline,
                            const struct figures_suppressed *suppressed, int code, int whole, FILE *f);

#endif
