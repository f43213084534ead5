// SPDX-License-Identifier: MIT
/* memprint: reads a memrec recording and prints the summary and the ranked
 * reports, as text or JSON, or one of the analyses (flame graphs, a
 * comparison, sizes, heap over time), for the whole run or a window or
 * filter. main() only: options, dispatch, exit codes; every figure comes
 * from the analyzer library. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloctime.h"
#include "analysis.h"
#include "calltree.h"
#include "checks.h"
#include "charts.h"
#include "diff.h"
#include "escape.h"
#include "folded.h"
#include "groups.h"
#include "massif.h"
#include "model.h"
#include "packwriter.h"
#include "pprof.h"
#include "report.h"
#include "rssgap.h"
#include "suppress.h"
#include "svg.h"
#include "threadcosts.h"
#include "util.h"

/* ---- the CI gate: options (the rest is after compare()) ---- */

/* --check, --baseline and --max-increase (checks.h), and the leak
 * suppressions (suppress.h), which the report and the checks both use. */
struct gate_opts {
    const char **checks, **increases, **supp_files;
    size_t nchecks, nincreases, nsupp, checks_cap, increases_cap, supp_cap;
    const char *baseline;
    int no_builtin, no_program;
};

enum { GATE_CHECK, GATE_BASELINE, GATE_MAX_INCREASE, GATE_SUPPRESSIONS, GATE_NO_BUILTIN, GATE_NO_PROGRAM };

static const char gate_usage[] = "\nCI gate (exit 0: every check holds; 1: one fails; 2: a malformed condition or\n"
                                 "unknown figure; 3: a recording is incomplete; 4: a recording cannot be read):\n"
                                 "      --check COND    condition on a figure of the JSON summary, e.g.\n"
                                 "                      'leaked_bytes==0' or 'peak_heap_bytes<50M' (== != < <= > >=;\n"
                                 "                      K, M, G are 1024-based); prints each check instead of the\n"
                                 "                      report (with --json: added to the report as \"gate\")\n"
                                 "      --baseline OLD  the earlier recording --max-increase compares with\n"
                                 "      --max-increase FIGURE=LIMIT  how much FIGURE may grow from OLD: a\n"
                                 "                      percentage of OLD's value (5%) or an amount (1M)\n"
                                 "Leak suppressions (the report and --check; LeakSanitizer's format):\n"
                                 "      --suppressions FILE  'leak:PATTERN' lines; may be repeated\n"
                                 "      --no-builtin-suppressions  not memprint's list of one-time allocations\n"
                                 "                      of glibc, ld.so and libstdc++\n"
                                 "      --no-program-suppressions  not the program's __lsan_default_suppressions()\n";

static void gate_push(const char ***v, size_t *n, size_t *cap, const char *s)
{
    xgrow((void **)v, cap, *n + 1, sizeof **v);
    (*v)[(*n)++] = s;
}

static void gate_opts_release(struct gate_opts *g)
{
    free(g->checks);
    free(g->increases);
    free(g->supp_files);
}

/* One of the gate's options (`which`: GATE_*). */
static void gate_option(int which, const char *arg, struct gate_opts *g)
{
    switch (which) {
    case GATE_CHECK: gate_push(&g->checks, &g->nchecks, &g->checks_cap, arg); break;
    case GATE_BASELINE: g->baseline = arg; break;
    case GATE_MAX_INCREASE: gate_push(&g->increases, &g->nincreases, &g->increases_cap, arg); break;
    case GATE_SUPPRESSIONS: gate_push(&g->supp_files, &g->nsupp, &g->supp_cap, arg); break;
    case GATE_NO_BUILTIN: g->no_builtin = 1; break;
    case GATE_NO_PROGRAM: g->no_program = 1; break;
    default: break;
    }
}

