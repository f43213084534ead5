// SPDX-License-Identifier: MIT
/* memprint's report mode (modes.h: the summary and ranked report, and its
 * other forms of one recording), and the pieces every mode shares (writing
 * an output file, flame graphs, suppressions, allocator time). --diff is
 * in compare.c, the CI gate in gate.c. What fails here ends the run with
 * memprint's message and exit code. */
#define _GNU_SOURCE
#include "modes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloctime.h"
#include "calltree.h"
#include "charts.h"
#include "diff.h"
#include "folded.h"
#include "groups.h"
#include "massif.h"
#include "outfile.h"
#include "pinned.h"
#include "pprof.h"
#include "report.h"
#include "sources.h"
#include "suppress.h"
#include "svg.h"
#include "threadcosts.h"
#include "util.h"

/* ---- writing files ---- */

void modes_write_out(const char *out, const char *what, outfile_fn fn, void *ctx)
{
    char err[8192];
    if (outfile_write(out, what, fn, ctx, err, sizeof err) < 0) {
        die("%s", err);
    }
}

struct folded_ctx {
    const struct calltree *t;
    const struct difftree *d;
    enum cost_type cost;
};

static int folded_cb(void *ctx, FILE *f)
{
    struct folded_ctx *c = ctx;
    return c->d ? diff_write_folded(c->d, c->cost, f) : folded_write(c->t, c->cost, f);
}

void modes_write_folded(const char *out, const struct calltree *t, const struct difftree *d, enum cost_type cost)
{
    struct folded_ctx c = {t, d, cost};
    modes_write_out(out, "folded stacks", folded_cb, &c);
}

static int svg_cb(void *ctx, FILE *f)
{
    return svg_write(ctx, f);
}

void modes_write_svg(const char *out, struct svg *g)
{
    modes_write_out(out, "flame graph", svg_cb, g);
}

struct svg *modes_svg_new(const struct opts *o, const struct source *s, const struct source *base, char *title,
                          size_t title_cap)
{
    const char *unit = cost_unit(o->cost);
    size_t n = util_addf(title, title_cap, 0, "%s%s: %s (%s)", base ? "change from base to new, " : "",
                         model_program(s->m), cost_name(o->cost), unit);
    if (s->m->sample_rate || (base && base->m->sample_rate)) {
        n = util_addf(title, title_cap, n, "; sampled: ~estimates");
    }
    if (s->note[0]) {
        util_addf(title, title_cap, n, "; %s", s->note);
    }
    struct svg_options so = {title, base ? "width: new cost; red: grew, blue: shrank" : NULL, unit, o->flame,
                             base != NULL};
    return svg_new(&so);
}

/* ---- leak suppressions ---- */

static void warn_cb(void *ctx, const char *msg)
{
    (void)ctx;
    warning("%s", msg);
}

void modes_load_suppressions(const struct gate_opts *g, const struct model *m, struct suppressions *sup, int checking)
{
    char err[512];
    unsigned flags = (g->no_program ? SUPPRESS_NO_PROGRAM : 0) | (g->no_builtin ? SUPPRESS_NO_BUILTIN : 0) |
                     (checking ? SUPPRESS_SAY_NOEXE : 0);
    if (suppress_load_all(sup, g->supp_files, g->nsupp, m, flags, warn_cb, NULL, err, sizeof err) < 0) {
        die_code(2, "%s", err);
    }
}

/* suppress_json_extra(), ending the run when memory runs out. */
static char *suppressions_json(const char *extra, const struct suppressions *sup)
{
    char *out = suppress_json_extra(extra, sup);
    if (!out) {
        die("out of memory");
    }
    return out;
}

/* ---- allocator time (memrec --time) ---- */

struct alloctime *modes_alloc_time(const struct source *s)
{
    if (!cost_recorded(&s->m->header, COST_TIME)) {
        die("allocator time not recorded in '%s' (record with memrec --time)", s->path);
    }
    struct alloctime *t;
    int err;
    int rc = alloctime_run(s->read_path, s->m, &t, &err);
    if (rc < 0) {
        die("cannot read '%s' again: %s", s->path, rc == MEMFMT_E_IO ? strerror(err) : memfmt_strerror(rc));
    }
    return t;
}

/* ---- pprof and massif ---- */

struct pprof_ctx {
    struct frames *fr;
    const struct accounting *acct;
    enum pprof_at at;
};

static int pprof_cb(void *ctx, FILE *f)
{
    struct pprof_ctx *c = ctx;
    return pprof_write(c->fr, c->acct, c->at, f);
}

static int massif_cb(void *ctx, FILE *f)
{
    return massif_write(ctx, f);
}

