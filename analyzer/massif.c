// SPDX-License-Identifier: MIT
/* massif export (massif.h). */
#include "massif.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "calltree.h"
#include "escape.h"
#include "util.h"

enum snap_kind { SNAP_EMPTY, SNAP_DETAILED, SNAP_PEAK };

struct snap {
    uint64_t ms;
    uint64_t heap;
    enum snap_kind kind;
    char *tree; /* detailed and peak: the tree's lines, written when the snapshot is made */
};

struct massif {
    const struct model *m;
    struct snap *snaps;
    uint32_t nsnaps;
};

static void put_tree(struct calltree *t, enum cost_type c, uint64_t total, FILE *f);

/* The tree of cost `c` of `t` as massif's lines, and its total. Made
 * when the snapshot is, so that each pass's accounting and tree are
 * freed before the next: memory is one pass's, plus the text written. */
static char *render(struct calltree *t, enum cost_type c, uint64_t *total)
{
    *total = calltree_node(t, CALLTREE_BOTTOM_UP, 0)->incl.v[c];
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        die("out of memory");
    }
    put_tree(t, c, *total, f);
    if (fclose(f) != 0) {
        die("out of memory");
    }
    return text;
}

void massif_free(struct massif *ms)
{
    if (!ms) {
        return;
    }
    for (uint32_t i = 0; i < ms->nsnaps; i++) {
        free(ms->snaps[i].tree);
    }
    free(ms->snaps);
    free(ms);
}

int massif_new(const char *path, struct frames *fr, struct massif **out, int *err_errno)
{
    *out = NULL;
    const struct model *m = frames_model(fr);
    const struct acct_totals *tot = accounting_totals(m->acct);
    uint64_t end_ms = model_runtime_ms(m);
    /* end_ms + 1 would wrap for a file whose clock ends at 2^64 - 1. */
    uint32_t npoints = end_ms < MASSIF_SNAPSHOTS - 1 ? (uint32_t)end_ms + 1 : MASSIF_SNAPSHOTS;
    struct analysis_query q = ANALYSIS_QUERY_INIT;
    q.series_points = npoints;
    struct analysis *series;
    int rc = analysis_run(path, m, &q, &series, err_errno);
    if (rc < 0) {
        return rc;
    }
    struct massif *ms = xcalloc(1, sizeof *ms);
    ms->m = m;
    const struct timeseries *ts = series->series;
    ms->snaps = xcalloc((size_t)ts->npoints + 1, sizeof *ms->snaps);
    /* The model's tree: the peak's and the end's. */
    struct calltree *whole = calltree_build(fr, m->acct);
    uint64_t peak_total;
    char *peak_tree = render(whole, COST_PEAK, &peak_total);
    struct snap peak = {tot->peak_ms, peak_total, SNAP_PEAK, peak_tree};
    int peak_done = 0;
    for (uint32_t i = 0; i < ts->npoints; i++) {
        const struct ts_point *pt = &ts->points[i];
        /* The peak happened among the events stamped peak_ms: before the
         * state after all of them, which is what a point at that time is. */
        if (!peak_done && pt->ms >= tot->peak_ms) {
            ms->snaps[ms->nsnaps++] = peak;
            peak_done = 1;
        }
        struct snap *s = &ms->snaps[ms->nsnaps++];
        *s = (struct snap){pt->ms, pt->at.heap, SNAP_EMPTY, NULL};
        /* A detailed snapshot's heap is its tree's total, so that no entry
         * can exceed it (ms_print refuses that); for a complete recording
         * it is the series' value. */
        if (i + 1 == ts->npoints) {
            s->kind = SNAP_DETAILED; /* the end: what is live is what leaked */
            s->tree = render(whole, COST_LEAKED, &s->heap);
        } else if ((i + 1) % MASSIF_DETAILED_EVERY == 0) {
            /* The run up to this point: reading stops at the first tick
             * after it, so that the events stamped at its time are in. */
            struct analysis_query at = ANALYSIS_QUERY_INIT;
            at.has_at = 1;
            at.at_ms = pt->ms + 1;
            struct analysis *a;
            rc = analysis_run(path, m, &at, &a, err_errno);
            if (rc < 0) {
                if (!peak_done) {
                    free(peak.tree);
                }
                calltree_free(whole);
                analysis_free(series);
                massif_free(ms);
                return rc;
            }
            struct calltree *t = calltree_build(fr, a->acct);
            s->kind = SNAP_DETAILED;
            s->tree = render(t, COST_LEAKED, &s->heap);
            calltree_free(t);
            analysis_free(a);
        }
    }
    if (!peak_done) {
        ms->snaps[ms->nsnaps++] = peak;
    }
    calltree_free(whole);
    analysis_free(series);
    *out = ms;
    return 0;
}

/* ---- writing ---- */

