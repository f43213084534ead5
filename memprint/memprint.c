// SPDX-License-Identifier: MIT
/* memprint: reads a memrec recording and prints the summary and the ranked
 * reports, as text or JSON, or one of the analyses (flame graphs, a
 * comparison, sizes, heap over time), for the whole run or a window or
 * filter. main() only: options (mpopts.c), dispatch to a mode (modes.c),
 * exit codes; every figure and output comes from the analyzer library. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modes.h"
#include "mpopts.h"
#include "packwriter.h"
#include "symbolize.h"
#include "util.h"

/* memprint --pack IN OUT: only those, and no other option. */
static int run_pack(int argc, char **argv)
{
    int opts = 0;
    for (int i = 1; i < optind; i++) {
        opts += strcmp(argv[i], "--pack") != 0;
    }
    if (opts) {
        die_code(2, "--pack takes no other option (usage: memprint --pack IN OUT)");
    }
    if (argc - optind != 2) {
        die_code(2, "--pack needs an input and an output file (usage: memprint --pack IN OUT)");
    }
    const char *in = argv[optind], *out = argv[optind + 1];
    struct pack_stats st;
    char err[512];
    if (pack_file(in, out, &st, err, sizeof err) < 0) {
        die("%s", err);
    }
    pack_print_stats(&st, in, out, stdout);
    if (st.cut) {
        /* As for a report of a cut file: written, but not the whole run. */
        warning("'%s' is cut short at byte %llu of its data: '%s' holds what comes before, and has no end either", in,
                (unsigned long long)st.cut_offset, out);
        return 3;
    }
    if (st.no_end) {
        warning("'%s' has no end record (memrec was stopped or killed): '%s' has none either", in, out);
        return 3;
    }
    return 0;
}

int main(int argc, char **argv)
{
    util_progname = "memprint";
    /* Symbols resolved once are read back from the user's cache by the next run. */
    char *symbol_cache = symbolize_cache_dir_from_env();
    symbolize_set_cache_default(symbol_cache);
    free(symbol_cache);
    struct opts o;
    if (mpopts_parse(argc, argv, &o) == MPOPTS_DONE) {
        return 0;
    }
    if (o.pack) {
        return run_pack(argc, argv);
    }
    mpopts_check(&o);
    if (optind != argc - 1) {
        mpopts_usage(stderr);
        return 2;
    }
    if (o.gate.nchecks || o.gate.nincreases) {
        o.read_fail_code = 4;
        int code = mode_gate(&o, argv[optind]);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            die_code(4, "cannot write the checks: %s", strerror(errno));
        }
        mpopts_release(&o);
        return code;
    }
    int whole = o.diff_base ? mode_compare(&o, argv[optind]) : mode_report(&o, argv[optind]);
    mpopts_release(&o);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        die("cannot write the report: %s", strerror(errno));
    }
    /* 3: the output is written but does not hold the whole recording (the
     * data stops early, or records were refused): a script can tell. */
    return whole ? 0 : 3;
}
