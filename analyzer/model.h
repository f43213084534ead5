// SPDX-License-Identifier: MIT
/* A recording loaded into memory for reporting: the process, its modules,
 * the trace tree with each node's module, and the accounting of every
 * trace. Loading streams the file; memory grows with live blocks, modules
 * and distinct stacks, not with the number of events. */
#ifndef MODEL_H
#define MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "accounting.h"
#include "memfmt.h"
#include "packframes.h"
#include "rssgap.h"

struct model_module {
    uint32_t id;
    char *path;
    uint64_t bias;
    uint8_t build_id[64];
    uint32_t build_id_len;
    uint32_t nsegments;
    struct memfmt_segment *segments; /* nsegments of them (at most MEMFMT_MAX_SEGMENTS) */
    int loaded; /* not unloaded yet at the current read position */
    int sym_index; /* symbolizer's index; -1 until tried, -2 when it cannot be symbolized */
};

/* Limits on what a file may define (docs/format.md, "Limits of the
 * readers"): records beyond them are refused and counted in bad_records.
 * Both lie far above what a real process makes. */
#define MODEL_MAX_MODULES (1u << 20)
#define MODEL_MAX_NODES (1u << 27)
/* Nodes on the path from a node to the root: the recorder keeps at most
 * 1024 frames and a gap marker (memrec --max-depth), so a longer chain is
 * no recording's; a NODE deeper than this is counted as refused and starts
 * a stack of its own (its parent taken as the root), so that every stack,
 * and each step that walks one, stays within this depth. */
#define MODEL_MAX_DEPTH 2048

struct model_node {
    uint64_t ip;
    uint32_t parent;
    int32_t module; /* index into modules, -1 = unknown */
};

struct model {
    struct memfmt_header header;
    uint32_t pid;
    char *exe;
    char *cmdline; /* arguments as a shell command line: joined by spaces, quoted where needed */
    uint64_t start_unix_ns;
    struct model_module *modules;
    uint32_t nmodules;
    struct model_node *nodes; /* [0] is the root */
    uint32_t nnodes;
    uint32_t nthreads;
    struct accounting *acct;
    int has_end;
    struct {
        uint32_t how;
        int32_t value;
        uint64_t runtime_ms;
        uint64_t cpu_user_ns, cpu_sys_ns; /* process CPU time of the recording; 0 when unknown */
    } end;
    uint64_t lost_events;
    /* When the recorder dropped events (memrec --max-wait; LOST records):
     * spans in ms since the start, in file order, spans less than a second
     * apart joined; at most 16, the last one taking in any
     * later. */
    struct model_lost_span {
        uint64_t from_ms, to_ms, events;
    } lost_spans[16];
    uint32_t nlost_spans;
    uint64_t unmatched_frees;
    uint64_t startup_calls, startup_bytes; /* set apart as preloaded libraries' start-up */
    int has_baseline; /* attached: the allocator's count at attach */
    uint64_t baseline_in_use, baseline_arena;
    uint64_t sample_rate; /* 0: complete recording; else sampled, figures estimated */
    int has_counts; /* sampling: exact calls and bytes of every thread */
    uint64_t exact_calls, exact_bytes;
    struct model_counts {
        uint64_t calls, bytes;
    } * counts; /* latest COUNTS per thread index */
    size_t counts_cap;
    uint64_t retired_calls, retired_bytes;
    /* Where reading stopped early: 0, or a negative memfmt status with the
     * offset in the decompressed stream. */
    int stop_rc;
    uint64_t stop_offset;
    uint64_t bad_records; /* records that could not be applied */
    /* A packed file (header flag MEMFMT_HF_PACKED, memprint --pack): the
     * frames it carries, which symfiles.c reads instead of the modules'
     * files; NULL for any other file. */
    struct packed *pack;
    uint64_t impossible_sizes; /* allocations refused: larger than ACCT_MAX_SIZE */
    uint64_t beyond_total; /* allocations and mappings refused: a total would pass ACCT_MAX_TOTAL */
    struct rssgap rssgap; /* RSS versus heap: the moment of the widest gap (rssgap.h) */
    /* Growth over the window (growth.h): set by memprint on the view it
     * reports from, from the analysis that computed it; NULL: not computed.
     * Not owned. */
    const struct growth *growth;
};

/** Load the recording at `path`. Returns 0 with *out set (possibly with
 * stop_rc telling that the data ended early), or a negative memfmt status
 * when nothing could be read (then *err_errno holds errno for MEMFMT_E_IO). */
int model_load(const char *path, struct model **out, int *err_errno);
/* What model_load_hooked() hands on, after the model has applied it:
 * each batch of events and each other record, in file order, with the
 * model as it stands (its nodes so far). For a pass that must not read
 * the file a second time (analysis.h's streaming). */
struct model_hook {
    void *ctx;
    /* Nonzero: the hook's pass replaces the model's figures, so the events
     * are not accounted in m->acct (its totals then hold no allocation;
     * records such as TIME and MAP are still applied). */
    int replaces_events;
    void (*events)(void *ctx, const struct model *m, const struct memfmt_event *ev, size_t n);
    void (*record)(void *ctx, const struct model *m, const struct memfmt_record *rec);
};
/** model_load(), calling `hook` (NULL: none) for what it reads. */
int model_load_hooked(const char *path, const struct model_hook *hook, struct model **out, int *err_errno);
/** Release; accepts NULL. */
void model_free(struct model *m);
/** 1 when the figures hold the whole recording: it has its END record,
 * the data did not stop early and no record was refused. */
int model_complete(const struct model *m);
/** Runtime in milliseconds: the END record's, else the last TIME. */
uint64_t model_runtime_ms(const struct model *m);
/** The recorded program as memprint names it: its command line, else its
 * executable, else "?". Never NULL; points into `m`. */
const char *model_program(const struct model *m);

#endif