static void usage(FILE *f)
{
    fprintf(f, "usage: memprint [OPTIONS] FILE\n"
               "       memprint --diff BASE [OPTIONS] NEW\n"
               "       memprint --pack IN OUT\n"
               "\n"
               "Prints the summary and the ranked reports of a memrec recording, or one of\n"
               "its analyses.\n"
               "\n"
               "Output:\n"
               "  -j, --json          one JSON object instead of text\n"
               "  -n, --top N         entries per section (default 10)\n"
               "  -f, --frames N      frames printed per call stack (default 48)\n"
               "      --sections LIST ranked sections to print, comma-separated: calls, peak,\n"
               "                      temporary, leaked, allocated, mapped, time (default all;\n"
               "                      time: only in recordings made with memrec --time)\n"
               "      --full-names    C++ names in full (text shortens long template lists)\n"
               "      --threads       add a section of each thread's calls, peak contribution and\n"
               "                      leaks (a second pass over the file; whole run only)\n"
               "      --group HOW     rank the text report by 'stack' (default), 'site' (allocation\n"
               "                      site, its call stacks below) or 'function' (inclusive cost)\n"
               "  -F, --folded OUT    write folded stacks for flame graphs to OUT ('-': stdout)\n"
               "      --svg OUT       write an interactive SVG flame graph to OUT ('-': stdout)\n"
               "  -c, --cost TYPE     cost of --folded and --svg: calls, temporary, peak,\n"
               "                      leaked, allocated, mapped, time (default peak)\n"
               "      --flame         --svg: root at the bottom (default: icicle, root on top)\n"
               "      --reverse       --svg: allocation sites first (bottom-up tree)\n"
               "      --sizes         histogram of requested sizes instead of the report\n"
               "      --by-stack      --sizes: also the sizes of the -n call stacks with the most\n"
               "                      calls (a table of every stack and size: slower)\n"
               "      --timeline      heap, mapped memory and RSS over the run instead of the\n"
               "                      report (with --json: the series)\n"
               "      --points N      points of the --timeline --json series (default 1000,\n"
               "                      at most 5000)\n"
               "      --diff BASE     compare BASE with NEW (summary, most changed stacks;\n"
               "                      with --folded or --svg: a differential flame graph)\n"
               "      --alloc-time    allocator time per size class, function and thread\n"
               "                      (calls, total, mean, p50, p99, max) instead of the report;\n"
               "                      with --diff: both recordings side by side (memrec --time)\n"
               "      --pprof OUT     write a gzip'd profile.proto for pprof to OUT ('-': stdout):\n"
               "                      alloc_objects, alloc_space, inuse_objects, inuse_space\n"
               "      --pprof-at WHEN inuse_* of --pprof: live at the 'end' (default) or at the\n"
               "                      heap 'peak'\n"
               "      --massif OUT    write valgrind massif's massif.out to OUT ('-': stdout), for\n"
               "                      ms_print and massif-visualizer (whole run only)\n"
               "\n"
               "What is counted (every figure, section and export follows):\n"
               "      --from T        only allocations made at or after T seconds ('peak': the\n"
               "                      heap peak's time)\n"
               "      --to T          only allocations made before T seconds\n"
               "      --at T          the run up to T seconds: leaked = live at T\n"
               "      --thread N      only allocations of thread N (1: the first thread)\n"
               "      --function RE   only stacks through a function matching RE (extended\n"
               "                      regular expression)\n"
               "      --exclude RE    no stack through a function matching RE\n"
               "\n"
               "Portable recordings:\n"
               "      --pack IN OUT   write to OUT a copy of the recording IN that carries the\n"
               "                      symbolized frames (functions, files, lines, inline chains)\n"
               "                      of its stacks: OUT reads the same where the program's\n"
               "                      files are absent; a packed file says 'packed' in its summary\n"
               "\n"
               "  -h, --help          show this help\n"
               "  -V, --version       show the version\n");
    /* The CI gate and suppressions, kept apart from the lines above. */
    fputs(gate_usage, f);
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

enum {
    OPT_SVG = 256,
    OPT_FLAME,
    OPT_REVERSE,
    OPT_SIZES,
    OPT_TIMELINE,
    OPT_POINTS,
    OPT_DIFF,
    OPT_FROM,
    OPT_TO,
    OPT_AT,
    OPT_THREAD,
    OPT_FUNCTION,
    OPT_EXCLUDE,
    OPT_FULL_NAMES,
    OPT_SECTIONS,
    OPT_GROUP,
    OPT_THREADS,
    OPT_BY_STACK,
    OPT_ALLOC_TIME,
    OPT_PPROF,
    OPT_PPROF_AT,
    OPT_MASSIF,
    OPT_PACK,
    OPT_GATE_FIRST /* the CI gate's options (GATE_*) take the numbers from here on */
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
};

/* One recording and the accounting its query gives. */
struct source {
    const char *path;
    struct model *m;
    struct frames *fr; /* NULL until needed */
    uint8_t *keep;
    struct analysis *a; /* NULL when nothing is restricted */
    const struct accounting *acct; /* a->acct or m->acct */
    struct model view; /* the model with acct: what the reports read */
    struct analysis_query q;
    char note[512];
    char json[512];
};

/* Exit code when a recording cannot be read: 1, or 4 with --check, where 1
 * means a failed check. */
static int read_fail_code = 1;

static void load_model(struct source *s, const struct model_hook *hook)
{
    int err;
    int rc = model_load_hooked(s->path, hook, &s->m, &err);
    if (rc < 0) {
        if (rc == MEMFMT_E_IO) {
            die_code(read_fail_code, "cannot read '%s': %s", s->path, strerror(err));
        }
        die_code(read_fail_code, "cannot read '%s': %s", s->path, memfmt_strerror(rc));
    }
    const struct model *m = s->m;
    if (m->stop_rc == MEMFMT_E_TOOBIG) {
        warning("'%s' has a record larger than %u KiB (the format's limit) at byte %llu of its data: reporting "
                "what comes before",
                s->path, MEMFMT_MAX_RECORD >> 10, (unsigned long long)m->stop_offset);
    } else if (m->stop_rc < 0) {
        warning("'%s' is %s at byte %llu of its data: reporting what comes before", s->path,
                m->stop_rc == MEMFMT_E_IO ? strerror(err) : memfmt_strerror(m->stop_rc),
                (unsigned long long)m->stop_offset);
    } else if (!m->has_end) {
        warning("'%s' ends before memrec finished it (memrec was killed?): reporting what it holds", s->path);
    }
    if (m->has_end && m->end.how == MEMFMT_END_SIGNALED) {
        warning("the recorded process did not end normally: killed by signal %d (%s)", m->end.value,
                strsignal(m->end.value));
    } else if (m->has_end && m->end.how == MEMFMT_END_UNKNOWN) {
        warning("the recorded process did not end normally (killed or crashed; memrec was not its parent)");
    }
    if (m->impossible_sizes) {
        warning("'%s': %llu allocation%s larger than 128 TiB (impossible: corrupt data?) not counted", s->path,
                (unsigned long long)m->impossible_sizes, m->impossible_sizes == 1 ? "" : "s");
    }
    if (m->beyond_total) {
        warning("'%s': %llu allocation%s or mapping%s not counted: the totals would pass 2^63 bytes (corrupt data?)",
                s->path, (unsigned long long)m->beyond_total, m->beyond_total == 1 ? "" : "s",
                m->beyond_total == 1 ? "" : "s");
    }
    if (m->bad_records) {
        warning("'%s': %llu record%s could not be applied (corrupt data?)", s->path, (unsigned long long)m->bad_records,
                m->bad_records == 1 ? "" : "s");
    }
}

/* Seconds (or "peak": the heap peak's time, which needs the model `m`)
 * into milliseconds. */
static uint64_t parse_time(const char *s, const struct model *m, const char *opt)
{
    if (strcmp(s, "peak") == 0) {
        return m ? accounting_totals(m->acct)->peak_ms : 0;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*s == 0 || *end || errno || !isfinite(v) || v < 0 || v > 1e12) {
        die_code(2, "invalid time '%s' for %s (expected seconds, e.g. 1.5, or 'peak')", s, opt);
    }
    return (uint64_t)llround(v * 1000.0);
}

static struct frames *frames_of(struct source *s)
{
    if (!s->fr) {
        s->fr = frames_new(s->m);
        if (!s->fr) {
            die("cannot start the symbolizer (libdw)");
        }
    }
    return s->fr;
}

static size_t add(char *buf, size_t cap, size_t at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static size_t add(char *buf, size_t cap, size_t at, const char *fmt, ...)
{
    if (at >= cap) {
        return at;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + at, cap - at, fmt, ap);
    va_end(ap);
    return n < 0 ? at : at + (size_t)n;
}

/* The query the options ask for, run on `s`; the note and JSON members
 * that say what was counted. */
static void make_query(struct source *s, const struct opts *o, const struct model *m)
{
    struct analysis_query *q = &s->q;
    *q = (struct analysis_query)ANALYSIS_QUERY_INIT;
    if (o->from || o->to) {
        q->has_window = 1;
        q->from_ms = o->from ? parse_time(o->from, m, "--from") : 0;
        q->to_ms = o->to ? parse_time(o->to, m, "--to") : UINT64_MAX;
        if (o->to && strcmp(o->to, "peak") == 0) {
            q->to_ms++; /* the peak's own moment is in the window */
        }
        if (q->from_ms >= q->to_ms) {
            die_code(2, "empty time window: --from must come before --to");
        }
    }
    if (o->at) {
        q->has_at = 1;
        /* Reading stops at the first clock tick at or after T: with
         * 'peak', the events stamped with the peak's tick are read. */
        q->at_ms = parse_time(o->at, m, "--at") + (strcmp(o->at, "peak") == 0);
    }
    q->thread = o->thread;
    q->sizes = o->sizes ? 1 + o->by_stack : 0;
    if (o->timeline) {
        q->series_points = o->json ? o->points : CHARTS_COLUMNS;
    }
}

static int uses_peak(const char *t)
{
    return t && strcmp(t, "peak") == 0;
}

/* Loads `s` and runs the query the options ask for: during the load when
 * it can (analysis.h, streaming: one read of the file), else in a second
 * pass. Then the note and JSON members that say what was counted. */
static void open_source(struct source *s, const struct opts *o)
{
    struct analysis_query *q = &s->q;
    int need_model = uses_peak(o->from) || uses_peak(o->to) || uses_peak(o->at) || o->function || o->exclude;
    struct analysis_stream *st = NULL;
    struct model_hook hook;
    if (!need_model) {
        make_query(s, o, NULL);
        int wanted = q->has_window || q->has_at || q->thread || q->sizes || q->series_points;
        st = wanted ? analysis_stream_new(q, &hook) : NULL;
    }
    load_model(s, st ? &hook : NULL);
    const struct model *m = s->m;
    make_query(s, o, m);
    if (o->function || o->exclude) {
        char err[256];
        if (analysis_keep_functions(frames_of(s), o->function, o->exclude, &s->keep, err, sizeof err) < 0) {
            die_code(2, "invalid regular expression for --%s: %s", o->function ? "function" : "exclude", err);
        }
        q->keep = s->keep;
    }
    int restricted = q->has_window || q->has_at || q->thread || q->keep;
    if (st) {
        s->a = analysis_stream_finish(st, m);
    } else if (restricted || q->sizes || q->series_points) {
        int err;
        int rc = analysis_run(s->path, m, q, &s->a, &err);
        if (rc < 0) {
            die_code(read_fail_code, "cannot read '%s' again: %s", s->path,
                     rc == MEMFMT_E_IO ? strerror(err) : memfmt_strerror(rc));
        }
    }
    /* Unrestricted, the model's figures are the query's (a streamed pass
     * then accounts no events: analysis.h). */
    s->acct = restricted ? s->a->acct : m->acct;
    s->view = *m;
    s->view.acct = (struct accounting *)s->acct;
    if (restricted) {
        s->view.has_counts = 0; /* the exact per-thread counts are the whole run's */
    }
    size_t n = 0, j = 0;
    if (q->has_window) {
        n = add(s->note, sizeof s->note, n, "window: allocations made from %.3f s", (double)q->from_ms / 1000.0);
        if (q->to_ms != UINT64_MAX) {
            n = add(s->note, sizeof s->note, n, " to %.3f s", (double)q->to_ms / 1000.0);
        }
        n = add(s->note, sizeof s->note, n,
                ", followed to the end; %llu %s (%llu bytes) allocated before it and freed in it are not "
                "counted",
                (unsigned long long)s->a->earlier_freed_blocks,
                util_plural(s->a->earlier_freed_blocks, "block", "blocks"),
                (unsigned long long)s->a->earlier_freed_bytes);
        j = add(s->json, sizeof s->json, j, ", \"window_from_ms\": %llu, \"window_to_ms\": %lld",
                (unsigned long long)q->from_ms, q->to_ms == UINT64_MAX ? -1LL : (long long)q->to_ms);
        j = add(s->json, sizeof s->json, j, ", \"earlier_freed_blocks\": %llu, \"earlier_freed_bytes\": %llu",
                (unsigned long long)s->a->earlier_freed_blocks, (unsigned long long)s->a->earlier_freed_bytes);
    }
    if (q->has_at) {
        n = add(s->note, sizeof s->note, n, "%sat %.3f s: the run up to that moment (leaked: live then)", n ? "; " : "",
                (double)q->at_ms / 1000.0);
        j = add(s->json, sizeof s->json, j, ", \"at_ms\": %llu", (unsigned long long)q->at_ms);
    }
    if (q->thread) {
        n = add(s->note, sizeof s->note, n, "%sthread %u only", n ? "; " : "", q->thread);
        j = add(s->json, sizeof s->json, j, ", \"thread\": %u", q->thread);
    }
    if (q->keep) {
        /* The expressions are the user's own, from the command line. */
        n = add(s->note, sizeof s->note, n, "%sstacks filtered by function", n ? "; " : "");
        j = add(s->json, sizeof s->json, j, ", \"function_filter\": true");
    }
}

static void source_release(struct source *s)
{
    analysis_free(s->a);
    free(s->keep);
    frames_free(s->fr);
    model_free(s->m);
}

/* ---- writing files ---- */

typedef int (*write_fn)(void *ctx, FILE *f);

/* Into `out` ('-': stdout): written to a temporary name and renamed when
 * complete, so a failed run never leaves a file that looks whole. */
static void write_out(const char *out, const char *what, write_fn fn, void *ctx)
{
    if (strcmp(out, "-") == 0) {
        if (fn(ctx, stdout) < 0 || fflush(stdout) != 0) {
            die("cannot write the %s: %s", what, strerror(errno));
        }
        return;
    }
    struct stat sb;
    if (stat(out, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        /* A device or a pipe (/dev/null, a FIFO): written to as it is.
         * Renaming a temporary file over it would replace it (as root,
         * /dev/null became a regular file). */
        FILE *f = fopen(out, "w");
        if (!f) {
            die("cannot write '%s': %s", out, strerror(errno));
        }
        int bad = fn(ctx, f) < 0;
        bad |= fclose(f) != 0;
        if (bad) {
            die("cannot write '%s': %s", out, strerror(errno));
        }
        return;
    }
    size_t len = strlen(out) + 16;
    char *tmp = xmalloc(len);
    snprintf(tmp, len, "%s.tmp", out);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        die("cannot write '%s': %s", tmp, strerror(errno));
    }
    int bad = fn(ctx, f) < 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, out) != 0) {
        int e = errno;
        unlink(tmp);
        die("cannot write '%s': %s", out, strerror(e));
    }
    free(tmp);
}

