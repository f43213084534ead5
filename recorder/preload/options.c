// SPDX-License-Identifier: MIT
/* MEMREC_* environment options, read once at start-up by scanning environ
 * directly: getenv is fine, but parsing must not allocate, and one table
 * keeps names, defaults and docs together. */
#include "options.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cfi.h"
#include "log.h"

HIDDEN struct rec_options opts = {
    .max_depth = 256,
    .verbose = 0,
    .freeres = 1,
    .flush_ms = 10,
    .fast_unwind = 1,
    .tsc_order = 0,
    .heapinfo = 1,
    .max_wait_ms = -1,
    .reachability = 1,
};

struct option_def {
    const char *name;
    int *value;
    int min, max;
    const char *doc;
};

static const struct option_def defs[] = {
    {"MEMREC_MAX_DEPTH", &opts.max_depth, 8, UNWIND_MAX_DEPTH, "frames kept per stack (outermost kept when deeper)"},
    {"MEMREC_VERBOSE", &opts.verbose, 0, 2, "print the options in effect at start"},
    {"MEMREC_FREERES", &opts.freeres, 0, 1, "release the C++ runtime's emergency pool at exit"},
    {"MEMREC_FLUSH_MS", &opts.flush_ms, 1, 100, "period of buffer flushes, time and RSS samples"},
    {"MEMREC_SAMPLE_RATE", &opts.sample_rate, 0, 1 << 30,
     "sample allocations: mean bytes between samples (0: record all)"},
    {"MEMREC_SAMPLE_SEED", &opts.sample_seed, 0, 1 << 30, "seed of the sampling (0: different every run)"},
    {"MEMREC_TSC_ORDER", &opts.tsc_order, 0, 1,
     "1: order events by the TSC when it is the kernel's clocksource, not one atomic counter"},
    {"MEMREC_TIME", &opts.time, 0, 2,
     "time every forwarded allocator call (memrec --time): 1 with the TSC, 2 with CLOCK_MONOTONIC"},
    {"MEMREC_CHECK_UNWIND", &opts.check_unwind, 0, 1, "compare every fast stack walk with libunwind (debugging)"},
    {"MEMREC_FAST_UNWIND", &opts.fast_unwind, 0, 1, "walk stacks with the cached .eh_frame walker (0: libunwind only)"},
    {"MEMREC_MAX_WAIT_MS", &opts.max_wait_ms, 0, 3600 * 1000,
     "longest wait of a thread for room in the pipe to memrec, then drop and count (unset: no bound)"},
    {"MEMREC_REACHABILITY", &opts.reachability, 0, 1,
     "at the normal end, let memrec stop the program and classify its live blocks (reachable or not)"},
    {"MEMREC_HEAPINFO", &opts.heapinfo, 0, 1,
     "sample the allocator's own figures (glibc mallinfo2) with the RSS, at most 0.5% of the time"},
};

const char *options_env(char **envp, const char *name)
{
    size_t n = strlen(name);
    for (char **e = envp; e && *e; e++) {
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') {
            return *e + n + 1;
        }
    }
    return NULL;
}

static int parse_int(const char *s, int *out)
{
    long v = 0;
    if (!*s) {
        return -1;
    }
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (1L << 31)) {
            return -1;
        }
        v = v * 10 + (*s - '0');
    }
    *out = (int)v;
    return 0;
}

void options_init(char **envp)
{
    /* Called again at each attach: an option of one recording that the
     * next one does not give goes back to its default. */
    opts.max_wait_ms = -1;
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
        const char *s = options_env(envp, defs[i].name);
        int v;
        if (!s) {
            continue;
        }
        if (parse_int(s, &v) < 0 || v < defs[i].min || v > defs[i].max) {
            log_msg("ignoring invalid option value", defs[i].name);
            continue;
        }
        *defs[i].value = v;
    }
    if (opts.verbose) {
        for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
            char line[160];
            size_t n = strlen(defs[i].name);
            memcpy(line, defs[i].name, n);
            line[n++] = '=';
            log_fmt_u64(line + n, (uint64_t)*defs[i].value);
            log_msg(line, defs[i].doc);
        }
    }
}
