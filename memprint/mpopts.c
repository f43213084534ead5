// SPDX-License-Identifier: MIT
/* memprint's options (mpopts.h): getopt_long into struct opts, the checks
 * of which options combine, and the help. Reads no recording. */
#define _GNU_SOURCE
#include "mpopts.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "memfmt.h"
#include "parse.h"
#include "suppress.h"
#include "util.h"

/* ---- the CI gate's options and the help ---- */

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

void mpopts_release(struct opts *o)
{
    free(o->gate.checks);
    free(o->gate.increases);
    free(o->gate.supp_files);
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

void mpopts_usage(FILE *f)
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
               "                      temporary, leaked, allocated, mapped, time, growth (default\n"
               "                      all; time: only in recordings made with memrec --time)\n"
               "      --unreachable   MOST MEMORY LEAKED ranks only the unreachable blocks (no\n"
               "                      pointer left to them at the end), as LeakSanitizer reports\n"
               "      --full-names    C++ names in full (text shortens long template lists)\n"
               "      --threads       add a section of each thread's calls, peak contribution and\n"
               "                      leaks (a second pass over the file; whole run only)\n"
               "      --group HOW     rank the text report by 'stack' (default), 'site' (allocation\n"
               "                      site, its call stacks below) or 'function' (inclusive cost)\n"
               "  -F, --folded OUT    write folded stacks for flame graphs to OUT ('-': stdout)\n"
               "      --svg OUT       write an interactive SVG flame graph to OUT ('-': stdout)\n"
               "  -c, --cost TYPE     cost of --folded and --svg: calls, temporary, peak,\n"
               "                      leaked, allocated, mapped, time, growth (bytes/s of\n"
               "                      steady growth), unreachable (bytes leaked with no\n"
               "                      pointer left at the end) (default peak)\n"
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

/* ---- parsing ---- */

static int parse_count(const char *s, const char *what)
{
    uint64_t v;
    if (parse_uint(s, 0, 1000000, &v) < 0) {
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
    OPT_UNREACHABLE,
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

static unsigned parse_sections(const char *list)
{
    static const char *const names[REPORT_NSECTIONS] = {"calls",     "peak",   "temporary", "leaked",
                                                        "allocated", "mapped", "time",      "growth"};
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
            die_code(
                2, "invalid section '%s' (expected calls, peak, temporary, leaked, allocated, mapped, time or growth)",
                tok);
        }
    }
    free(copy);
    if (!mask) {
        die_code(2, "--sections needs at least one section");
    }
    return mask;
}

enum mpopts_result mpopts_parse(int argc, char **argv, struct opts *o)
{
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
        {"unreachable", no_argument, NULL, OPT_UNREACHABLE},
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
    *o = (struct opts){0};
    o->ro.top = 10;
    o->ro.max_frames = 48;
    o->cost = COST_PEAK;
    o->points = 1000;
    o->read_fail_code = 1;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "jn:f:hVF:c:", longs, NULL)) != -1) {
        switch (c) {
        case 'j': o->json = 1; break;
        case 'n': o->ro.top = parse_count(optarg, "entry count"); break;
        case 'f': o->ro.max_frames = parse_count(optarg, "frame count"); break;
        case 'F': o->folded = optarg; break;
        case 'c':
            o->cost_set = 1;
            if (cost_parse(optarg, &o->cost) < 0) {
                die_code(2,
                         "invalid cost '%s' (expected calls, temporary, peak, leaked, allocated, mapped, time, growth "
                         "or unreachable)",
                         optarg);
            }
            break;
        case OPT_SVG: o->svg = optarg; break;
        case OPT_FLAME: o->flame = 1; break;
        case OPT_REVERSE: o->reverse = 1; break;
        case OPT_SIZES: o->sizes = 1; break;
        case OPT_TIMELINE: o->timeline = 1; break;
        case OPT_POINTS:
            o->points = (uint32_t)parse_count(optarg, "point count");
            if (o->points < 2 || o->points > 5000) {
                die_code(2, "invalid point count '%s' (expected 2 to 5000)", optarg);
            }
            break;
        case OPT_DIFF: o->diff_base = optarg; break;
        case OPT_FROM: o->from = optarg; break;
        case OPT_TO: o->to = optarg; break;
        case OPT_AT: o->at = optarg; break;
        case OPT_THREAD:
            o->thread = (uint32_t)parse_count(optarg, "thread number");
            if (o->thread == 0) {
                die_code(2, "invalid thread number '0' (threads are numbered from 1)");
            }
            break;
        case OPT_FUNCTION: o->function = optarg; break;
        case OPT_EXCLUDE: o->exclude = optarg; break;
        case OPT_FULL_NAMES: o->ro.full_names = 1; break;
        case OPT_SECTIONS: o->ro.sections = parse_sections(optarg); break;
        case OPT_UNREACHABLE: o->ro.unreachable = 1; break;
        case OPT_THREADS: o->threads = 1; break;
        case OPT_BY_STACK: o->by_stack = 1; break;
        case OPT_ALLOC_TIME: o->alloc_time = 1; break;
        case OPT_PPROF: o->pprof = optarg; break;
        case OPT_MASSIF: o->massif = optarg; break;
        case OPT_PPROF_AT:
            o->pprof_at_set = 1;
            if (strcmp(optarg, "end") == 0) {
                o->pprof_at = PPROF_AT_END;
            } else if (strcmp(optarg, "peak") == 0) {
                o->pprof_at = PPROF_AT_PEAK;
            } else {
                die_code(2, "invalid --pprof-at '%s' (expected end or peak)", optarg);
            }
            break;
        case OPT_PACK: o->pack = 1; break;
        case OPT_GROUP:
            if (strcmp(optarg, "stack") == 0) {
                o->group = 0;
            } else if (strcmp(optarg, "site") == 0) {
                o->group = 1;
            } else if (strcmp(optarg, "function") == 0) {
                o->group = 2;
            } else {
                die_code(2, "invalid --group '%s' (expected stack, site or function)", optarg);
            }
            break;
        case 'h': mpopts_usage(stdout); return MPOPTS_DONE;
        case 'V': printf("memprint %s (format version %d)\n", MEMREC_VERSION, MEMFMT_VERSION); return MPOPTS_DONE;
        default:
            if (c >= OPT_GATE_FIRST && c <= OPT_GATE_FIRST + GATE_NO_PROGRAM) {
                gate_option(c - OPT_GATE_FIRST, optarg, &o->gate);
                break;
            }
            if (optopt && optopt != '?' && optopt < 256) {
                die_code(2, "unknown option '-%c' (see memprint --help)", optopt);
            }
            die_code(2, "unknown option '%s' (see memprint --help)", argv[optind - 1]);
        }
    }
    return MPOPTS_RUN;
}

