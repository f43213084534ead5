// SPDX-License-Identifier: MIT
/* The definitions of memrec's figures in one place: feed it the records of
 * a recording in file order and it keeps the totals (allocations,
 * temporaries, peak, leaks) and, optionally, the same costs per trace.
 * Used by memprint (per trace) and by memrec for its closing summary.
 * Memory grows with traces only: events carry the size and trace of the
 * block they free, and whether it was a temporary. */
#ifndef ACCOUNTING_H
#define ACCOUNTING_H

#include <stddef.h>
#include <stdint.h>

#include "memfmt.h"

struct acct_totals {
    uint64_t allocations; /* successful calls of allocation functions */
    uint64_t temporary; /* freed by the allocating thread's next event */
    uint64_t frees;
    uint64_t allocated_bytes; /* sum of requested sizes */
    uint64_t live_bytes; /* currently live (leaked, at the end) */
    uint64_t live_blocks;
    uint64_t peak_bytes; /* max of live_bytes over the run */
    uint64_t peak_ms; /* time of the peak */
    uint64_t peak_rss;
    uint64_t last_ms; /* time of the latest TIME record */
    uint64_t bad_frees; /* frees of blocks that are not live (corrupt input) */
    uint64_t impossible; /* allocations larger than ACCT_MAX_SIZE, not counted (corrupt input) */
    uint64_t beyond_total; /* allocations and mappings that would take a total past ACCT_MAX_TOTAL, not counted */
    /* Direct mappings (MAP records), never part of the heap figures above. */
    uint64_t mapped_bytes; /* mapped now (still mapped, at the end) */
    uint64_t mapped_peak; /* max of mapped_bytes over the run */
    uint64_t mapped_peak_ms; /* time of that peak */
    uint64_t mapping_calls; /* calls that mapped a new range (mmap, brk/sbrk growth) */
    /* Allocator time (memrec --time): nanoseconds spent inside the
     * allocator by the calls counted (their frees' included); 0 when the
     * file is not timed. Sampled: an estimate, weighted as the calls are. */
    uint64_t time_ns;
    /* The reachability of the blocks live at the end (REACH record,
     * memrec's scan: docs/definitions.md, "Reachability"); has_reach 0:
     * the recording has none. The figures hold when reach_status is
     * MEMFMT_REACH_DONE. */
    int has_reach;
    uint32_t reach_status; /* enum memfmt_reach_status */
    uint64_t unreachable_bytes, unreachable_blocks; /* indirect included */
    uint64_t indirect_bytes, indirect_blocks;
    uint64_t possible_bytes, possible_blocks; /* reachable only through pointers into blocks' middles */
    uint64_t reach_cost_ns, reach_stopped_ns; /* the scan's time, and how long the program stood stopped */
    uint64_t reach_threads, reach_root_bytes;
};

/* Per-trace costs (trace = leaf node id). */
struct acct_cost {
    uint64_t calls;
    uint64_t temporary;
    uint64_t allocated;
    uint64_t live; /* bytes; at the end: leaked */
    uint64_t live_blocks;
    uint64_t peak_saved; /* live at the latest global peak, if changed since */
    uint64_t peak_blocks_saved; /* live_blocks at the latest global peak, if changed since */
    uint64_t stamp; /* event serial of the last change */
    /* Direct mappings owned by this trace (it made the mapping call). */
    uint64_t mapped; /* bytes mapped now; at the end: still mapped */
    uint64_t mapping_calls;
    uint64_t mapped_peak_saved; /* mapped at the latest mapped peak, if changed since */
    uint64_t mapped_stamp; /* mapping serial of the last change */
    /* Allocator time of the calls that allocated with this trace, and of
     * the frees of their blocks (a free names its block's allocation
     * trace: docs/definitions.md, "Allocator time"). */
    uint64_t time_ns;
    /* Of its blocks live at the end (REACH_TRACE): unreachable ones
     * (indirect included), and those only possibly reachable. */
    uint64_t unreachable, unreachable_blocks;
    uint64_t indirect, indirect_blocks;
    uint64_t possible, possible_blocks;
};

