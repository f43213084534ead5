// SPDX-License-Identifier: MIT
/* memprint's modes (modes.h): each loads its recordings (sources.h) and
 * hands them to the analyzer file that owns its output; what fails here
 * ends the run with memprint's message and exit code. */
#define _GNU_SOURCE
#include "modes.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloctime.h"
#include "calltree.h"
#include "charts.h"
#include "checks.h"
#include "diff.h"
#include "figures.h"
#include "folded.h"
#include "groups.h"
#include "massif.h"
#include "outfile.h"
#include "pprof.h"
#include "report.h"
#include "sources.h"
#include "suppress.h"
#include "svg.h"
#include "threadcosts.h"
#include "util.h"

/* ---- writing files ---- */

/* outfile_write(), ending the run on failure. */
static void write_out(const char *out, const char *what, outfile_fn fn, void *ctx)
{
    char err[8192];
    if (outfile_write(out, what, fn, ctx, err, sizeof err) < 0) {
        die("%s", err);
    }
}

static size_t add(char *buf, size_t cap, size_t at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static size_t add(char *buf, size_t cap, size_t at, const char *fmt, ...)
{
    if (at >= cap) {
        return at;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + at, cap - at, fmt, ap);
    va_end(ap);
    return n < 0 ? at : at + (size_t)n;
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

static int svg_cb(void *ctx, FILE *f)
{
    return svg_write(ctx, f);
}

static struct svg *make_svg(const struct opts *o, const struct source *s, const struct source *base, char *title,
                            size_t title_cap)
{
    const char *unit = cost_unit(o->cost);
    size_t n = add(title, title_cap, 0, "%s%s: %s (%s)", base ? "change from base to new, " : "", model_program(s->m),
                   cost_name(o->cost), unit);
    if (s->note[0]) {
        add(title, title_cap, n, "; %s", s->note);
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

/* The suppressions of the recording `m` (suppress_load_all()); a file
 * that cannot be read ends the run (exit 2). */
static void load_suppressions(const struct gate_opts *g, const struct model *m, struct suppressions *sup, int checking)
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

/* The tables of `s`; dies when the recording is not timed: zeros would
 * pass for data. */
static struct alloctime *alloc_time_of(const struct source *s)
{
    if (!cost_recorded(&s->m->header, COST_TIME)) {
        die("allocator time not recorded in '%s' (record with memrec --time)", s->path);
    }
    struct alloctime *t;
    int err;
    int rc = alloctime_run(s->path, s->m, &t, &err);
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
        write_out(o->pprof, "pprof profile", pprof_cb, &c);
    }
    if (o->massif) {
        struct massif *ms;
        int err;
        int rc = massif_new(s->path, source_frames(s), &ms, &err);
        if (rc < 0) {
            die("cannot read '%s' again: %s", s->path, rc == MEMFMT_E_IO ? strerror(err) : memfmt_strerror(rc));
        }
        write_out(o->massif, "massif file", massif_cb, ms);
        massif_free(ms);
    }
}

/* ---- the report and its other forms ---- */

int mode_report(const struct opts *o, const char *path)
{
    struct source s = {.path = path};
    source_open(&s, o);
    if (o->alloc_time) {
        struct alloctime *t = alloc_time_of(&s);
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
        struct calltree *t = calltree_build(source_frames(&s), s.acct);
        calltree_sort(t, o->cost, 0);
        if (o->folded) {
            struct folded_ctx c = {t, NULL, o->cost};
            write_out(o->folded, "folded stacks", folded_cb, &c);
        }
        if (o->svg) {
            char title[1024];
            struct svg *g = make_svg(o, &s, NULL, title, sizeof title);
            svg_add_tree(g, t, o->reverse ? CALLTREE_BOTTOM_UP : CALLTREE_TOP_DOWN, o->cost, "all");
            write_out(o->svg, "flame graph", svg_cb, g);
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
        load_suppressions(&o->gate, s.m, &sup, 0);
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

int mode_compare(const struct opts *o, const char *path)
{
    struct source b = {.path = o->diff_base}, n = {.path = path};
    source_open(&b, o);
    source_open(&n, o);
    if (o->alloc_time) {
        struct alloctime *tb = alloc_time_of(&b), *tn = alloc_time_of(&n);
        alloctime_print_compare(tb, b.m, tn, n.m, o->json, stdout);
        alloctime_free(tb);
        alloctime_free(tn);
        int whole = model_complete(b.m) && model_complete(n.m);
        source_release(&b);
        source_release(&n);
        return whole;
    }
    struct calltree *tb = calltree_build(source_frames(&b), b.acct);
    struct calltree *tn = calltree_build(source_frames(&n), n.acct);
    struct difftree *d = diff_build(tb, tn);
    d->base_timed = cost_recorded(&b.m->header, COST_TIME);
    d->new_timed = cost_recorded(&n.m->header, COST_TIME);
    if ((o->folded || o->svg) && o->cost == COST_TIME && !(d->base_timed && d->new_timed)) {
        die("--cost time: allocator time not recorded in '%s' (record with memrec --time)",
            d->base_timed ? n.path : b.path);
    }
    if (o->folded || o->svg) {
        if (o->folded) {
            struct folded_ctx c = {NULL, d, o->cost};
            write_out(o->folded, "folded stacks", folded_cb, &c);
        }
        if (o->svg) {
            char title[1024];
            struct svg *g = make_svg(o, &n, &b, title, sizeof title);
            diff_add_svg(d, o->cost, g);
            write_out(o->svg, "flame graph", svg_cb, g);
            svg_free(g);
        }
    } else if (o->json) {
        diff_print_json(d, model_program(b.m), model_program(n.m), (uint32_t)o->ro.top, stdout);
    } else {
        if (n.note[0]) {
            printf("%s (both recordings)\n", n.note);
        }
        diff_print_text(d, model_program(b.m), model_program(n.m), (uint32_t)o->ro.top, stdout);
    }
    diff_free(d);
    calltree_free(tb);
    calltree_free(tn);
    int whole = model_complete(b.m) && model_complete(n.m);
    source_release(&b);
    source_release(&n);
    return whole;
}

/* ---- the CI gate ---- */

/* The figures of the baseline recording, with its own suppressions (its
 * own program's). Returns 1 when it was read whole. */
static int baseline_figures(const struct opts *o, struct figure *out)
{
    struct source b = {.path = o->gate.baseline};
    source_open(&b, o);
    struct report *r = report_new(&b.view);
    if (!r) {
        die("cannot start the symbolizer (libdw)");
    }
    struct suppressions sup = SUPPRESSIONS_INIT;
    load_suppressions(&o->gate, b.m, &sup, 1);
    suppress_apply(&sup, r);
    figures_collect(&b.view, b.acct, &sup.total, out);
    int whole = model_complete(b.m);
    suppress_release(&sup);
    report_free(r);
    source_release(&b);
    return whole;
}

int mode_gate(const struct opts *o, const char *path)
{
    const struct gate_opts *g = &o->gate;
    size_t nc;
    struct check *checks;
    char err[2048];
    if (checks_parse_all(g->checks, g->nchecks, g->increases, g->nincreases, &checks, &nc, err, sizeof err) < 0) {
        die_code(2, "%s", err);
    }
    struct figure old[FIGURES_COUNT];
    int old_whole = 1;
    if (g->baseline) {
        old_whole = baseline_figures(o, old);
    }
    struct source s = {.path = path};
    source_open(&s, o);
    struct report *r = report_new(&s.view);
    if (!r) {
        die("cannot start the symbolizer (libdw)");
    }
    struct suppressions sup = SUPPRESSIONS_INIT;
    load_suppressions(g, s.m, &sup, 1);
    suppress_apply(&sup, r);
    struct figure now[FIGURES_COUNT];
    figures_collect(&s.view, s.acct, &sup.total, now);
    int whole = model_complete(s.m);
    for (size_t i = 0; i < nc; i++) {
        check_eval(&checks[i], now, old);
    }
    int code = checks_gate_code(checks, nc, whole, old_whole);
    if (o->json) {
        char *gate = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&gate, &len);
        if (!f) {
            die("out of memory");
        }
        fputs(s.json, f);
        suppress_print_json(&sup, f);
        checks_print_gate_json(checks, nc, code, g->baseline, old_whole, f);
        if (fclose(f) != 0) {
            die("out of memory");
        }
        struct report_options ro = o->ro;
        ro.json_extra = gate;
        ro.suppressed = sup.total;
        report_print_json(r, &ro, stdout);
        free(gate);
    } else {
        checks_print_gate_text(checks, nc, g->nchecks, g->baseline, &sup.total, code, whole, stdout);
    }
    suppress_release(&sup);
    report_free(r);
    source_release(&s);
    free(checks);
    return code;
}
