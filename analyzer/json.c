// SPDX-License-Identifier: MIT
/* memprint --json: the summary and the top entries of each section as one
 * JSON object, integers exact, strings escaped per RFC 8259 and always
 * valid UTF-8 (util/escape.h says how invalid bytes are written). */
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "figures.h"
#include "pinned.h"
#include "report.h"
#include "rssgap.h"
#include "util.h"

/* Strings from the recording: valid UTF-8 whatever bytes they hold. */
static void str(FILE *f, const char *s)
{
    esc_json_fputs(s, f);
}

static void field_u(FILE *f, const char *name, uint64_t v, int comma)
{
    fprintf(f, "%s\"%s\": %llu", comma ? ", " : "", name, (unsigned long long)v);
}

static const char *const section_keys[REPORT_NSECTIONS] = {
    "most_calls",     "peak_consumers", "most_temporary", "most_leaked",
    "most_allocated", "peak_mapped",    "most_time",      "most_growth",
};

static const char *end_how(const struct model *m)
{
    if (!m->has_end) {
        return "incomplete";
    }
    switch (m->end.how) {
    case MEMFMT_END_EXITED: return "exited";
    case MEMFMT_END_SIGNALED: return "signaled";
    case MEMFMT_END_DETACHED: return "detached";
    case MEMFMT_END_EXEC_UNRECORDED: return "exec_unrecorded";
    default: return "unknown";
    }
}

/* Allocator time (memrec --time): whether the file is timed; the times
 * themselves are figures (figures.c: allocator_time_ns, cpu_user_ns,
 * cpu_sys_ns, null when the file does not hold them). */
static void time_fields(const struct model *m, FILE *f)
{
    fprintf(f, ", \"timed\": %s", (m->header.flags & MEMFMT_HF_TIMED) ? "true" : "false");
}

/* A stack's growth (growth.h), estimates when sampled. */
static void growth_fields(const struct report_stack *st, FILE *f)
{
    fprintf(f,
            ", \"growth_bytes_per_s\": %.1f, \"growth_r2\": %.4f, \"growth_rising_share\": %.4f, "
            "\"growth_steady\": %s, \"live_at_start_bytes\": %.0f, \"live_at_end_bytes\": %.0f, "
            "\"growth_samples\": %llu",
            st->growth.rate, st->growth.r2, st->growth.growing, st->grows ? "true" : "false", st->growth.start,
            st->growth.end, (unsigned long long)st->growth_samples);
}

/* The whole heap's fit and where it was made. */
static void growth_summary(const struct report *r, FILE *f)
{
    const struct growth *g = r->model->growth;
    if (!g) {
        fputs(", \"growth\": null", f);
        return;
    }
    struct growth_fit fit;
    growth_fit_series(g, growth_total(g), &fit);
    fprintf(f,
            ", \"growth\": {\"from_ms\": %llu, \"spacing_ms\": %llu, \"points\": %u, \"r2\": %.4f, "
            "\"bytes_per_s\": %.1f, \"undersampled_stacks\": %u}",
            (unsigned long long)growth_from_ms(g), (unsigned long long)growth_spacing_ms(g), growth_npoints(g), fit.r2,
            fit.rate, r->growth_undersampled);
}

/* The heap layout's members of rss_gap (heaplayout.h). */
struct layout_ctx {
    const struct report *r;
    const struct report_options *o;
};

static void layout_members(void *ctx, FILE *f)
{
    const struct layout_ctx *lc = ctx;
    const struct model *m = lc->r->model;
    const struct heaplayout *l;
    enum heaplayout_why why;
    if (rssgap_layout(&m->rssgap, m->sample_rate != 0, &l, &why)) {
        /* The report's index of stacks is a cache it fills as asked. */
        pinned_print_json(l, rssgap_arenas(&m->rssgap), why, (m->header.flags & MEMFMT_HF_ATTACHED) != 0,
                          (struct report *)lc->r, lc->o, f);
    }
}