struct folded_ctx {
    const struct calltree *t;
    const struct difftree *d;
    enum cost_type cost;
};

static int folded_cb(void *ctx, FILE *f)
{
    struct folded_ctx *c = ctx;
    return c->d ? diff_write_folded(c->d, c->cost, f) : folded_write(c->t, c->cost, f);
}

static int svg_cb(void *ctx, FILE *f)
{
    return svg_write(ctx, f);
}

static const char *program_of(const struct model *m)
{
    return m->cmdline && *m->cmdline ? m->cmdline : (m->exe ? m->exe : "?");
}

static struct svg *make_svg(const struct opts *o, const struct source *s, const struct source *base, char *title,
                            size_t title_cap)
{
    const char *unit = cost_unit(o->cost);
    size_t n = add(title, title_cap, 0, "%s%s: %s (%s)", base ? "change from base to new, " : "", program_of(s->m),
                   cost_name(o->cost), unit);
    if (s->note[0]) {
        add(title, title_cap, n, "; %s", s->note);
    }
    struct svg_options so = {title, base ? "width: new cost; red: grew, blue: shrank" : NULL, unit, o->flame,
                             base != NULL};
    return svg_new(&so);
}

/* ---- leak suppressions ---- */

static void warn_cb(void *ctx, const char *msg)
{
    (void)ctx;
    warning("%s", msg);
}

