// SPDX-License-Identifier: MIT
/* memprint's CI gate (modes.h's mode_gate()): --check and --max-increase
 * evaluated by checks.c on the figures of figures.c, after the leak
 * suppressions, for the recording and its baseline. */
#define _GNU_SOURCE
#include "modes.h"

#include <stdio.h>
#include <stdlib.h>

#include "checks.h"
#include "figures.h"
#include "report.h"
#include "sources.h"
#include "suppress.h"
#include "util.h"

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
    modes_load_suppressions(&o->gate, b.m, &sup, 1);
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
    modes_load_suppressions(g, s.m, &sup, 1);
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