/* One line of the tree after "nN: BYTES ": where the frame is. */
static void put_frame(const struct sym_frame *fr, FILE *f)
{
    fprintf(f, "0x%" PRIX64 ": ", fr->module_offset);
    if (fr->function) {
        char *name = frames_name_dup(fr);
        fputs(name, f);
        free(name);
        if (fr->file) {
            fputs(" (", f);
            esc_text_fputs(fr->file, f);
            fprintf(f, ":%u)", fr->line);
            return;
        }
    } else {
        fputs("???", f);
    }
    if (fr->module) {
        fputs(" (in ", f);
        esc_text_fputs(fr->module, f);
        fputc(')', f);
    }
}

/* An entry of the walk: a node, or the "in N places" line of a node's
 * children below the threshold. */
struct entry {
    uint32_t id;
    uint32_t depth;
    uint64_t below_bytes; /* for the "places" line */
    uint32_t below_count; /* 0: a node */
};

static int significant(uint64_t bytes, uint64_t total)
{
    return total != 0 && (double)bytes * 100.0 / (double)total >= MASSIF_THRESHOLD;
}

/* The tree in massif's form: the root is the allocation functions, its
 * children the allocation sites, theirs the callers (the bottom-up tree).
 * Depth-first with an explicit stack: a bottom-up path has up to
 * CALLTREE_MAX_DEPTH frames. Only entries above the threshold are
 * expanded, so the walk costs what it prints. */
static void put_tree(struct calltree *t, enum cost_type c, uint64_t total, FILE *f)
{
    calltree_sort(t, c, 0);
    size_t cap = 256, sp = 0;
    struct entry *stack = xmalloc(cap * sizeof *stack);
    stack[sp++] = (struct entry){0, 0, 0, 0};
    while (sp > 0) {
        struct entry e = stack[--sp];
        if (e.below_count) {
            fprintf(f, "%*sn0: %" PRIu64 " in %u place%s, %sbelow massif's threshold (%.2f%%)\n", (int)e.depth, "",
                    e.below_bytes, e.below_count, e.below_count == 1 ? "" : "s", e.below_count == 1 ? "" : "all ",
                    MASSIF_THRESHOLD);
            continue;
        }
        const struct calltree_node *nd = calltree_node(t, CALLTREE_BOTTOM_UP, e.id);
        uint32_t n;
        const uint32_t *kids = calltree_children(t, CALLTREE_BOTTOM_UP, e.id, &n);
        uint32_t shown = 0, below = 0;
        uint64_t below_bytes = 0;
        if (e.depth >= MASSIF_MAX_DEPTH) {
            n = 0; /* cut here, as massif's --depth does */
        }
        for (uint32_t i = 0; i < n; i++) {
            uint64_t v = calltree_node(t, CALLTREE_BOTTOM_UP, kids[i])->incl.v[c];
            if (significant(v, total)) {
                shown++;
            } else if (v > 0) {
                below++;
                below_bytes += v;
            }
        }
        fprintf(f, "%*sn%u: %" PRIu64 " ", (int)e.depth, "", shown + (below > 0), nd->incl.v[c]);
        if (e.id == 0) {
            fputs("(heap allocation functions) malloc/new/new[], --alloc-fns, etc.", f);
        } else {
            put_frame(nd->frame, f);
        }
        fputc('\n', f);
        /* Pushed in reverse: the largest child comes out first, the
         * "places" line last. */
        if (sp + shown + 2 > cap) {
            while (sp + shown + 2 > cap) {
                cap *= 2;
            }
            stack = xrealloc(stack, cap * sizeof *stack);
        }
        if (below) {
            stack[sp++] = (struct entry){0, e.depth + 1, below_bytes, below};
        }
        for (uint32_t i = n; i-- > 0;) {
            uint64_t v = calltree_node(t, CALLTREE_BOTTOM_UP, kids[i])->incl.v[c];
            if (significant(v, total)) {
                stack[sp++] = (struct entry){kids[i], e.depth + 1, 0, 0};
            }
        }
    }
    free(stack);
}

int massif_write(const struct massif *ms, FILE *f)
{
    const struct model *m = ms->m;
    const char *prog = m->cmdline && *m->cmdline ? m->cmdline : (m->exe ? m->exe : "?");
    fputs("desc: memprint --massif (heap: requested bytes; no extra-heap or stack figures)\ncmd: ", f);
    esc_text_fputs(prog, f);
    fputs("\ntime_unit: ms\n", f);
    for (uint32_t i = 0; i < ms->nsnaps; i++) {
        const struct snap *s = &ms->snaps[i];
        static const char *const kinds[] = {"empty", "detailed", "peak"};
        fprintf(f,
                "#-----------\nsnapshot=%u\n#-----------\ntime=%" PRIu64 "\nmem_heap_B=%" PRIu64
                "\nmem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=%s\n",
                i, s->ms, s->heap, kinds[s->kind]);
        if (s->tree) {
            fputs(s->tree, f);
        }
    }
    return ferror(f) ? -1 : 0;
}
