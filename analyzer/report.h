// SPDX-License-Identifier: MIT
/* The ranked reports of memprint: call stacks symbolized and merged (traces
 * whose frames read the same are one entry), ranked per cost, printed as
 * text or as one JSON object. Building costs O(nodes + traces) plus the
 * symbolizer's work; printing costs O(frames printed). Every string from
 * the recording is escaped on output (util/escape.h). */
#ifndef REPORT_H
#define REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "figures.h"
#include "growth.h"
#include "model.h"
#include "symbolize.h"

enum report_section {
    REPORT_CALLS, /* MOST CALLS TO ALLOCATION FUNCTIONS */
    REPORT_PEAK, /* PEAK MEMORY CONSUMERS */
    REPORT_TEMPORARY, /* MOST TEMPORARY ALLOCATIONS */
    REPORT_LEAKED, /* MOST MEMORY LEAKED */
    REPORT_ALLOCATED, /* MOST MEMORY ALLOCATED */
    REPORT_MAPPED, /* PEAK MAPPED MEMORY: direct mappings, not the heap */
    REPORT_TIME, /* MOST TIME IN THE ALLOCATOR: timed recordings only */
    REPORT_GROWTH, /* MOST MEMORY GROWTH: when the model has growth (growth.h) */
    REPORT_NSECTIONS,
};

/* One merged call stack and its costs. Its frames are not kept (a deep
 * stack of a file with many traces would cost depth x traces): ask
 * report_frames() for the ones to show. */
struct report_stack {
    uint32_t path; /* report.c's id of the stack's frames, for report_frames() */
    uint32_t nframes;
    uint32_t omitted; /* frames cut by the depth limit when recorded */
    uint64_t calls, temporary, allocated, leaked, leaked_blocks, peak;
    uint64_t mapped_peak, mapped_end, mapping_calls; /* direct mappings */
    uint64_t time_ns; /* allocator time of its calls and of its blocks' frees */
    /* Of its leaked blocks, when the recording classified them (REACH): the
     * unreachable ones (indirect included) and the only possibly
     * reachable ones (accounting.h). */
    uint64_t unreachable, unreachable_blocks, indirect, indirect_blocks, possible, possible_blocks;
    /* Growth of its live bytes over the window (growth.h), its traces'
     * series summed; `grows` when the fit counts as growth. */
    struct growth_fit growth;
    uint64_t growth_samples; /* allocations in the window */
    int grows;
};

struct report_index;

struct report {
    const struct model *model;
    struct symbolizer *sym;
    struct report_index *ix; /* report.c's: frames of every node, stack paths */
    struct report_stack *stacks;
    uint32_t nstacks;
    uint32_t *ranked[REPORT_NSECTIONS]; /* indexes into stacks, best first */
    uint32_t nranked[REPORT_NSECTIONS];
    /* Sampled: stacks whose live bytes rose (fitted rate > 0) with fewer
     * than GROWTH_MIN_SAMPLES sampled allocations in the window. */
    uint32_t growth_undersampled;
    /* MOST MEMORY LEAKED ranks the unreachable bytes only
     * (report_rank_unreachable()). */
    int leaked_unreachable;
    /* Trace -> index into stacks + 1 (0: a trace with no cost): report_stack_of(). */
    uint32_t *stack_of_trace;
    uint32_t ntraces;
};

struct report_options {
    int top; /* entries per section */
    int max_frames; /* frames printed per stack */
    unsigned sections; /* 0: every section; else bit s for section s (the summary is always printed) */
    int full_names; /* text: C++ names as they are, not shortened (names.h) */
    int unreachable; /* MOST MEMORY LEAKED: only the unreachable bytes, ranked (report_rank_unreachable()) */
    const char *note; /* text: one more line after the summary, or NULL */
    const char *json_extra; /* JSON: members added to the object (", \"k\": v..."), or NULL */
    struct figures_suppressed suppressed; /* JSON: leaks matched by suppressions (suppress.h), not in leaked_* */
};

/** Build the reports of `m` (which must outlive the report). Returns NULL
 * only when the symbolizer cannot start. */
