// SPDX-License-Identifier: MIT
/* memrec's command line: usage and option parsing into struct options. Part of the memrec program
 * (memrec_internal.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "parse.h"
#include "util.h"
#include "memrec_internal.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: memrec [-o FILE] [-q] [-f] [-t] [-s BYTES] [-w TIME] [-d DEPTH] [-l LEVEL] [--duration D]\n"
               "              [--no-reachability] [--] PROGRAM [ARGS...]\n"
               "       memrec [-o FILE] [-q] [-t] [-s BYTES] [-w TIME] [-d DEPTH] [-l LEVEL] [--duration D]\n"
               "              [--reachability] --pid PID\n"
               "\n"
               "Runs PROGRAM and records every heap allocation with its call stack; or, with\n"
               "--pid, attaches to a running process and records it until Ctrl+C (which\n"
               "detaches and leaves it running) or its end.\n"
               "\n"
               "  -o, --output FILE   write the recording to FILE (default: memrec.<program>.<pid>.zst)\n"
               "  -q, --quiet         print nothing at the end\n"
               "  -p, --pid PID       attach to the running process PID (memrec's own ptrace\n"
               "                      injector; needs the right to trace it)\n"
               "  -f, --follow-fork   record each child the program forks too, into a file of its\n"
               "                      own named after its pid (memrec.<program>.<pid>.zst, or\n"
               "                      FILE.<pid>.zst with -o FILE.zst)\n"
               "  -l, --level N       zstd compression level (1-19, default 3)\n"
               "  -s, --sample-rate B record the stacks of a sample of the allocations, one per B\n"
               "                      bytes allocated on average (suffixes K, M, G); every call\n"
               "                      and byte is still counted, the rest is estimated\n"
               "  -t, --time          measure the time each call spends in the allocator (the\n"
               "                      forwarded malloc, free, new, delete...; with -s, the\n"
               "                      sampled calls)\n"
               "  -w, --max-wait TIME the longest a thread of the program waits for memrec to\n"
               "                      read (a stopped or starved memrec): past it, events are\n"
               "                      dropped, counted and reported; TIME in ms, or with ms, s\n"
               "                      or m; 'none' waits as long as it takes (default: 100ms\n"
               "                      with --pid, none when memrec starts the program)\n"
               "  -d, --max-depth N   frames kept per stack (8-1024, default 256); deeper stacks\n"
               "                      keep their innermost and outermost frames and are marked\n"
               "                      truncated\n"
               "      --duration D    stop recording after D seconds (suffixes s, m, h); with\n"
               "                      --pid, detach then; a program memrec started runs on to\n"
               "                      its end, and memrec waits for it and exits with its status\n"
               "      --no-reachability\n"
               "                      at the program's normal end, do not stop it to find\n"
               "                      which of its leaked blocks are still reachable (the\n"
               "                      scan is on by default; MEMREC_REACHABILITY=0 does the same)\n"
               "      --reachability  with --pid: at the detach, stop the process for a moment\n"
               "                      and classify the blocks it allocated while recorded and\n"
               "                      still holds (reachable or not)\n"
               "  -h, --help          show this help\n"
               "  -V, --version       show the version\n"
               "\n"
               "Then: memprint FILE\n");
}

/* --max-wait's TIME: milliseconds (a bare number, or with ms, s or m),
 * -1 for "none", -2 when invalid. At most an hour. */
static long parse_wait(const char *s)
{
    uint64_t ms;
    if (strcmp(s, "none") == 0) {
        return -1;
    }
    return parse_time_ms(s, 1, 3600.0 * 1000, &ms) == 0 ? (long)ms : -2;
}

enum { OPT_DURATION = 256, OPT_NO_REACH, OPT_REACH };

/* --duration: seconds, or a number with s, m or h; into milliseconds (at
 * least 1). */
static uint64_t parse_duration(const char *s)
{
    uint64_t ms;
    if (parse_time_ms(s, 1000, 1e15, &ms) != 0 || strtod(s, NULL) <= 0) {
        die_code(2, "invalid duration '%s' (expected seconds, or a number with s, m or h, e.g. 30s, 5m)", s);
    }
    return ms ? ms : 1;
}

