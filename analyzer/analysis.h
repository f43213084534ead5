// SPDX-License-Identifier: MIT
/* Re-accounting of a loaded recording restricted to a time window of
 * allocation time, to one thread, to the stacks a function filter keeps,
 * or up to a moment (--at), in one more pass over the file; with the
 * heap-over-time series (timeseries.h) and the size histogram (sizes.h)
 * of the same blocks. memprint and memtui both take their windowed and
 * filtered figures from here. Never prints. */
#ifndef ANALYSIS_H
#define ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "accounting.h"
#include "frames.h"
#include "growth.h"
#include "heaplayout.h"
#include "model.h"
#include "sizes.h"
#include "timeseries.h"

/*
 * How to use:
 *
 *     struct analysis_query q = ANALYSIS_QUERY_INIT;
 *     q.has_window = 1; q.from_ms = 30000; q.to_ms = 60000;
 *     q.series_points = 200; q.sizes = 1;
 *     struct analysis *a;
 *     int rc = analysis_run(path, model, &q, &a, &err);
 *     ... a->acct (per-trace costs: calltree_build(frames, a->acct), cost_total()) ...
 *     ... a->series->points[i], a->sizes->buckets[k] ...
 *     analysis_free(a);
 *
 * Run it again for each new window or filter: the figures are computed
 * once per query, then shown as often as wanted. Without any restriction,
 * a->acct's figures equal model->acct's (the summary), and the series'
 * peak is the summary's peak and its time.
 *
 * What a window counts: the allocations made in it (an event's time is
 * that of the latest TIME record before it, about every 10 ms), followed
 * to the end of the data: their frees wherever they come, their peak,
 * what of them is leaked. A block allocated before the window and freed
 * inside it is not counted (earlier_freed_* says how many). Events name no
 * addresses (docs/format.md): blocks of the same size and stack cannot be
 * told apart, so a free is charged to the oldest kind first: a block from
 * before the window, then one of the freeing thread when a thread is
 * chosen, then the rest; a temporary free is its thread's latest
 * allocation, the newest. Direct mappings follow the same rule per stack.
 */

struct analysis_query {
    int has_window; /* count only allocations stamped in [from_ms, to_ms) */
    uint64_t from_ms, to_ms;
    int has_at; /* stop reading at at_ms: what was live then (leaked = live at at_ms) */
    uint64_t at_ms;
    uint32_t thread; /* 0: every thread; else only allocations (and mappings) of this thread index */
    const uint8_t *keep; /* per model node (m->nnodes entries): nonzero keeps stacks ending there; NULL: all */
    uint32_t series_points; /* 0: no series; else 1..TIMESERIES_MAX_POINTS points */
    int sizes; /* 1: fill the size histogram; 2: and the sizes of each call stack (sizes_of_traces) */
    int growth; /* 1: fit each trace's live bytes over the window (growth.h): all blocks the filters keep,
                 * whenever allocated */
    /* With series_points: per model node (m->nnodes entries), 1 + the
     * index of the series group its kept blocks also count in, 0 for none
     * (timeseries.h, groups); NULL: no groups. series_groups: how many
     * (1..TIMESERIES_MAX_GROUPS). memtui's stacked chart. */
    const uint32_t *series_group;
    uint32_t series_groups;
    /* Per model node: the node whose costs its kept blocks and mappings
     * are charged to (wrappers.h: folded allocator wrappers); NULL: their
     * own. Each entry is the node itself or one of its ancestors. The
     * filters (keep, series_group) still look at the node itself. */
    const uint32_t *remap;
};
#define ANALYSIS_QUERY_INIT                                                                                            \
    {                                                                                                                  \
        0, 0, 0, 0, 0, 0, NULL, 0, 0, 0, NULL, 0, NULL                                                                 \
    }

struct analysis {
    struct accounting *acct; /* per-trace costs and totals of the blocks kept; trace ids = model nodes */
    uint64_t earlier_freed_blocks; /* allocated before the window, freed in it: not counted */
    uint64_t earlier_freed_bytes;
    uint64_t end_ms; /* time where the figures stop: at_ms, or the run's end */
    struct timeseries *series; /* NULL unless asked */
    struct sizes *sizes; /* NULL unless asked */
    struct growth *growth; /* NULL unless asked; finished */
    /* The main heap's layout: the latest LAYOUT record read (with --at,
     * the latest at or before that moment); known = 0 when none. */
    struct heaplayout layout, arenas;
    uint64_t bad_events; /* events that could not be applied (corrupt input) */
    int stop_rc; /* 0, or the memfmt status where the data stopped early */
    uint64_t stop_offset;
};

