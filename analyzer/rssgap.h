// SPDX-License-Identifier: MIT
/* RSS versus heap (docs/definitions.md, "RSS versus heap"): why the
 * resident set is larger than the heap. While the recording is read, the
 * moment where RSS exceeded the live heap the most is kept (at the
 * allocator's own samples, HEAPINFO records, when the file has them; else
 * at the RSS samples); the report splits that RSS into the live heap, the
 * allocator's overhead, the memory it holds free, direct mappings and the
 * rest, and says when the allocator holds much more free memory than the
 * live heap, with what to try. Fixed memory: a few moments, whatever the
 * file holds. */
#ifndef RSSGAP_H
#define RSSGAP_H

#include <stdint.h>
#include <stdio.h>

#include "accounting.h"
#include "heaplayout.h"
#include "memfmt.h"

/* One moment of the run: RSS and what the events say at that point. */
struct rssgap_moment {
    uint64_t ms; /* time of the latest TIME record */
    uint64_t rss; /* the latest RSS sample */
    uint64_t live_heap; /* requested bytes live (events) */
    uint64_t live_blocks;
    uint64_t mapped; /* direct mappings (MAP records) */
    uint64_t events; /* allocations and frees before it: the state of the heap */
    int has_info; /* heapinfo holds the allocator's sample taken at this point */
    struct {
        uint64_t arena, ordblks, smblks, fordblks, uordblks, keepcost, hblks, hblkhd;
    } info;
    /* The main heap's layout at this point: a LAYOUT record read with
     * no event between it and the moment (the same state of the heap,
     * whether before or after it), else the latest one before it. */
    struct heaplayout layout;
    struct heaplayout arenas; /* the thread arenas' heaps, the same way */
};

/* RSS and the live heap are steady while each stays within
 * 1/RSSGAP_STEADY_SHARE of the value that started its steady stretch.
 * memrec writes an RSS record when it reads the value, which can be ahead
 * of the events written so far by a flush period, and the last value
 * before the process ends is stale (it ends before the next read): so a
 * moment counts only when both RSS and the live heap held for
 * RSSGAP_STEADY_MS (two of memrec's samples) before it and after it. Any
 * lag between the two is then smaller than the stretch, and the moment's
 * RSS, heap and allocator figures describe one state of the program.
 * (Taking the widest gap among unsteady moments picks exactly the moment
 * where the events lag RSS the most.) Moments waiting for the "after" are
 * kept in a small ring. */
#define RSSGAP_STEADY_MS 20
#define RSSGAP_STEADY_SHARE 64
#define RSSGAP_RING 8

/* The kinds of moment kept, best first: allocator samples, TIME records
 * (both where RSS and the heap were steady). */
enum { RSSGAP_INFO_STEADY, RSSGAP_RSS_STEADY, RSSGAP_NKINDS };

/* What is kept while reading. Zero-initialized: nothing seen. */
struct rssgap {
    int events_accounted; /* set by the loader: live heap figures are the whole run's */
    unsigned format_version; /* set by the loader: says why allocator samples may be missing */
    uint64_t ms; /* latest TIME */
    uint64_t rss; /* latest RSS sample (0: none yet) */
    uint64_t steady_rss; /* the RSS that started the steady stretch */
    uint64_t steady_ms; /* time of the latest TIME record before that */
    int heap_seen; /* steady_heap holds a value */
    uint64_t steady_heap; /* the live heap that started its steady stretch */
    uint64_t steady_heap_ms; /* the time that stretch started */
    /* Steady moments waiting for RSSGAP_STEADY_MS more of steady RSS and heap. */
    struct rssgap_moment ring[RSSGAP_RING];
    int ring_kind[RSSGAP_RING];
    unsigned ring_n;
    uint64_t samples; /* HEAPINFO records */
    uint64_t cost_ns_total, cost_ns_max; /* CPU time of their mallinfo2 calls */
    uint64_t wall_ns_max; /* the longest call in wall time */
    int have[RSSGAP_NKINDS];
    struct rssgap_moment best[RSSGAP_NKINDS]; /* the widest gap of each kind */
    struct heaplayout layout; /* the latest LAYOUT record of the main heap */
    struct heaplayout arenas; /* the latest of the thread arenas' heaps */
    uint64_t layouts; /* LAYOUT records */
    uint64_t layout_cost_ns_total, layout_cost_ns_max; /* memrec's time to make them */
    /* memprint --at: the layout at or before that moment (analysis.h),
     * set by the caller after the load; the split stays the whole run's. */
    int has_at;
    uint64_t at_ms;
    struct heaplayout at_layout, at_arenas;
};