/* The suppressions of the recording `m`, in the order they are tried:
 * the files, the program's own, the built-in list. */
static void load_suppressions(const struct gate_opts *g, const struct model *m, struct suppressions *sup, int checking)
{
    char err[512];
    for (size_t i = 0; i < g->nsupp; i++) {
        if (suppress_load_file(sup, g->supp_files[i], warn_cb, NULL, err, sizeof err) < 0) {
            die_code(2, "%s", err);
        }
    }
    /* An executable that is not here (a recording read on another machine)
     * is said only to a gate, whose verdict may depend on its patterns. */
    int rc = g->no_program ? 0 : suppress_add_program(sup, m, warn_cb, NULL, err, sizeof err);
    if (rc < 0 && (rc != SUPPRESS_E_NOEXE || checking)) {
        warning("%s", err);
    }
    if (!g->no_builtin) {
        suppress_add_builtin(sup);
    }
}

/* The summary line that says what the suppressions took, after `note`. */
static void suppressed_note(char *buf, size_t cap, const char *note, const struct suppressions *sup,
                            const struct accounting *a)
{
    size_t n = add(buf, cap, 0, "%s", note ? note : "");
    if (sup->total.blocks == 0) {
        return;
    }
    const struct acct_totals *t = accounting_totals(a);
    char b1[32], b2[32];
    uint64_t kept = t->live_bytes - sup->total.bytes, kept_blocks = t->live_blocks - sup->total.blocks;
    add(buf, cap, n,
        "%sleaks suppressed: %s (%llu bytes) in %llu %s (SUPPRESSED LEAKS below); not suppressed: %s (%llu bytes) "
        "in %llu %s",
        n ? "\n" : "", util_bytes(b1, sizeof b1, sup->total.bytes), (unsigned long long)sup->total.bytes,
        (unsigned long long)sup->total.blocks, util_plural(sup->total.blocks, "block", "blocks"),
        util_bytes(b2, sizeof b2, kept), (unsigned long long)kept, (unsigned long long)kept_blocks,
        util_plural(kept_blocks, "block", "blocks"));
}

/* `extra` (JSON members, or NULL) followed by the suppressions' member:
 * a new string for report_options.json_extra, freed by the caller. */
static char *suppressions_json(const char *extra, const struct suppressions *sup)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f) {
        die("out of memory");
    }
    if (extra) {
        fputs(extra, f);
    }
    suppress_print_json(sup, f);
    if (fclose(f) != 0) {
        die("out of memory");
    }
    return out;
}

/* ---- the outputs ---- */

/* `timed`: the file has allocator time (memrec --time), a column before
 * the thread's lifetime and CPU time ('-' when the file does not say). */
static void print_threads_text(const struct threads *th, int timed, FILE *f)
{
    fprintf(f, "\nTHREADS (a free is charged to its own thread's block of that size and stack when it has one)\n");
    fprintf(f, "  %8s %8s %12s %12s %16s %16s %16s", "thread", "tid", "calls", "temporary", "allocated", "peak share",
            "leaked");
    if (timed) {
        fprintf(f, " %16s", "alloc time ns");
    }
    fprintf(f, " %12s %12s\n", "lifetime", "cpu");
    for (uint32_t i = 0; i < th->n; i++) {
        const struct thread_costs *t = &th->v[i];
        fprintf(f, "  %8u %8u %12llu %12llu %16llu %16llu %16llu", t->index, t->tid,
                (unsigned long long)t->c.v[COST_CALLS], (unsigned long long)t->c.v[COST_TEMPORARY],
                (unsigned long long)t->c.v[COST_ALLOCATED], (unsigned long long)t->c.v[COST_PEAK],
                (unsigned long long)t->c.v[COST_LEAKED]);
        if (timed) {
            fprintf(f, " %16llu", (unsigned long long)t->c.v[COST_TIME]);
        }
        thread_times_text(&t->times, f);
        fputc('\n', f);
    }
    if (th->n == 0) {
        fprintf(f, "  (none)\n");
    }
}

/* `timed`: allocator_time_ns per thread, null when the file has none. */
static void print_threads_json(const struct threads *th, int timed, FILE *f)
{
    fputc('[', f);
    for (uint32_t i = 0; i < th->n; i++) {
        const struct thread_costs *t = &th->v[i];
        fprintf(f,
                "%s{\"thread\": %u, \"tid\": %u, \"calls\": %llu, \"temporary\": %llu, \"allocated_bytes\": %llu, "
                "\"peak_bytes\": %llu, \"leaked_bytes\": %llu, \"leaked_allocations\": %llu",
                i ? ", " : "", t->index, t->tid, (unsigned long long)t->c.v[COST_CALLS],
                (unsigned long long)t->c.v[COST_TEMPORARY], (unsigned long long)t->c.v[COST_ALLOCATED],
                (unsigned long long)t->c.v[COST_PEAK], (unsigned long long)t->c.v[COST_LEAKED],
                (unsigned long long)t->leaked_blocks);
        if (timed) {
            fprintf(f, ", \"allocator_time_ns\": %llu", (unsigned long long)t->c.v[COST_TIME]);
        } else {
            fputs(", \"allocator_time_ns\": null", f);
        }
        thread_times_json(&t->times, f);
        fputc('}', f);
    }
    fputc(']', f);
}

/* ---- allocator time (memrec --time) ---- */

/* The tables of `s`; dies when the recording is not timed: zeros would
 * pass for data. */
static struct alloctime *alloc_time_of(const struct source *s)
{
    if (!cost_recorded(&s->m->header, COST_TIME)) {
        die("allocator time not recorded in '%s' (record with memrec --time)", s->path);
    }
    struct alloctime *t;
    int err;
    int rc = alloctime_run(s->path, s->m, &t, &err);
    if (rc < 0) {
        die("cannot read '%s' again: %s", s->path, rc == MEMFMT_E_IO ? strerror(err) : memfmt_strerror(rc));
    }
    return t;
}

static void print_alloc_time(const struct opts *o, const struct source *s)
{
    struct alloctime *t = alloc_time_of(s);
    if (o->json) {
        printf("{\"program\": ");
        charts_json_str(program_of(s->m), stdout);
        printf(", \"runtime_ms\": %llu, ", (unsigned long long)model_runtime_ms(s->m));
        alloctime_print_json(t, stdout);
        fputs("}\n", stdout);
    } else {
        fputs("program: ", stdout);
        esc_text_fputs(program_of(s->m), stdout);
        putchar('\n');
        alloctime_print_text(t, stdout);
    }
    alloctime_free(t);
}

