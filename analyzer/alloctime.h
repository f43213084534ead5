// SPDX-License-Identifier: MIT
/* Allocator time tables (memprint --alloc-time, memtui's size-class view):
 * the latency of the calls of a timed recording (memrec --time) per size
 * class, per allocation function and per thread, with calls, total, mean,
 * p50, p99 and max. One pass over the file, record by record (the event
 * batches carry neither the thread nor the function). Percentiles come
 * from a bounded log-linear histogram: docs/definitions.md, "Allocator
 * time", states its error. Never prints except in the alloctime_print_*
 * functions. */
#ifndef ALLOCTIME_H
#define ALLOCTIME_H

#include <stdint.h>
#include <stdio.h>

#include "model.h"
#include "threadtimes.h"

/* Histogram of latencies: values below 16 ns exactly, then 16 buckets per
 * power of two up to 2^32 ns (the largest time an event holds). A bucket
 * is 1/16 of its lower bound wide, and a percentile is reported as the
 * middle of its bucket (never above the largest value seen): at most
 * 1/32 (3.2%) from the true value. */
#define ALLOCTIME_SUB 16
#define ALLOCTIME_NBUCKETS (ALLOCTIME_SUB + 28 * ALLOCTIME_SUB)
/* Thread rows with a histogram of their own; threads beyond share one row
 * (thread 0), so that a file naming a million threads stays small. */
#define ALLOCTIME_MAX_THREADS 1024

/* One row of a table. In a sampled recording, calls, total and the
 * percentiles are estimates: each sampled call weighted as the accounting
 * weighs it (definitions.md, "Sampling mode"); max is the sampled calls'. */
struct alloctime_row {
    uint32_t key; /* size class (sizes.h's bucket), enum memfmt_kind, or thread index */
    uint32_t tid; /* threads: kernel thread id, 0 when unknown */
    uint64_t calls;
    uint64_t total_ns;
    uint64_t mean_ns, p50_ns, p99_ns, max_ns;
    /* Threads only: lifetime and CPU time from THREAD_TIMES. */
    struct thread_times times;
};

struct alloctime {
    int timed; /* the file is timed (MEMFMT_HF_TIMED); else every table is empty */
    int sampled;
    struct alloctime_row *sizes; /* size classes with calls, ascending */
    uint32_t nsizes;
    struct alloctime_row *funcs; /* functions with calls, by kind */
    uint32_t nfuncs;
    struct alloctime_row *threads; /* threads with calls or times, by index; 0 (merged) last */
    uint32_t nthreads;
    uint32_t merged_threads; /* thread indexes counted in row 0 */
    uint64_t calls, total_ns; /* over every call: each table sums to these */
    int stop_rc; /* 0, or the memfmt status where the data stopped */
};

/** Read the recording at `path` (the file `m` was loaded from) and make
 * the three tables. Returns 0 with *out set (free with alloctime_free()),
 * or a negative memfmt status when the file cannot be opened (*err_errno
 * = errno for MEMFMT_E_IO). Frees count in their block's size class and
 * under their own function (free, operator delete); a realloc's whole
 * time in its new size's class. Memory: at most ALLOCTIME_MAX_THREADS + 81
 * histograms of ALLOCTIME_NBUCKETS counters, and 4 bytes per thread index
 * up to the largest the file names; time O(records). */
int alloctime_run(const char *path, const struct model *m, struct alloctime **out, int *err_errno);
/** Release; accepts NULL. */
void alloctime_free(struct alloctime *t);
/** Bucket of a latency in the histogram, and the value a percentile in
 * that bucket is reported as (its middle). For the unit tests. */
unsigned alloctime_bucket(uint64_t ns);
uint64_t alloctime_bucket_value(unsigned b);

/** The three tables as text (one header line, then rows). */
void alloctime_print_text(const struct alloctime *t, FILE *f);
/** The three tables as JSON members (`"alloc_time": {...}`, no braces around). */
void alloctime_print_json(const struct alloctime *t, FILE *f);
/** Two recordings side by side per size class and per function: calls,
 * mean and total of each, the change of the total and the ratio of the
 * means (new / base). */
void alloctime_print_diff_text(const struct alloctime *base, const struct alloctime *newer, FILE *f);

/** memprint --alloc-time of the recording `m` (the tables `t` are its):
 * the program line and the tables as text, or one JSON object with the
 * program and its runtime (`json`). */
void alloctime_print_report(const struct alloctime *t, const struct model *m, int json, FILE *f);
/** memprint --diff BASE NEW --alloc-time: both programs, then
 * alloctime_print_diff_text() (or one JSON object with
 * the "alloc_time_diff" member, `json`). */
void alloctime_print_compare(const struct alloctime *base, const struct model *mb, const struct alloctime *newer,
                             const struct model *mn, int json, FILE *f);

#endif