void report_print_json(const struct report *r, const struct report_options *o, FILE *f)
{
    const struct model *m = r->model;
    fputs("{", f);
    /* The strings and truth values, then every number from figures.h (the
     * same values memprint --check tests). */
    fputs("\"program\": ", f);
    str(f, m->cmdline);
    fprintf(f, ", \"end\": \"%s\"", end_how(m));
    fprintf(f, ", \"attached\": %s", m->header.flags & MEMFMT_HF_ATTACHED ? "true" : "false");
    fprintf(f, ", \"packed\": %s", m->pack ? "true" : "false");
    fprintf(f, ", \"complete\": %s", model_complete(m) ? "true" : "false");
    /* Sampling: allocations and allocated_bytes are exact, the other
     * figures are estimates, and temporaries are not measured (null). */
    fprintf(f, ", \"sampled\": %s", m->sample_rate ? "true" : "false");
    /* Events the recorder dropped (memrec --max-wait): when; their count
     * is the figure lost_events. The heap figures then miss them. */
    fputs(", \"lost_spans\": [", f);
    for (uint32_t i = 0; i < m->nlost_spans; i++) {
        fprintf(f, "%s{\"from_ms\": %llu, \"to_ms\": %llu, \"events\": %llu}", i ? ", " : "",
                (unsigned long long)m->lost_spans[i].from_ms, (unsigned long long)m->lost_spans[i].to_ms,
                (unsigned long long)m->lost_spans[i].events);
    }
    fputs("]", f);
    time_fields(m, f);
    struct figure fig[FIGURES_COUNT];
    figures_collect(m, m->acct, &o->suppressed, fig);
    for (size_t i = 0; i < FIGURES_COUNT; i++) {
        if (fig[i].measured) {
            fprintf(f, ", \"%s\": %lld", fig[i].name, (long long)fig[i].value);
        } else {
            fprintf(f, ", \"%s\": null", fig[i].name);
        }
    }
    if (o->json_extra) {
        fputs(o->json_extra, f);
    }
    growth_summary(r, f);
    struct layout_ctx lc = {r, o};
    rssgap_print_json(&m->rssgap, m->sample_rate != 0, layout_members, &lc, f);
    int reach = report_has_reach(m);
    if (r->leaked_unreachable) {
        fputs(", \"leaked_ranking\": \"unreachable\"", f);
    }
    fputs(", \"sections\": {", f);
    int first = 1;
    for (int s = 0; s < REPORT_NSECTIONS; s++) {
        if (!report_section_shown(r, o, (enum report_section)s)) {
            continue;
        }
        fprintf(f, "%s\"%s\": [", first ? "" : ", ", section_keys[s]);
        first = 0;
        uint32_t n = r->nranked[s] < (uint32_t)o->top ? r->nranked[s] : (uint32_t)o->top;
        for (uint32_t i = 0; i < n; i++) {
            const struct report_stack *st = &r->stacks[r->ranked[s][i]];
            fputs(i ? ", {" : "{", f);
            field_u(f, "calls", st->calls, 0);
            field_u(f, "temporary", st->temporary, 1);
            field_u(f, "allocated_bytes", st->allocated, 1);
            field_u(f, "leaked_bytes", st->leaked, 1);
            field_u(f, "leaked_allocations", st->leaked_blocks, 1);
            if (reach) {
                field_u(f, "unreachable_bytes", st->unreachable, 1);
                field_u(f, "unreachable_allocations", st->unreachable_blocks, 1);
                field_u(f, "indirectly_unreachable_bytes", st->indirect, 1);
                field_u(f, "possibly_reachable_bytes", st->possible, 1);
            }
            field_u(f, "peak_bytes", st->peak, 1);
            field_u(f, "mapped_peak_bytes", st->mapped_peak, 1);
            field_u(f, "mapped_at_end_bytes", st->mapped_end, 1);
            field_u(f, "mapping_calls", st->mapping_calls, 1);
            if (m->header.flags & MEMFMT_HF_TIMED) {
                field_u(f, "time_ns", st->time_ns, 1);
            }
            if (m->growth) {
                growth_fields(st, f);
            }
            report_print_json_frames(r, st, f);
            fputs("}", f);
        }
        fputs("]", f);
    }
    fputs("}}\n", f);
}