/* An event's time as accounted: a record's 64-bit time is saturated as the
 * batched events' 32-bit one is, so both paths give the same figures. */
#define ACCT_MAX_EVENT_NS ((uint64_t)UINT32_MAX)

/* No allocation can be larger than the user address space of x86-64
 * (128 TiB): an event claiming more is corrupt input, refused (counted in
 * acct_totals.impossible) so that it cannot distort every figure. */
#define ACCT_MAX_SIZE ((uint64_t)1 << 47)

/* No total can reach 2^63: the bytes ever allocated (which bound every
 * live, leaked and peak figure, of the whole run and of each trace) and
 * the bytes mapped. A real program allocates a few TiB an hour; a file
 * that claims more would wrap the sums (131,072 blocks of 128 TiB "leak"
 * 0 bytes). An event that would pass the bound is refused (counted in
 * acct_totals.beyond_total), so every figure stays exact and below 2^63,
 * which signed 64-bit readers of the JSON and --check also hold. Allocator
 * time, never subtracted, saturates there instead. */
#define ACCT_MAX_TOTAL ((uint64_t)INT64_MAX)

struct accounting;

/** New accounting; with `per_trace`, costs are kept per trace too. */
struct accounting *accounting_new(int per_trace);
/** Release; accepts NULL. */
void accounting_free(struct accounting *a);
/** Apply one record. Returns 0, or MEMFMT_E_CORRUPT when the record cannot
 * be applied (a free of a block that is not live, a size above
 * ACCT_MAX_SIZE); totals stay usable. The caller checks that an
 * allocation's trace is one defined so far (the per-trace table is sized by
 * it); a free naming a trace no allocation was charged to is refused
 * without growing anything. */
int accounting_feed(struct accounting *a, const struct memfmt_record *rec);
/** Apply a batch of events from memfmt_read_batch(), as accounting_feed()
 * would apply them one by one, with one difference: an allocation or a
 * free whose trace is `ntraces` or above (a node not defined yet) is
 * charged to trace 0, no stack, where such an allocation went. Returns how
 * many events were not applied as they were: such events, allocations
 * larger than ACCT_MAX_SIZE, and frees of blocks that are not live
 * (corrupt input); a realloc with both counts once. */
uint64_t accounting_feed_events(struct accounting *a, const struct memfmt_event *ev, size_t n, uint32_t ntraces);
/** The totals so far. */
const struct acct_totals *accounting_totals(const struct accounting *a);
/** Sampling mode: events are a Poisson sample, one per `rate` bytes on
 * average; each is weighted by 1 / (1 - exp(-size / rate)) so that every
 * figure becomes an unbiased estimate. Call before the first event. */
void accounting_set_sample_rate(struct accounting *a, uint64_t rate);
/** After the last event: turn weighted sums into estimates. Idempotent;
 * a no-op unless sampling. */
void accounting_finish(struct accounting *a);

/** Number of traces with costs (ids 1..n-1 valid; 0 = no stack). */
uint32_t accounting_ntraces(const struct accounting *a);
/** Costs of one trace, NULL if none recorded. */
const struct acct_cost *accounting_cost(const struct accounting *a, uint32_t trace);
/** Live bytes of `trace` at the moment of the global peak. */
uint64_t accounting_at_peak(const struct accounting *a, uint32_t trace);
/** Live blocks of `trace` at the moment of the global peak (pprof's
 * inuse_objects at the peak). */
uint64_t accounting_blocks_at_peak(const struct accounting *a, uint32_t trace);
/** Bytes `trace` had mapped at the moment of the mapped peak. */
uint64_t accounting_mapped_at_peak(const struct accounting *a, uint32_t trace);

#endif