static void compare_alloc_time(const struct opts *o, const struct source *b, const struct source *n)
{
    struct alloctime *tb = alloc_time_of(b), *tn = alloc_time_of(n);
    if (o->json) {
        fputs("{\"base_program\": ", stdout);
        charts_json_str(program_of(b->m), stdout);
        fputs(", \"new_program\": ", stdout);
        charts_json_str(program_of(n->m), stdout);
        fputs(", ", stdout);
        alloctime_print_diff_json(tb, tn, stdout);
        fputs("}\n", stdout);
    } else {
        fputs("comparing base: ", stdout);
        esc_text_fputs(program_of(b->m), stdout);
        fputs("\n     with new: ", stdout);
        esc_text_fputs(program_of(n->m), stdout);
        putchar('\n');
        alloctime_print_diff_text(tb, tn, stdout);
    }
    alloctime_free(tb);
    alloctime_free(tn);
}

/* ---- pprof and massif ---- */

struct pprof_ctx {
    struct frames *fr;
    const struct accounting *acct;
    enum pprof_at at;
};

static int pprof_cb(void *ctx, FILE *f)
{
    struct pprof_ctx *c = ctx;
    return pprof_write(c->fr, c->acct, c->at, f);
}

static int massif_cb(void *ctx, FILE *f)
{
    return massif_write(ctx, f);
}

/* --pprof (of what the query counts) and --massif (the whole run). */
static void write_exports(const struct opts *o, struct source *s)
{
    if (o->pprof) {
        struct pprof_ctx c = {frames_of(s), s->acct, o->pprof_at};
        write_out(o->pprof, "pprof profile", pprof_cb, &c);
    }
    if (o->massif) {
        struct massif *ms;
        int err;
        int rc = massif_new(s->path, frames_of(s), &ms, &err);
        if (rc < 0) {
            die("cannot read '%s' again: %s", s->path, rc == MEMFMT_E_IO ? strerror(err) : memfmt_strerror(rc));
        }
        write_out(o->massif, "massif file", massif_cb, ms);
        massif_free(ms);
    }
}

/* Returns 1 when the figures hold the whole recording (model_complete()). */
static int single(const struct opts *o, const char *path)
{
    struct source s = {.path = path};
    open_source(&s, o);
    if (o->alloc_time) {
        print_alloc_time(o, &s);
        int whole = model_complete(s.m);
        source_release(&s);
        return whole;
    }
    if ((o->folded || o->svg) && !cost_recorded(&s.m->header, o->cost)) {
        die("--cost time: allocator time not recorded in '%s' (record with memrec --time)", path);
    }
    if (o->pprof || o->massif) {
        write_exports(o, &s);
    }
    if (o->folded || o->svg) {
        struct calltree *t = calltree_build(frames_of(&s), s.acct);
        calltree_sort(t, o->cost, 0);
        if (o->folded) {
            struct folded_ctx c = {t, NULL, o->cost};
            write_out(o->folded, "folded stacks", folded_cb, &c);
        }
        if (o->svg) {
            char title[1024];
            struct svg *g = make_svg(o, &s, NULL, title, sizeof title);
            svg_add_tree(g, t, o->reverse ? CALLTREE_BOTTOM_UP : CALLTREE_TOP_DOWN, o->cost, "all");
            write_out(o->svg, "flame graph", svg_cb, g);
            svg_free(g);
        }
        calltree_free(t);
    } else if (o->sizes || o->timeline) {
        if (o->json) {
            printf("{\"runtime_ms\": %llu", (unsigned long long)model_runtime_ms(s.m));
            fputs(s.json, stdout);
            if (o->sizes) {
                fputs(", \"sizes\": {", stdout);
                charts_sizes_json(s.a->sizes, (uint32_t)o->ro.top, stdout);
                if (o->by_stack) {
                    fputs(", ", stdout);
                    charts_sizes_by_stack(s.a->sizes, s.acct, frames_of(&s), (uint32_t)o->ro.top, 10, 1, stdout);
                }
                fputs("}", stdout);
            }
            if (o->timeline) {
                fputs(", \"timeline\": {", stdout);
                charts_timeline_json(s.a->series, stdout);
                fputs("}", stdout);
            }
            fputs("}\n", stdout);
        } else {
            fputs("program: ", stdout);
            esc_text_fputs(program_of(s.m), stdout);
            putchar('\n');
            if (s.note[0]) {
                printf("%s\n", s.note);
            }
            if (o->sizes) {
                putchar('\n');
                charts_sizes_text(s.a->sizes, (uint32_t)o->ro.top, stdout);
                if (o->by_stack) {
                    charts_sizes_by_stack(s.a->sizes, s.acct, frames_of(&s), (uint32_t)o->ro.top, 10, 0, stdout);
                }
            }
            if (o->timeline) {
                putchar('\n');
                charts_timeline_text(s.a->series, 12, stdout);
            }
        }
    } else if (!o->pprof && !o->massif) {
        struct report *r = report_new(&s.view);
        if (!r) {
            die("cannot start the symbolizer (libdw)");
        }
        struct report_options ro = o->ro;
        ro.note = s.note[0] ? s.note : NULL;
        ro.json_extra = s.json[0] ? s.json : NULL;
        struct suppressions sup = SUPPRESSIONS_INIT;
        load_suppressions(&o->gate, s.m, &sup, 0);
        suppress_apply(&sup, r);
        ro.suppressed = sup.total;
        char note[1024];
        suppressed_note(note, sizeof note, ro.note, &sup, s.acct);
        ro.note = note[0] ? note : NULL;
        struct threads *th = NULL;
        char *th_json = NULL;
        if (o->threads) {
            int err;
            int rc = threads_run(path, s.m, &th, &err);
            if (rc < 0) {
                die("cannot read '%s' again: %s", path, rc == MEMFMT_E_IO ? strerror(err) : memfmt_strerror(rc));
            }
            if (o->json) {
                size_t len = 0;
                FILE *f = open_memstream(&th_json, &len);
                if (!f) {
                    die("out of memory");
                }
                fputs(", \"threads_section\": ", f);
                print_threads_json(th, cost_recorded(&s.m->header, COST_TIME), f);
                fclose(f);
                ro.json_extra = th_json; /* no restriction with --threads: s.json is empty */
            }
        }
        char *supp_json = NULL;
        if (o->json) {
            supp_json = suppressions_json(ro.json_extra, &sup);
            ro.json_extra = supp_json;
            report_print_json(r, &ro, stdout);
        } else if (o->group) {
            /* The summary, then the sections ranked another way. */
            unsigned sections = ro.sections;
            ro.sections = 1u << REPORT_NSECTIONS;
            report_print_text(r, &ro, stdout);
            ro.sections = sections;
            int time_missing = 0;
            if (!cost_recorded(&s.m->header, COST_TIME)) {
                /* The file has no allocator time: no section of zeros. */
                time_missing = (ro.sections & (1u << REPORT_TIME)) != 0;
                ro.sections = (ro.sections ? ro.sections : (1u << REPORT_NSECTIONS) - 1) & ~(1u << REPORT_TIME);
            }
            if (ro.sections) {
                if (o->group == 1) {
                    groups_print_sites(r, &ro, stdout);
                } else {
                    struct calltree *t = calltree_build(frames_of(&s), s.acct);
                    groups_print_functions(t, &ro, stdout);
                    calltree_free(t);
                }
            }
            if (time_missing) {
                printf("\n%s\n  allocator time: not recorded (memrec --time)\n", report_title(REPORT_TIME));
            }
            if (!sections) {
                rssgap_print_text(&r->model->rssgap, r->model->sample_rate != 0, r->model->nthreads, stdout);
            }
        } else {
            report_print_text(r, &ro, stdout);
        }
        if (!o->json && report_section_shown(r, &o->ro, REPORT_LEAKED)) {
            suppress_print_text(&sup, r, &ro, stdout);
        }
        free(supp_json);
        suppress_release(&sup);
        if (th && !o->json) {
            print_threads_text(th, cost_recorded(&s.m->header, COST_TIME), stdout);
        }
        threads_free(th);
        free(th_json);
        report_free(r);
    }
    int whole = model_complete(s.m);
    source_release(&s);
    return whole;
}