/* --pprof (of what the query counts) and --massif (the whole run). */
static void write_exports(const struct opts *o, struct source *s)
{
    if (o->pprof) {
        struct pprof_ctx c = {source_frames(s), s->acct, o->pprof_at};
        modes_write_out(o->pprof, "pprof profile", pprof_cb, &c);
    }
    if (o->massif) {
        struct massif *ms;
        int err;
        int rc = massif_new(s->read_path, source_frames(s), &ms, &err);
        if (rc < 0) {
            die("cannot read '%s' again: %s", s->path, rc == MEMFMT_E_IO ? strerror(err) : memfmt_strerror(rc));
        }
        modes_write_out(o->massif, "massif file", massif_cb, ms);
        massif_free(ms);
    }
}

/* ---- the report and its other forms ---- */

int mode_report(const struct opts *o, const char *path)
{
    struct source s = {.path = path};
    source_open(&s, o);
    if (o->alloc_time) {
        struct alloctime *t = modes_alloc_time(&s);
        alloctime_print_report(t, s.m, o->json, stdout);
        alloctime_free(t);
        int whole = model_complete(s.m);
        source_release(&s);
        return whole;
    }
    if ((o->folded || o->svg) && !cost_recorded(&s.m->header, o->cost)) {
        die("--cost time: allocator time not recorded in '%s' (record with memrec --time)", path);
    }
    if (o->pprof || o->massif) {
        write_exports(o, &s);
    }
    if (o->folded || o->svg) {
        struct calltree *t = calltree_build_growth(source_frames(&s), s.acct, s.view.growth);
        calltree_sort(t, o->cost, 0);
        if (o->folded) {
            modes_write_folded(o->folded, t, NULL, o->cost);
        }
        if (o->svg) {
            char title[1024];
            struct svg *g = modes_svg_new(o, &s, NULL, title, sizeof title);
            svg_add_tree(g, t, o->reverse ? CALLTREE_BOTTOM_UP : CALLTREE_TOP_DOWN, o->cost, "all");
            modes_write_svg(o->svg, g);
            svg_free(g);
        }
        calltree_free(t);
    } else if (o->sizes || o->timeline) {
        struct charts_report c = {
            .m = s.m,
            .note = s.note,
            .json_members = s.json,
            .sizes = o->sizes ? s.a->sizes : NULL,
            .acct = s.acct,
            .by_stack = o->by_stack ? source_frames(&s) : NULL,
            .series = o->timeline ? s.a->series : NULL,
            .top = (uint32_t)o->ro.top,
        };
        charts_print_report(&c, o->json, stdout);
    } else if (!o->pprof && !o->massif) {
        struct report *r = report_new(&s.view);
        if (!r) {
            die("cannot start the symbolizer (libdw)");
        }
        struct report_options ro = o->ro;
        ro.note = s.note[0] ? s.note : NULL;
        ro.json_extra = s.json[0] ? s.json : NULL;
        struct suppressions sup = SUPPRESSIONS_INIT;
        modes_load_suppressions(&o->gate, s.m, &sup, 0);
        if (ro.unreachable) {
            report_rank_unreachable(r);
        }
        suppress_apply(&sup, r);
        ro.suppressed = sup.total;
        char note[1024];
        suppress_note(note, sizeof note, ro.note, &sup, s.acct);
        ro.note = note[0] ? note : NULL;
        struct threads *th = NULL;
        char *th_json = NULL;
        if (o->threads) {
            int err;
            int rc = threads_run(path, s.m, &th, &err);
            if (rc < 0) {
                die("cannot read '%s' again: %s", path, rc == MEMFMT_E_IO ? strerror(err) : memfmt_strerror(rc));
            }
            if (o->json) {
                size_t len = 0;
                FILE *f = open_memstream(&th_json, &len);
                if (!f) {
                    die("out of memory");
                }
                fputs(", \"threads_section\": ", f);
                threads_print_json(th, cost_recorded(&s.m->header, COST_TIME), f);
                fclose(f);
                ro.json_extra = th_json; /* no restriction with --threads: s.json is empty */
            }
        }
        char *supp_json = NULL;
        if (o->json) {
            supp_json = suppressions_json(ro.json_extra, &sup);
            ro.json_extra = supp_json;
            report_print_json(r, &ro, stdout);
        } else if (o->group) {
            /* By function (2) needs the frames of every node; by site, the report's. */
            groups_print_report(r, o->group == 2 ? source_frames(&s) : NULL, s.acct, &ro, stdout);
        } else {
            report_print_text(r, &ro, stdout);
            pinned_print_report_text(r, &ro, stdout);
        }
        if (!o->json && report_section_shown(r, &o->ro, REPORT_LEAKED)) {
            suppress_print_text(&sup, r, &ro, stdout);
        }
        free(supp_json);
        suppress_release(&sup);
        if (th && !o->json) {
            threads_print_text(th, cost_recorded(&s.m->header, COST_TIME), stdout);
        }
        threads_free(th);
        free(th_json);
        report_free(r);
    }
    int whole = model_complete(s.m);
    source_release(&s);
    return whole;
}
