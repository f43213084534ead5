// SPDX-License-Identifier: MIT
/* memprint's command line: the options parsed into one struct, the checks
 * of which combine, and the help. Part of the program (memprint/), so it
 * ends the run itself on a bad option (exit 2, util.h's die_code()). */
#ifndef MPOPTS_H
#define MPOPTS_H

#include <stdint.h>
#include <stdio.h>

#include "costs.h"
#include "pprof.h"
#include "report.h"

/* --check, --baseline and --max-increase (checks.h), and the leak
 * suppressions (suppress.h), which the report and the checks both use. */
struct gate_opts {
    const char **checks, **increases, **supp_files;
    size_t nchecks, nincreases, nsupp, checks_cap, increases_cap, supp_cap;
    const char *baseline;
    int no_builtin, no_program;
};

struct opts {
    int json;
    struct report_options ro;
    const char *folded, *svg;
    enum cost_type cost;
    int cost_set, flame, reverse, sizes, timeline;
    uint32_t points;
    const char *diff_base;
    const char *from, *to, *at;
    uint32_t thread;
    const char *function, *exclude;
    int group; /* 0 stack, 1 site, 2 function */
    int threads;
    int by_stack;
    int alloc_time;
    const char *pprof, *massif;
    int pprof_at_set;
    enum pprof_at pprof_at;
    struct gate_opts gate; /* --check, --baseline, --max-increase, suppressions */
    int pack; /* --pack IN OUT: the file names are argv[optind], argv[optind + 1] */
    /* Exit code when a recording cannot be read: 1, or 4 with --check,
     * where 1 means a failed check. */
    int read_fail_code;
};

enum mpopts_result { MPOPTS_RUN, MPOPTS_DONE /* --help or --version printed: exit 0 */ };

/** Parse argv into `o` (getopt_long: optind is then the first file).
 * Dies with exit 2 on an unknown option or a malformed value. */
enum mpopts_result mpopts_parse(int argc, char **argv, struct opts *o);
/** The options that do not combine, every --check condition and every
 * suppressions file, checked before any recording is read: dies with
 * exit 2 on the first that fails. Not for --pack. */
void mpopts_check(const struct opts *o);
/** The help text. */
void mpopts_usage(FILE *f);
/** Release what mpopts_parse() allocated. */
void mpopts_release(struct opts *o);

#endif