/** Read the recording at `path` again (the file `m` was loaded from; `m`
 * must outlive the call only) and account the blocks `q` keeps. Returns
 * 0 with *out set (stop_rc tells if the data ended early), a negative
 * memfmt status when the file cannot be opened (*err_errno = errno for
 * MEMFMT_E_IO), or MEMFMT_E_INVALID for a bad query (series_points above
 * TIMESERIES_MAX_POINTS, an empty window: from_ms >= to_ms, or groups
 * without a series or more than TIMESERIES_MAX_GROUPS). Memory: the model's
 * node count, 12 bytes per (size, stack) pair id of the file when a
 * window or a thread is set, the distinct sizes with `sizes` (and the (stack, size) pairs
 * with sizes = 2), the points; time: one pass
 * over the file in event batches (events one by one when a thread is
 * chosen: the batches do not carry threads). Free with analysis_free(). */
int analysis_run(const char *path, const struct model *m, const struct analysis_query *q, struct analysis **out,
                 int *err_errno);
/** Release; accepts NULL. */
void analysis_free(struct analysis *a);

/*
 * Streaming: the same pass fed by model_load()'s own reading, so that a
 * query costs no second read of the file:
 *
 *     struct model_hook hook;
 *     struct analysis_stream *s = analysis_stream_new(&q, &hook);   // NULL: not streamable
 *     rc = model_load_hooked(path, &hook, &m, &err);
 *     struct analysis *a = analysis_stream_finish(s, m);           // also after a failed load? no: only with m
 *
 * Only queries that need nothing from the whole model before reading can
 * stream: no keep mask (the function filter symbolizes the model's
 * traces), no series groups (their points are filled as the clock passes
 * them, so the run's length must be known first; a series without groups
 * is made from its log at the end: timeseries.h), no thread (model_load
 * reads events in batches, which carry no thread). With nothing
 * restricted (only `sizes`, `growth` or a series), the events are not
 * accounted again: a->acct then holds no allocation figures, and the
 * model's are the query's (the series' peaks are the model's).
 */
struct analysis_stream;
/** 1 when `q` can be computed while the model loads. */
int analysis_streamable(const struct analysis_query *q);
/** A streaming pass for `q` (copied), with `hook` set for
 * model_load_hooked(); NULL when `q` is not streamable. */
struct analysis_stream *analysis_stream_new(const struct analysis_query *q, struct model_hook *hook);
/** After model_load_hooked() returned 0 with `m`: the figures (free with
 * analysis_free()); `s` is freed. stop_rc and stop_offset are the model's.
 * A series asked for is NULL when its log passed TS_LOG_MAX_BYTES (a file
 * of millions of clock ticks): run the query with analysis_run() then. */
struct analysis *analysis_stream_finish(struct analysis_stream *s, const struct model *m);
/** Drop a stream without its figures (model_load_hooked() failed);
 * accepts NULL. */
void analysis_stream_free(struct analysis_stream *s);

/** A keep mask for analysis_query.keep: a trace's stack is kept when one
 * of its frames (from main() inwards) has a name (frames_name_dup()) matching
 * the POSIX extended regular expression `keep` (NULL: every stack) and
 * none matches `exclude` (NULL: none excluded). Set for the traces of the
 * whole run (nodes with an allocation or a mapping in frames_model(fr)->acct,
 * which every query's traces are among); 0 for other nodes. Returns 0 with
 * *mask (malloc'd, frames_model(fr)->nnodes bytes, the caller frees it), or
 * MEMFMT_E_INVALID for a bad expression with its message in errbuf.
 * O(nodes × inlined frames) regex matches; symbolizes the nodes from
 * main() to each trace (cached in `fr`). */
int analysis_keep_functions(struct frames *fr, const char *keep, const char *exclude, uint8_t **mask, char *errbuf,
                            size_t errcap);

/* What analysis_keep_frames() matches in each frame. */
enum analysis_field {
    ANALYSIS_FIELD_FUNCTION, /* the name, as analysis_keep_functions() */
    ANALYSIS_FIELD_FILE, /* the source file's path (a frame without one never matches) */
    ANALYSIS_FIELD_MODULE, /* the module's path (the program or a shared library) */
};
/** analysis_keep_functions() matching `field` of each frame instead of
 * its name (memtui's file and module filters). */
int analysis_keep_frames(struct frames *fr, enum analysis_field field, const char *keep, const char *exclude,
                         uint8_t **mask, char *errbuf, size_t errcap);

#endif