void parse_args(int argc, char **argv, struct options *o)
{
    static const struct option longs[] = {
        {"output", required_argument, NULL, 'o'},
        {"quiet", no_argument, NULL, 'q'},
        {"level", required_argument, NULL, 'l'},
        {"max-depth", required_argument, NULL, 'd'},
        {"sample-rate", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {"follow-fork", no_argument, NULL, 'f'},
        {"pid", required_argument, NULL, 'p'},
        {"time", no_argument, NULL, 't'},
        {"max-wait", required_argument, NULL, 'w'},
        {"duration", required_argument, NULL, OPT_DURATION},
        {"no-reachability", no_argument, NULL, OPT_NO_REACH},
        {"reachability", no_argument, NULL, OPT_REACH},
        {NULL, 0, NULL, 0},
    };
    o->level = 3;
    o->max_wait_ms = -2; /* not given */
    opterr = 0;
    int c;
    /* '+': stop at the program name, its options are its own. */
    while ((c = getopt_long(argc, argv, "+o:ql:d:s:fp:thVw:", longs, NULL)) != -1) {
        switch (c) {
        case 'o':
            if (strcmp(optarg, "-") == 0) {
                /* The recording is binary and finished only at the end: a
                 * terminal or a pipe reader would get half a file. */
                die_code(2, "-o -: memrec cannot write the recording to standard output; give a file name");
            }
            o->output = optarg;
            break;
        case 'q': o->quiet = 1; break;
        case 'f': o->follow_fork = 1; break;
        case 't': o->time = timing_choose_clock(); break;
        case 'p': {
            uint64_t v;
            if (parse_uint(optarg, 1, INT32_MAX, &v) < 0) {
                die_code(2, "invalid process id '%s'", optarg);
            }
            o->attach_pid = (pid_t)v;
            break;
        }
        case 'l': {
            uint64_t v;
            if (parse_uint(optarg, 1, 19, &v) < 0) {
                die_code(2, "invalid compression level '%s' (expected 1-19)", optarg);
            }
            o->level = (int)v;
            break;
        }
        case 'd': {
            uint64_t v;
            if (parse_uint(optarg, 8, 1024, &v) < 0) {
                die_code(2, "invalid stack depth '%s' (expected 8-1024)", optarg);
            }
            o->max_depth = optarg;
            break;
        }
        case 's': {
            uint64_t v;
            if (parse_size(optarg, 1, 1ull << 30, &v) < 0) {
                die_code(2, "invalid sample rate '%s' (expected bytes from 1 to 1G, e.g. 512K)", optarg);
            }
            snprintf(o->sample_rate, sizeof o->sample_rate, "%llu", (unsigned long long)v);
            break;
        }
        case 'w':
            o->max_wait_ms = parse_wait(optarg);
            if (o->max_wait_ms == -2) {
                die_code(2, "invalid --max-wait '%s' (expected a time such as 100ms, 2s or 1m, or 'none')", optarg);
            }
            break;
        case OPT_DURATION: o->duration_ms = parse_duration(optarg); break;
        case OPT_NO_REACH: o->no_reachability = 1; break;
        case OPT_REACH: o->reachability = 1; break;
        case 'h': usage(stdout); exit(0);
        case 'V': printf("memrec %s (format version %d)\n", MEMREC_VERSION, MEMFMT_VERSION); exit(0);
        case '?':
        default:
            if (optopt) {
                die_code(2, "unknown option '-%c' (see memrec --help)", optopt);
            }
            die_code(2, "unknown option '%s' (see memrec --help)", argv[optind - 1]);
        }
    }
    if (o->max_wait_ms == -2) {
        /* Attached, the program is someone's running service: it must not
         * stop with memrec. Launched, exact figures come first. */
        o->max_wait_ms = o->attach_pid ? 100 : -1;
    }
    if (o->attach_pid) {
        if (optind < argc) {
            die_code(2, "give either --pid or a program to run, not both (see memrec --help)");
        }
        if (o->follow_fork) {
            die_code(2, "--follow-fork works only with a program memrec starts, not with --pid");
        }
        if (o->no_reachability) {
            die_code(2, "--no-reachability is for a program memrec starts; with --pid the scan is made only "
                        "with --reachability");
        }
        return;
    }
    if (o->reachability) {
        die_code(2, "--reachability works only with --pid (a program memrec starts is scanned at its end by default)");
    }
    if (optind >= argc) {
        usage(stderr);
        exit(2);
    }
    o->argv = argv + optind;
}