/* ---- which options combine ---- */

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
        struct check *c;
        size_t n;
        char err[2048];
        if (checks_parse_all(g->checks, g->nchecks, g->increases, g->nincreases, &c, &n, err, sizeof err) < 0) {
            die_code(2, "%s", err);
        }
        free(c);
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

void mpopts_check(const struct opts *o)
{
    if (o->cost_set && !o->folded && !o->svg) {
        die_code(2, "--cost applies to --folded and --svg only (see memprint --help)");
    }
    if ((o->flame || o->reverse) && !o->svg) {
        die_code(2, "--flame and --reverse apply to --svg only (see memprint --help)");
    }
    if (o->reverse && o->diff_base) {
        die_code(2, "--reverse does not apply to --diff (see memprint --help)");
    }
    if ((o->sizes || o->timeline) && (o->folded || o->svg || o->diff_base)) {
        die_code(2, "--sizes and --timeline do not combine with --folded, --svg or --diff");
    }
    if (o->by_stack && !o->sizes) {
        die_code(2, "--by-stack applies to --sizes only");
    }
    if (o->group && (o->json || o->folded || o->svg || o->sizes || o->timeline || o->diff_base)) {
        die_code(2, "--group applies to the text report only");
    }
    if (o->threads && (o->from || o->to || o->at || o->thread || o->function || o->exclude || o->folded || o->svg ||
                       o->sizes || o->timeline || o->diff_base)) {
        die_code(2, "--threads applies to the whole run's report only");
    }
    if (o->alloc_time && (o->from || o->to || o->at || o->thread || o->function || o->exclude || o->folded || o->svg ||
                          o->sizes || o->timeline || o->threads || o->group || o->pprof || o->massif)) {
        die_code(2, "--alloc-time applies to the whole run only, alone or with --diff and --json");
    }
    if (o->pprof_at_set && !o->pprof) {
        die_code(2, "--pprof-at applies to --pprof only");
    }
    if ((o->pprof || o->massif) && (o->sizes || o->timeline || o->diff_base || o->json || o->group || o->threads)) {
        die_code(2, "--pprof and --massif do not combine with --sizes, --timeline, --diff, --json, --group or "
                    "--threads");
    }
    if (o->massif && (o->from || o->to || o->at || o->thread || o->function || o->exclude)) {
        die_code(2, "--massif applies to the whole run only (no --from, --to, --at, --thread, --function, "
                    "--exclude)");
    }
    if (o->at && (o->from || o->to)) {
        die_code(2, "--at does not combine with --from or --to");
    }
    gate_validate(o);
}
