// SPDX-License-Identifier: MIT
/* The summary figures by name (figures.h): one table of names, one
 * function that fills in the values, in the same order. */
#include "figures.h"

#include <math.h>
#include <string.h>

#include "growth.h"
#include "report.h"

/* The order of the JSON summary; append new figures at the end of a group
 * and keep this table and figures_collect() in step (the count is checked
 * at compile time below). */
static const char *const names[] = {
    "format_version",
    "pid",
    "exit_value",
    "baseline_in_use_bytes",
    "baseline_arena_bytes",
    "runtime_ms",
    "sample_rate",
    "allocations",
    "temporary",
    "frees",
    "peak_heap_bytes",
    "peak_heap_ms",
    "peak_rss_bytes",
    "leaked_bytes",
    "leaked_allocations",
    "suppressed_leaked_bytes",
    "suppressed_leaked_allocations",
    "allocated_bytes",
    "threads",
    "unmatched_frees",
    "lost_events",
    "startup_set_apart_calls",
    "startup_set_apart_bytes",
    "mapped_peak_bytes",
    "mapped_peak_ms",
    "mapped_at_end_bytes",
    "mapping_calls",
    "bad_records",
    "allocator_time_ns",
    "cpu_user_ns",
    "cpu_sys_ns",
    "growth_bytes_per_s",
    "unreachable_bytes",
    "unreachable_allocations",
    "indirectly_unreachable_bytes",
    "indirectly_unreachable_allocations",
    "reachable_bytes",
    "reachable_allocations",
    "possibly_reachable_bytes",
    "possibly_reachable_allocations",
    "reachability_scan_ns",
};

_Static_assert(sizeof names / sizeof names[0] == FIGURES_COUNT, "figures: names[] and FIGURES_COUNT differ");

const char *figures_name(size_t i)
{
    return i < FIGURES_COUNT ? names[i] : "";
}

int figures_find(const char *name)
{
    for (size_t i = 0; i < FIGURES_COUNT; i++) {
        if (strcmp(names[i], name) == 0) {
            return (int)i;
        }
    }
    return -1;
}

static int64_t s64(uint64_t v)
{
    return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* The whole heap's fitted growth in bytes per second, rounded; 0 when not
 * computed (then not measured). */
static int64_t growth_rate(const struct model *m)
{
    if (!m->growth || growth_npoints(m->growth) < 3) {
        return 0;
    }
    struct growth_fit f;
    growth_fit_series(m->growth, growth_total(m->growth), &f);
    return (int64_t)llround(f.rate);
}

void figures_collect(const struct model *m, const struct accounting *a, const struct figures_suppressed *supp,
                     struct figure out[FIGURES_COUNT])
{
    const struct acct_totals *t = accounting_totals(a);
    /* The exact counts of a sampled recording are the whole run's: a
     * window's accounting keeps its own (report_print_summary's rule). */
    int exact = m->has_counts && a == m->acct;
    uint64_t sb = supp ? supp->bytes : 0, sn = supp ? supp->blocks : 0;
    sb = sb < t->live_bytes ? sb : t->live_bytes;
    sn = sn < t->live_blocks ? sn : t->live_blocks;
    /* Reachability: the whole run's, as memrec classified it, less the
     * suppressed stacks' share; reachable is the rest of what is leaked. */
    int reach = a == m->acct && report_has_reach(m);
    uint64_t ub = t->unreachable_bytes, un = t->unreachable_blocks;
    uint64_t sub = supp ? supp->unreachable_bytes : 0, sun = supp ? supp->unreachable_blocks : 0;
    sub = sub < ub ? sub : ub;
    sun = sun < un ? sun : un;
    ub -= sub;
    un -= sun;
    uint64_t rb = t->live_bytes - sb > ub ? t->live_bytes - sb - ub : 0;
    uint64_t rn = t->live_blocks - sn > un ? t->live_blocks - sn - un : 0;
    /* -1: no baseline (not attached, or an allocator without mallinfo2). */
    int64_t v[FIGURES_COUNT] = {
        m->header.version,
        m->pid,
        m->has_end ? m->end.value : 0,
        m->has_baseline ? s64(m->baseline_in_use) : -1,
        m->has_baseline ? s64(m->baseline_arena) : -1,
        s64(model_runtime_ms(m)),
        s64(m->sample_rate),
        s64(exact ? m->exact_calls : t->allocations),
        s64(t->temporary),
        s64(t->frees),
        s64(t->peak_bytes),
        s64(t->peak_ms),
        s64(t->peak_rss),
        s64(t->live_bytes - sb),
        s64(t->live_blocks - sn),
        s64(sb),
        s64(sn),
        s64(exact ? m->exact_bytes : t->allocated_bytes),
        m->nthreads,
        s64(m->unmatched_frees),
        s64(m->lost_events),
        s64(m->startup_calls),
        s64(m->startup_bytes),
        s64(t->mapped_peak),
        s64(t->mapped_peak_ms),
        s64(t->mapped_bytes),
        s64(t->mapping_calls),
        s64(m->bad_records),
        s64(t->time_ns),
        s64(m->end.cpu_user_ns),
        s64(m->end.cpu_sys_ns),
        growth_rate(m),
        s64(ub),
        s64(un),
        s64(t->indirect_bytes < ub ? t->indirect_bytes : ub),
        s64(t->indirect_blocks < un ? t->indirect_blocks : un),
        s64(rb),
        s64(rn),
        s64(t->possible_bytes < rb ? t->possible_bytes : rb),
        s64(t->possible_blocks < rn ? t->possible_blocks : rn),
        s64(t->reach_cost_ns),
    };
    for (size_t i = 0; i < FIGURES_COUNT; i++) {
        out[i].name = names[i];
        out[i].value = v[i];
        out[i].measured = 1;
    }
    /* Sampling does not measure temporaries (JSON null). */
    out[figures_find("temporary")].measured = m->sample_rate == 0;
    /* Allocator time only in a timed file (memrec --time); the CPU times
     * only when the recording says them (JSON null otherwise). */
    out[figures_find("allocator_time_ns")].measured = (m->header.flags & MEMFMT_HF_TIMED) != 0;
    int cpu = m->end.cpu_user_ns || m->end.cpu_sys_ns;
    out[figures_find("cpu_user_ns")].measured = cpu;
    out[figures_find("cpu_sys_ns")].measured = cpu;
    out[figures_find("growth_bytes_per_s")].measured = m->growth && growth_npoints(m->growth) >= 3;
    /* Only where memrec classified the leaked blocks (JSON null otherwise:
     * a sampled recording, no scan, a window or filter). */
    for (int i = figures_find("unreachable_bytes"); i <= figures_find("possibly_reachable_allocations"); i++) {
        out[i].measured = reach;
    }
    out[figures_find("reachability_scan_ns")].measured = a == m->acct && t->has_reach;
}