struct report *report_new(const struct model *m);
/** Release; accepts NULL. */
void report_free(struct report *r);
/** 1 when the recording's leaked blocks were classified (a REACH record
 * with status MEMFMT_REACH_DONE, not sampled): the figures of reachability
 * hold. */
int report_has_reach(const struct model *m);
/** Rank MOST MEMORY LEAKED by unreachable bytes, keeping only the stacks
 * with some (memprint --unreachable): what LeakSanitizer reports. Call
 * before suppressions are applied (suppress.h). */
void report_rank_unreachable(struct report *r);
/** What the summary says instead of the split when the leaked blocks were
 * not classified ("not classified: ..."), or NULL when they were. */
const char *report_reach_missing(const struct model *m);
/** The first `max` frames of `st`, innermost first, into `out`; returns
 * how many (min(max, st->nframes)). Strings belong to the symbolizer and
 * live as long as the report. A gap marker (frames dropped by the depth
 * limit when recording) is a frame with no function, no module and offset
 * 0. Costs O(frames copied). */
uint32_t report_frames(const struct report *r, const struct report_stack *st, struct sym_frame *out, uint32_t max);
/** 1 when section `s` is printed with options `o`: the ones asked for
 * (o->sections), else every section, MOST TIME IN THE ALLOCATOR only when
 * the recording is timed. */
int report_section_shown(const struct report *r, const struct report_options *o, enum report_section s);
/** Paths (report_stack.path) for analyses done once per path rather than
 * per stack (suppress.c): path ids run from 1 to report_npaths() - 1 (0 is
 * the empty path). report_path_step() gives the frames path `p` adds in
 * front of its parent's, innermost first, in *frames (the report's own,
 * *n of them), and returns the parent path id (0 at the end). Costs O(1). */
uint32_t report_npaths(const struct report *r);
uint32_t report_path_step(const struct report *r, uint32_t p, const struct sym_frame **frames, uint32_t *n);
/** The stack trace `trace` (a model node, 0: no stack) makes in the
 * report, for figures kept per trace outside its sections (heaplayout.c):
 * its path for report_frames() and its frame count; the costs are 0. A
 * trace without a cost of its own gets its path built on the way (the
 * index is a cache: `r` is not changed otherwise). */
struct report_stack report_stack_of_trace(struct report *r, uint32_t trace);
/** `, "truncated": B, "frames": [...]`: every frame of `st` as the JSON
 * sections print them (json.c). */
void report_print_json_frames(const struct report *r, const struct report_stack *st, FILE *f);
/** Section title as printed ("PEAK MEMORY CONSUMERS"). */
const char *report_title(enum report_section s);
/** Cost of a stack in a section. */
uint64_t report_cost(const struct report_stack *st, enum report_section s);
/** The stack (index into r->stacks) trace `trace` of the model is merged
 * into; UINT32_MAX for a trace with no allocation or mapping in the
 * model's accounting. O(1). */
uint32_t report_stack_of(const struct report *r, uint32_t trace);
/** Print the summary lines of the text report (program, runtime, calls,
 * temporary, peak, RSS, leaked, allocated, mapped) for the costs in `a`:
 * m->acct for the whole run, or an analysis's accounting (analysis.h) for
 * a window or filter, whose calls and bytes are then its own even in a
 * sampled recording. memtui shows these lines as they are. */
void report_print_summary(const struct model *m, const struct accounting *a, FILE *out);
/** The whole heap's growth over the window of `g` (growth.h; NULL: no
 * line), as the text report prints it after the summary: "memory growth:
 * RATE/s (N bytes/s) fitted over S s from T s, R² X", "~" before the rate
 * when `m` is sampled, or that the window is too short to fit. */
void report_print_growth(const struct model *m, const struct growth *g, FILE *out);
/** Print the summary and every section as text. */
void report_print_text(const struct report *r, const struct report_options *o, FILE *f);
/** Print everything as one JSON object. */
void report_print_json(const struct report *r, const struct report_options *o, FILE *f);
/** Print the frames of `st` from index `from` (innermost is 0) as the text
 * report does, at most o->max_frames of them, names shortened unless
 * o->full_names. For other layouts of the same stacks (groups.h). */
void report_print_frames(const struct report *r, const struct report_stack *st, uint32_t from,
                         const struct report_options *o, FILE *out);

#endif