/** Feed one record (TIME, RSS, HEAPINFO; others are ignored) with the
 * totals as they stand after the events before it (accounting_totals() of
 * the loader's accounting). memrec's last RSS record, the process's peak
 * from its rusage written after every event, is followed by no TIME or
 * HEAPINFO record, so it never makes a moment. */
void rssgap_feed(struct rssgap *g, const struct memfmt_record *r, const struct acct_totals *t);
/** Feed a LAYOUT record (traces at or above `nnodes` become 0): it
 * becomes the latest layout, and that of the moments kept (waiting in the
 * ring, or the best of their kind) taken at the same state of the heap: no
 * event between them (memrec writes a layout after an allocator sample,
 * at most ten a second, so that a moment of a steady heap gets the layout
 * of a later sample). Returns 1 when a trace was replaced (the record is
 * counted as refused), else 0. */
uint32_t rssgap_feed_layout(struct rssgap *g, const struct memfmt_record *r, const struct acct_totals *t,
                            uint32_t nnodes);
/** The heap layout the section shows: 1 when it has a place for one (a
 * moment, or --at), with *l the layout (NULL when none was read) and *why
 * whether it is known (`sampled`: the recording is); 0 when the section
 * shows none. */
int rssgap_layout(const struct rssgap *g, int sampled, const struct heaplayout **l, enum heaplayout_why *why);
/** The thread arenas' layout that goes with rssgap_layout()'s (of the same
 * moment), or NULL when none was read (no thread heap, or memrec could
 * not tell them from chunks mapped on their own). */
const struct heaplayout *rssgap_arenas(const struct rssgap *g);

/* The split of one moment's RSS. Signed parts may come out negative: the
 * allocator's free bytes and mapped bytes are address space, not all of it
 * resident, and its in-use count misses nothing the events see but may
 * see less than they do (blocks set apart, an estimate when sampling). */
struct rssgap_parts {
    struct rssgap_moment at;
    int known; /* the allocator's figures are known (at.has_info) */
    int64_t overhead; /* allocator in use (uordblks + hblkhd) minus live heap */
    uint64_t in_use; /* uordblks + hblkhd */
    uint64_t free_held; /* fordblks: free bytes in the arenas, top included */
    uint64_t releasable; /* keepcost: the main arena's top, released by malloc_trim(0) at once */
    int64_t rest; /* RSS - (allocator's total + mapped); without figures: RSS - (live heap + mapped) */
    int advice; /* the allocator holds much more free memory than the live heap */
};

/* Advice when the allocator's free bytes are at least RSSGAP_ADVICE_RATIO
 * times the live heap and at least RSSGAP_ADVICE_MIN bytes. */
#define RSSGAP_ADVICE_RATIO 2
#define RSSGAP_ADVICE_MIN ((uint64_t)8 << 20)

/** The split at the moment kept: the widest gap of the best kind of
 * moment the file has (the order of the enum). Returns 0, or -1 when there is
 * nothing to split: rssgap_missing() says why. */
int rssgap_compute(const struct rssgap *g, struct rssgap_parts *out);

/* Why there is nothing to split. */
enum rssgap_missing {
    RSSGAP_PRESENT, /* there is a moment */
    RSSGAP_WINDOW, /* the live heap is not the whole run's (a time window, --at) */
    RSSGAP_NO_RSS, /* the recording has no RSS sample */
    RSSGAP_SHORT, /* the run is shorter than a steady stretch before and after a moment */
    RSSGAP_UNSTEADY, /* RSS or the live heap moved throughout the run */
};
/** Why rssgap_compute() has nothing to split, or RSSGAP_PRESENT. */
enum rssgap_missing rssgap_missing(const struct rssgap *g);
/** The name of a reason in JSON ("window", "no_rss", "short", "unsteady"); NULL for RSSGAP_PRESENT. */
const char *rssgap_missing_name(enum rssgap_missing why);

/** The "RSS VERSUS HEAP" section as text; `sampled`: live heap figures
 * are estimates; `nthreads`: threads the recording saw. */
void rssgap_print_text(const struct rssgap *g, int sampled, uint32_t nthreads, FILE *f);
/** The split in one line (two with the advice), for memtui's summary;
 * nothing when there is nothing to split. */
void rssgap_print_brief(const struct rssgap *g, FILE *f);
/** `, "rss_gap": {...}, "rss_gap_missing": null`, or `"rss_gap": null`
 * and the reason's name when there is nothing to split; with --at
 * (has_at), `"rss_gap": {"at_ms": T, ...}` and the reason. `members`
 * (may be NULL) prints more members of the object (", \"k\": v") before
 * it closes: the heap layout's (json.c). */
void rssgap_print_json(const struct rssgap *g, int sampled, void (*members)(void *ctx, FILE *f), void *ctx, FILE *f);

#endif