/* Returns 1 when both recordings were read whole. */
static int compare(const struct opts *o, const char *path)
{
    struct source b = {.path = o->diff_base}, n = {.path = path};
    open_source(&b, o);
    open_source(&n, o);
    if (o->alloc_time) {
        compare_alloc_time(o, &b, &n);
        int whole = model_complete(b.m) && model_complete(n.m);
        source_release(&b);
        source_release(&n);
        return whole;
    }
    struct calltree *tb = calltree_build(frames_of(&b), b.acct);
    struct calltree *tn = calltree_build(frames_of(&n), n.acct);
    struct difftree *d = diff_build(tb, tn);
    d->base_timed = cost_recorded(&b.m->header, COST_TIME);
    d->new_timed = cost_recorded(&n.m->header, COST_TIME);
    if ((o->folded || o->svg) && o->cost == COST_TIME && !(d->base_timed && d->new_timed)) {
        die("--cost time: allocator time not recorded in '%s' (record with memrec --time)",
            d->base_timed ? n.path : b.path);
    }
    if (o->folded || o->svg) {
        if (o->folded) {
            struct folded_ctx c = {NULL, d, o->cost};
            write_out(o->folded, "folded stacks", folded_cb, &c);
        }
        if (o->svg) {
            char title[1024];
            struct svg *g = make_svg(o, &n, &b, title, sizeof title);
            diff_add_svg(d, o->cost, g);
            write_out(o->svg, "flame graph", svg_cb, g);
            svg_free(g);
        }
    } else if (o->json) {
        diff_print_json(d, program_of(b.m), program_of(n.m), (uint32_t)o->ro.top, stdout);
    } else {
        if (n.note[0]) {
            printf("%s (both recordings)\n", n.note);
        }
        diff_print_text(d, program_of(b.m), program_of(n.m), (uint32_t)o->ro.top, stdout);
    }
    diff_free(d);
    calltree_free(tb);
    calltree_free(tn);
    int whole = model_complete(b.m) && model_complete(n.m);
    source_release(&b);
    source_release(&n);
    return whole;
}

/* ---- the CI gate: checks ---- */

/* The checks as given on the command line, parsed (main() has checked
 * that they parse). */
static struct check *parse_checks(const struct gate_opts *g, size_t *n)
{
    size_t total = g->nchecks + g->nincreases;
    struct check *c = xcalloc(total ? total : 1, sizeof *c);
    char err[2048];
    for (size_t i = 0; i < total; i++) {
        int rc = i < g->nchecks ? check_parse_condition(g->checks[i], &c[i], err, sizeof err)
                                : check_parse_increase(g->increases[i - g->nchecks], &c[i], err, sizeof err);
        if (rc < 0) {
            die_code(2, "%s", err);
        }
    }
    *n = total;
    return c;
}

/* The figures of the baseline recording, with its own suppressions (its
 * own program's). Returns 1 when it was read whole. */
static int baseline_figures(const struct opts *o, struct figure *out)
{
    struct source b = {.path = o->gate.baseline};
    open_source(&b, o);
    struct report *r = report_new(&b.view);
    if (!r) {
        die("cannot start the symbolizer (libdw)");
    }
    struct suppressions sup = SUPPRESSIONS_INIT;
    load_suppressions(&o->gate, b.m, &sup, 1);
    suppress_apply(&sup, r);
    figures_collect(&b.view, b.acct, &sup.total, out);
    int whole = model_complete(b.m);
    suppress_release(&sup);
    report_free(r);
    source_release(&b);
    return whole;
}

/* --check and --max-increase on the recording at `path`: prints each check
 * (text), or the report with a "gate" member (JSON). Returns the exit
 * code: 0 all hold, 1 one fails, 3 a recording is incomplete (the gate
 * then fails whatever the checks say: its figures may be short). */
