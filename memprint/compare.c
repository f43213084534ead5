// SPDX-License-Identifier: MIT
/* memprint --diff (modes.h's mode_compare()): two recordings loaded and
 * handed to diff.c (the summary and most changed stacks, a differential
 * flame graph) or alloctime.c (--alloc-time side by side). */
#define _GNU_SOURCE
#include "modes.h"

#include <stdio.h>

#include "alloctime.h"
#include "calltree.h"
#include "diff.h"
#include "sources.h"
#include "svg.h"
#include "util.h"

int mode_compare(const struct opts *o, const char *path)
{
    struct source b = {.path = o->diff_base}, n = {.path = path};
    source_open(&b, o);
    source_open(&n, o);
    if (o->alloc_time) {
        struct alloctime *tb = modes_alloc_time(&b), *tn = modes_alloc_time(&n);
        alloctime_print_compare(tb, b.m, tn, n.m, o->json, stdout);
        alloctime_free(tb);
        alloctime_free(tn);
        int whole = model_complete(b.m) && model_complete(n.m);
        source_release(&b);
        source_release(&n);
        return whole;
    }
    struct calltree *tb = calltree_build_growth(source_frames(&b), b.acct, b.view.growth);
    struct calltree *tn = calltree_build_growth(source_frames(&n), n.acct, n.view.growth);
    struct difftree *d = diff_build(tb, tn);
    d->base_timed = cost_recorded(&b.m->header, COST_TIME);
    d->new_timed = cost_recorded(&n.m->header, COST_TIME);
    if ((o->folded || o->svg) && o->cost == COST_TIME && !(d->base_timed && d->new_timed)) {
        die("--cost time: allocator time not recorded in '%s' (record with memrec --time)",
            d->base_timed ? n.path : b.path);
    }
    if (o->folded || o->svg) {
        if (o->folded) {
            modes_write_folded(o->folded, NULL, d, o->cost);
        }
        if (o->svg) {
            char title[1024];
            struct svg *g = modes_svg_new(o, &n, &b, title, sizeof title);
            diff_add_svg(d, o->cost, g);
            modes_write_svg(o->svg, g);
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
