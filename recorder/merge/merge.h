// SPDX-License-Identifier: MIT
/* memrec's side of the pipe: decodes the recorder's per-thread batches and
 * writes file records in one total order (by sequence number), turning
 * addresses into slots and per-thread trace ids into one global tree. */
#ifndef MERGE_H
#define MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "accounting.h"
#include "memfmt.h"
#include "reachgraph.h"

struct merge;

struct merge_stats {
    uint64_t unmatched_frees; /* frees of addresses never seen allocated */
    uint64_t lost_events; /* reported lost by the recorder */
    uint32_t images; /* process images seen after the first (each exec adds one) */
    int exiting; /* the recorder said the process ends normally */
    int execing; /* the image said it is about to exec, and nothing came after it */
    int exit_status; /* with this status, -1 when it could not know */
    int signaled; /* the recorder said the process dies of this signal (0: none) */
    int cpu_said; /* the recorder said the process's CPU time as it exits: */
    uint64_t cpu_user_ns, cpu_sys_ns; /* user and system, since the process started */
};

/** New merger writing to `w` and feeding every written record to `acct`
 * (both stay owned by the caller). `start_ms` is CLOCK_MONOTONIC at the
 * start of the recording, the origin of TIME records. */
struct merge *merge_new(memfmt_writer *w, struct accounting *acct, uint64_t start_ms);
/** Release; accepts NULL. */
void merge_free(struct merge *m);
/** Take one batch (the bytes after its length field). Returns 0, or a
 * negative status when the batch is malformed (its events are dropped) or
 * the writer failed (memfmt_writer's code). */
int merge_batch(struct merge *m, const uint8_t *p, size_t len);
/** Write a resident-set sample at the current position. */
int merge_rss(struct merge *m, uint64_t bytes);
/** Write every event still queued, in order (end of the input). */
int merge_drain(struct merge *m);
/** Write THREAD_TIMES for the threads still alive (their lifetime up to
 * now, CPU time unknown unless they said it), then the closing STATS and
 * END records. */
int merge_end(struct merge *m, unsigned how, int value, uint64_t runtime_ms);
/** memrec --time: the recorder's clock ticks (wire *_T events) are
 * `ns_per_tick` ns each; events applied from now on use it. Default 1
 * (the recorder sends CLOCK_MONOTONIC ns). */
void merge_set_clock(struct merge *m, double ns_per_tick);
/** The process's CPU time over the recording, written in END (default 0:
 * unknown). */
void merge_set_cpu(struct merge *m, uint64_t user_ns, uint64_t sys_ns);
/* The reachability scan of a stopped program (reach.c): what memrec read
 * of it besides the blocks, and how to read them. */
struct merge_reach_in {
    const struct reach_range *roots;
    size_t nroots;
    const uint64_t *words; /* the threads' registers */
    size_t nwords;
    struct reach_reader rd;
    uint64_t deadline_ns; /* CLOCK_MONOTONIC; past it the scan is given up */
    uint64_t threads; /* threads stopped */
    uint64_t asked_ns; /* CLOCK_MONOTONIC of the program's request */
    uint64_t stopped_ns; /* when its threads were all stopped */
};

/* The most live blocks memrec classifies: about 60 bytes of memrec's
 * memory each while it does (the block, its sort, work list and
 * read-ahead offset), besides MERGE_REACH_READ_AHEAD. */
#define MERGE_REACH_MAX_BLOCKS ((uint64_t)1 << 24)
/* The most memory memrec takes to read the live blocks ahead of the scan
 * (a few large reads instead of one per block of a linked list); a larger
 * heap is read as the scan comes to each block. */
#define MERGE_REACH_READ_AHEAD ((uint64_t)1 << 30)

/** Whether a scan can be made now: MEMFMT_REACH_DONE, or the status to
 * write without one (sampled, too many live blocks). */
unsigned merge_reach_check(const struct merge *m);
/** Write every queued event, then classify the live blocks through `in`
 * and write REACH and its REACH_TRACE records; the REACH record written
 * goes to *out too. Returns 0 or the writer's status. */
int merge_reach(struct merge *m, const struct merge_reach_in *in, struct memfmt_record *out);
/** Write a REACH record that says no scan was made (`status`), after
 * `cost_ns` spent finding it out. Returns 0 or the writer's status. */
int merge_reach_skipped(struct merge *m, unsigned status, uint64_t cost_ns);

/** Counters so far. */
const struct merge_stats *merge_stats(const struct merge *m);

#endif