static int gate_run(const struct opts *o, const char *path)
{
    size_t nc;
    struct check *checks = parse_checks(&o->gate, &nc);
    struct figure old[FIGURES_COUNT];
    int old_whole = 1;
    if (o->gate.baseline) {
        old_whole = baseline_figures(o, old);
    }
    struct source s = {.path = path};
    open_source(&s, o);
    struct report *r = report_new(&s.view);
    if (!r) {
        die("cannot start the symbolizer (libdw)");
    }
    struct suppressions sup = SUPPRESSIONS_INIT;
    load_suppressions(&o->gate, s.m, &sup, 1);
    suppress_apply(&sup, r);
    struct figure now[FIGURES_COUNT];
    figures_collect(&s.view, s.acct, &sup.total, now);
    int whole = model_complete(s.m);
    size_t failed = 0;
    for (size_t i = 0; i < nc; i++) {
        check_eval(&checks[i], now, old);
        failed += !checks[i].pass;
    }
    int code = !whole || !old_whole ? 3 : failed ? 1 : 0;
    const char *result = code == 3 ? "incomplete" : code == 1 ? "fail" : "pass";
    if (o->json) {
        char *gate = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&gate, &len);
        if (!f) {
            die("out of memory");
        }
        fputs(s.json, f);
        suppress_print_json(&sup, f);
        fprintf(f, ", \"gate\": {\"result\": \"%s\", \"exit_code\": %d, \"baseline\": ", result, code);
        if (o->gate.baseline) {
            esc_json_fputs(o->gate.baseline, f);
            fprintf(f, ", \"baseline_complete\": %s", old_whole ? "true" : "false");
        } else {
            fputs("null, \"baseline_complete\": null", f);
        }
        fputs(", \"checks\": [", f);
        for (size_t i = 0; i < nc; i++) {
            fputs(i ? ", " : "", f);
            check_print_json(&checks[i], f);
        }
        fputs("]}", f);
        if (fclose(f) != 0) {
            die("out of memory");
        }
        struct report_options ro = o->ro;
        ro.json_extra = gate;
        ro.suppressed = sup.total;
        report_print_json(r, &ro, stdout);
        free(gate);
    } else {
        for (size_t i = 0; i < nc; i++) {
            if (i == o->gate.nchecks) {
                fputs("baseline: ", stdout);
                esc_text_fputs(o->gate.baseline, stdout);
                putchar('\n');
            }
            check_print_text(&checks[i], stdout);
        }
        if (sup.total.blocks) {
            char b1[32];
            printf("leaks suppressed (not in leaked_bytes): %s (%llu bytes) in %llu %s; 'memprint FILE' lists "
                   "them\n",
                   util_bytes(b1, sizeof b1, sup.total.bytes), (unsigned long long)sup.total.bytes,
                   (unsigned long long)sup.total.blocks, util_plural(sup.total.blocks, "block", "blocks"));
        }
        if (code == 3) {
            printf("gate: INCOMPLETE: %s does not hold the whole run (see the warning above): the gate fails\n",
                   !whole ? "the recording" : "the baseline");
        } else if (failed) {
            printf("gate: FAIL (%zu of %zu check%s failed)\n", failed, nc, nc == 1 ? "" : "s");
        } else {
            printf("gate: PASS (%zu check%s)\n", nc, nc == 1 ? "" : "s");
        }
    }
    suppress_release(&sup);
    report_free(r);
    source_release(&s);
    free(checks);
    return code;
}

/* Options of the gate that cannot combine, and every condition and
 * suppressions file checked before any recording is read. */
static void gate_validate(const struct opts *o)
{
    const struct gate_opts *g = &o->gate;
    if (g->nincreases && !g->baseline) {
        die_code(2, "--max-increase needs --baseline OLD (see memprint --help)");
    }
    if (g->baseline && !g->nincreases) {
        die_code(2, "--baseline needs at least one --max-increase (see memprint --help)");
    }
    if (g->nchecks || g->nincreases) {
        if (o->folded || o->svg || o->sizes || o->timeline || o->diff_base || o->group || o->threads || o->pprof ||
            o->alloc_time || o->massif) {
            die_code(2, "--check and --max-increase do not combine with --folded, --svg, --sizes, --timeline, "
                        "--diff, --group, --threads, --pprof, --massif or --alloc-time");
        }
        size_t n;
        free(parse_checks(g, &n));
    }
    if (g->nsupp) {
        struct suppressions sup = SUPPRESSIONS_INIT;
        char err[512];
        for (size_t i = 0; i < g->nsupp; i++) {
            if (suppress_load_file(&sup, g->supp_files[i], NULL, NULL, err, sizeof err) < 0) {
                die_code(2, "%s", err);
            }
        }
        suppress_release(&sup);
    }
}

