// SPDX-License-Identifier: MIT
/* memprint: reads a memrec recording and prints the summary and the ranked
 * reports, as text or JSON. main() only: options, dispatch, exit codes. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calltree.h"
#include "folded.h"
#include "model.h"
#include "report.h"
#include "util.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: memprint [--json] [-n N] [-f FRAMES] FILE\n"
               "       memprint --folded OUT [--cost TYPE] FILE\n"
               "\n"
               "Prints the summary and the ranked reports of a memrec recording.\n"
               "\n"
               "  -j, --json          one JSON object instead of text\n"
               "  -F, --folded OUT    write folded stacks for flame graphs to OUT ('-': stdout)\n"
               "                      instead of the report\n"
               "  -c, --cost TYPE     cost of --folded: calls, temporary, peak, leaked,\n"
               "                      allocated, mapped (default peak)\n"
               "  -n, --top N         entries per section (default 10)\n"
               "  -f, --frames N      frames printed per call stack (default 48)\n"
               "  -h, --help          show this help\n"
               "  -V, --version       show the version\n");
}

static int parse_count(const char *s, const char *what)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*s == 0 || *end || errno || v < 0 || v > 1000000) {
        die_code(2, "invalid %s '%s' (expected a number from 0 to 1000000)", what, s);
    }
    return (int)v;
}

/* Folded stacks into `out`: written to a temporary name and renamed when
 * complete, so a failed run never leaves a file that looks whole. */
static void write_folded(const struct model *m, const char *out, enum cost_type cost)
{
    struct frames *fr = frames_new(m);
    if (!fr) {
        die("cannot start the symbolizer (libdw)");
    }
    struct calltree *t = calltree_build(fr, m->acct);
    calltree_sort(t, cost, 0);
    struct stat st;
    if (strcmp(out, "-") == 0) {
        if (folded_write(t, cost, stdout) < 0 || fflush(stdout) != 0) {
            die("cannot write the folded stacks: %s", strerror(errno));
        }
    } else if (stat(out, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* A device or a pipe (/dev/null, a FIFO): written to as it is.
         * Renaming a temporary file over it would replace it (as root,
         * /dev/null became a regular file). */
        FILE *f = fopen(out, "w");
        if (!f) {
            die("cannot write '%s': %s", out, strerror(errno));
        }
        int bad = folded_write(t, cost, f) < 0;
        bad |= fclose(f) != 0;
        if (bad) {
            die("cannot write '%s': %s", out, strerror(errno));
        }
    } else {
        size_t len = strlen(out) + 16;
        char *tmp = xmalloc(len);
        snprintf(tmp, len, "%s.tmp", out);
        FILE *f = fopen(tmp, "w");
        if (!f) {
            die("cannot write '%s': %s", tmp, strerror(errno));
        }
        int bad = folded_write(t, cost, f) < 0;
        bad |= fclose(f) != 0;
        if (bad || rename(tmp, out) != 0) {
            int e = errno;
            unlink(tmp);
            die("cannot write '%s': %s", out, strerror(e));
        }
        free(tmp);
    }
    calltree_free(t);
    frames_free(fr);
}

int main(int argc, char **argv)
{
    util_progname = "memprint";
    static const struct option longs[] = {
        {"json", no_argument, NULL, 'j'},         {"top", required_argument, NULL, 'n'},
        {"frames", required_argument, NULL, 'f'}, {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},      {"folded", required_argument, NULL, 'F'},
        {"cost", required_argument, NULL, 'c'},   {NULL, 0, NULL, 0},
    };
    struct report_options ro = {10, 48};
    int json = 0;
    const char *folded = NULL;
    enum cost_type cost = COST_PEAK;
    int cost_set = 0;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "jn:f:hVF:c:", longs, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 'n': ro.top = parse_count(optarg, "entry count"); break;
        case 'f': ro.max_frames = parse_count(optarg, "frame count"); break;
        case 'F': folded = optarg; break;
        case 'c':
            cost_set = 1;
            if (cost_parse(optarg, &cost) < 0) {
                die_code(2, "invalid cost '%s' (expected calls, temporary, peak, leaked, allocated or mapped)", optarg);
            }
            break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("memprint %s (format version %d)\n", MEMREC_VERSION, MEMFMT_VERSION); return 0;
        default:
            if (optopt && optopt != '?') {
                die_code(2, "unknown option '-%c' (see memprint --help)", optopt);
            }
            die_code(2, "unknown option '%s' (see memprint --help)", argv[optind - 1]);
        }
    }
    if (cost_set && !folded) {
        die_code(2, "--cost applies to --folded only (see memprint --help)");
    }
    if (optind != argc - 1) {
        usage(stderr);
        return 2;
    }
    const char *path = argv[optind];
    struct model *m;
    int err;
    int rc = model_load(path, &m, &err);
    if (rc < 0) {
        if (rc == MEMFMT_E_IO) {
            die("cannot read '%s': %s", path, strerror(err));
        }
        die("cannot read '%s': %s", path, memfmt_strerror(rc));
    }
    if (m->stop_rc == MEMFMT_E_TOOBIG) {
        warning("'%s' has a record larger than %u KiB (the format's limit) at byte %llu of its data: reporting "
                "what comes before",
                path, MEMFMT_MAX_RECORD >> 10, (unsigned long long)m->stop_offset);
    } else if (m->stop_rc < 0) {
        warning("'%s' is %s at byte %llu of its data: reporting what comes before", path,
                m->stop_rc == MEMFMT_E_IO ? strerror(err) : memfmt_strerror(m->stop_rc),
                (unsigned long long)m->stop_offset);
    } else if (!m->has_end) {
        warning("'%s' ends before memrec finished it (memrec was killed?): reporting what it holds", path);
    }
    if (m->has_end && m->end.how == MEMFMT_END_SIGNALED) {
        warning("the recorded process did not end normally: killed by signal %d (%s)", m->end.value,
                strsignal(m->end.value));
    } else if (m->has_end && m->end.how == MEMFMT_END_UNKNOWN) {
        warning("the recorded process did not end normally (killed or crashed; memrec was not its parent)");
    }
    if (m->impossible_sizes) {
        warning("'%s': %llu allocation%s larger than 128 TiB (impossible: corrupt data?) not counted", path,
                (unsigned long long)m->impossible_sizes, m->impossible_sizes == 1 ? "" : "s");
    }
    if (m->bad_records) {
        warning("'%s': %llu record%s could not be applied (corrupt data?)", path, (unsigned long long)m->bad_records,
                m->bad_records == 1 ? "" : "s");
    }
    if (folded) {
        /* Exit 3 as for the report: the stacks do not hold the whole recording. */
        int whole = model_complete(m);
        write_folded(m, folded, cost);
        model_free(m);
        return whole ? 0 : 3;
    }
    struct report *r = report_new(m);
    if (!r) {
        die("cannot start the symbolizer (libdw)");
    }
    if (json) {
        report_print_json(r, &ro, stdout);
    } else {
        report_print_text(r, &ro, stdout);
    }
    /* 3: the report is printed but does not hold the whole recording (the
     * data stops early, or records were refused): a script can tell. */
    int complete = model_complete(m);
    report_free(r);
    model_free(m);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        die("cannot write the report: %s", strerror(errno));
    }
    return complete ? 0 : 3;
}