static unsigned parse_sections(const char *list)
{
    static const char *const names[REPORT_NSECTIONS] = {"calls",     "peak",   "temporary", "leaked",
                                                        "allocated", "mapped", "time"};
    unsigned mask = 0;
    char *copy = xstrdup(list);
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (int s = 0; s < REPORT_NSECTIONS; s++) {
            if (strcmp(tok, names[s]) == 0) {
                mask |= 1u << s;
                found = 1;
            }
        }
        if (!found) {
            die_code(2, "invalid section '%s' (expected calls, peak, temporary, leaked, allocated, mapped or time)",
                     tok);
        }
    }
    free(copy);
    if (!mask) {
        die_code(2, "--sections needs at least one section");
    }
    return mask;
}

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
    char b1[32], b2[32];
    /* Unknown: addresses of which the symbolizer found nothing here; they
     * read as module+offset, packed or not. */
    printf("packed '%s' into '%s': frames of %u addresses (%u frames, %u names), %u without symbols; "
           "%s -> %s (%+.1f%%)\n",
           in, out, st.addresses, st.frames, st.strings, st.unknown, util_bytes(b1, sizeof b1, st.in_bytes),
           util_bytes(b2, sizeof b2, st.out_bytes),
           st.in_bytes ? 100.0 * ((double)st.out_bytes - (double)st.in_bytes) / (double)st.in_bytes : 0.0);
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
    static const struct option longs[] = {
        {"json", no_argument, NULL, 'j'},
        {"top", required_argument, NULL, 'n'},
        {"frames", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {"folded", required_argument, NULL, 'F'},
        {"cost", required_argument, NULL, 'c'},
        {"svg", required_argument, NULL, OPT_SVG},
        {"flame", no_argument, NULL, OPT_FLAME},
        {"reverse", no_argument, NULL, OPT_REVERSE},
        {"sizes", no_argument, NULL, OPT_SIZES},
        {"timeline", no_argument, NULL, OPT_TIMELINE},
        {"points", required_argument, NULL, OPT_POINTS},
        {"diff", required_argument, NULL, OPT_DIFF},
        {"from", required_argument, NULL, OPT_FROM},
        {"to", required_argument, NULL, OPT_TO},
        {"at", required_argument, NULL, OPT_AT},
        {"thread", required_argument, NULL, OPT_THREAD},
        {"function", required_argument, NULL, OPT_FUNCTION},
        {"exclude", required_argument, NULL, OPT_EXCLUDE},
        {"full-names", no_argument, NULL, OPT_FULL_NAMES},
        {"sections", required_argument, NULL, OPT_SECTIONS},
        {"group", required_argument, NULL, OPT_GROUP},
        {"threads", no_argument, NULL, OPT_THREADS},
        {"by-stack", no_argument, NULL, OPT_BY_STACK},
        {"alloc-time", no_argument, NULL, OPT_ALLOC_TIME},
        {"pprof", required_argument, NULL, OPT_PPROF},
        {"pprof-at", required_argument, NULL, OPT_PPROF_AT},
        {"massif", required_argument, NULL, OPT_MASSIF},
        {"pack", no_argument, NULL, OPT_PACK},
        {"check", required_argument, NULL, OPT_GATE_FIRST + GATE_CHECK},
        {"baseline", required_argument, NULL, OPT_GATE_FIRST + GATE_BASELINE},
        {"max-increase", required_argument, NULL, OPT_GATE_FIRST + GATE_MAX_INCREASE},
        {"suppressions", required_argument, NULL, OPT_GATE_FIRST + GATE_SUPPRESSIONS},
        {"no-builtin-suppressions", no_argument, NULL, OPT_GATE_FIRST + GATE_NO_BUILTIN},
        {"no-program-suppressions", no_argument, NULL, OPT_GATE_FIRST + GATE_NO_PROGRAM},
        {NULL, 0, NULL, 0},
    };
    struct opts o = {0};
    o.ro.top = 10;
    o.ro.max_frames = 48;
    o.cost = COST_PEAK;
    o.points = 1000;
    int c;
    int pack = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "jn:f:hVF:c:", longs, NULL)) != -1) {
        switch (c) {
        case 'j': o.json = 1; break;
        case 'n': o.ro.top = parse_count(optarg, "entry count"); break;
        case 'f': o.ro.max_frames = parse_count(optarg, "frame count"); break;
        case 'F': o.folded = optarg; break;
        case 'c':
            o.cost_set = 1;
            if (cost_parse(optarg, &o.cost) < 0) {
                die_code(2, "invalid cost '%s' (expected calls, temporary, peak, leaked, allocated, mapped or time)",
                         optarg);
            }
            break;
        case OPT_SVG: o.svg = optarg; break;
        case OPT_FLAME: o.flame = 1; break;
        case OPT_REVERSE: o.reverse = 1; break;
        case OPT_SIZES: o.sizes = 1; break;
        case OPT_TIMELINE: o.timeline = 1; break;
        case OPT_POINTS:
            o.points = (uint32_t)parse_count(optarg, "point count");
            if (o.points < 2 || o.points > 5000) {
                die_code(2, "invalid point count '%s' (expected 2 to 5000)", optarg);
            }
            break;
        case OPT_DIFF: o.diff_base = optarg; break;
        case OPT_FROM: o.from = optarg; break;
        case OPT_TO: o.to = optarg; break;
        case OPT_AT: o.at = optarg; break;
        case OPT_THREAD:
            o.thread = (uint32_t)parse_count(optarg, "thread number");
            if (o.thread == 0) {
                die_code(2, "invalid thread number '0' (threads are numbered from 1)");
            }
            break;
        case OPT_FUNCTION: o.function = optarg; break;
        case OPT_EXCLUDE: o.exclude = optarg; break;
        case OPT_FULL_NAMES: o.ro.full_names = 1; break;
        case OPT_SECTIONS: o.ro.sections = parse_sections(optarg); break;
        case OPT_THREADS: o.threads = 1; break;
        case OPT_BY_STACK: o.by_stack = 1; break;
        case OPT_ALLOC_TIME: o.alloc_time = 1; break;
        case OPT_PPROF: o.pprof = optarg; break;
        case OPT_MASSIF: o.massif = optarg; break;
        case OPT_PPROF_AT:
            o.pprof_at_set = 1;
            if (strcmp(optarg, "end") == 0) {
                o.pprof_at = PPROF_AT_END;
            } else if (strcmp(optarg, "peak") == 0) {
                o.pprof_at = PPROF_AT_PEAK;
            } else {
                die_code(2, "invalid --pprof-at '%s' (expected end or peak)", optarg);
            }
            break;
        case OPT_PACK: pack = 1; break;
        case OPT_GROUP:
            if (strcmp(optarg, "stack") == 0) {
                o.group = 0;
            } else if (strcmp(optarg, "site") == 0) {
                o.group = 1;
            } else if (strcmp(optarg, "function") == 0) {
                o.group = 2;
            } else {
                die_code(2, "invalid --group '%s' (expected stack, site or function)", optarg);
            }
            break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("memprint %s (format version %d)\n", MEMREC_VERSION, MEMFMT_VERSION); return 0;
        default:
            if (c >= OPT_GATE_FIRST && c <= OPT_GATE_FIRST + GATE_NO_PROGRAM) {
                gate_option(c - OPT_GATE_FIRST, optarg, &o.gate);
                break;
            }
            if (optopt && optopt != '?' && optopt < 256) {
                die_code(2, "unknown option '-%c' (see memprint --help)", optopt);
            }
            die_code(2, "unknown option '%s' (see memprint --help)", argv[optind - 1]);
        }
    }
    if (pack) {
        return run_pack(argc, argv);
    }
    if (o.cost_set && !o.folded && !o.svg) {
        die_code(2, "--cost applies to --folded and --svg only (see memprint --help)");
    }
    if ((o.flame || o.reverse) && !o.svg) {
        die_code(2, "--flame and --reverse apply to --svg only (see memprint --help)");
    }
    if (o.reverse && o.diff_base) {
        die_code(2, "--reverse does not apply to --diff (see memprint --help)");
    }
    if ((o.sizes || o.timeline) && (o.folded || o.svg || o.diff_base)) {
        die_code(2, "--sizes and --timeline do not combine with --folded, --svg or --diff");
    }
    if (o.by_stack && !o.sizes) {
        die_code(2, "--by-stack applies to --sizes only");
    }
    if (o.group && (o.json || o.folded || o.svg || o.sizes || o.timeline || o.diff_base)) {
        die_code(2, "--group applies to the text report only");
    }
    if (o.threads && (o.from || o.to || o.at || o.thread || o.function || o.exclude || o.folded || o.svg || o.sizes ||
                      o.timeline || o.diff_base)) {
        die_code(2, "--threads applies to the whole run's report only");
    }
    if (o.alloc_time && (o.from || o.to || o.at || o.thread || o.function || o.exclude || o.folded || o.svg ||
                         o.sizes || o.timeline || o.threads || o.group || o.pprof || o.massif)) {
        die_code(2, "--alloc-time applies to the whole run only, alone or with --diff and --json");
    }
    if (o.pprof_at_set && !o.pprof) {
        die_code(2, "--pprof-at applies to --pprof only");
    }
    if ((o.pprof || o.massif) && (o.sizes || o.timeline || o.diff_base || o.json || o.group || o.threads)) {
        die_code(2, "--pprof and --massif do not combine with --sizes, --timeline, --diff, --json, --group or "
                    "--threads");
    }
    if (o.massif && (o.from || o.to || o.at || o.thread || o.function || o.exclude)) {
        die_code(2, "--massif applies to the whole run only (no --from, --to, --at, --thread, --function, "
                    "--exclude)");
    }
    if (o.at && (o.from || o.to)) {
        die_code(2, "--at does not combine with --from or --to");
    }
    gate_validate(&o);
    if (optind != argc - 1) {
        usage(stderr);
        return 2;
    }
    if (o.gate.nchecks || o.gate.nincreases) {
        read_fail_code = 4;
        int code = gate_run(&o, argv[optind]);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            die_code(4, "cannot write the checks: %s", strerror(errno));
        }
        gate_opts_release(&o.gate);
        return code;
    }
    int whole = o.diff_base ? compare(&o, argv[optind]) : single(&o, argv[optind]);
    gate_opts_release(&o.gate);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        die("cannot write the report: %s", strerror(errno));
    }
    /* 3: the output is written but does not hold the whole recording (the
     * data stops early, or records were refused): a script can tell. */
    return whole ? 0 : 3;
}
