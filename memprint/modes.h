// SPDX-License-Identifier: MIT
/* memprint's modes, one call each, for main()'s dispatch: the report
 * (modes.c), --diff (compare.c), the CI gate (gate.c). Each returns what
 * main() turns into the exit code, and ends the run itself (util.h's die())
 * when a recording cannot be read or an output cannot be written. Below
 * them, the pieces the mode files share, defined in modes.c. */
#ifndef MODES_H
#define MODES_H

#include <stddef.h>

#include "calltree.h"
#include "costs.h"
#include "diff.h"
#include "mpopts.h"
#include "outfile.h"
#include "suppress.h"
#include "svg.h"

struct alloctime;
struct source;

/** The report of the recording at `path` (text or JSON, --group,
 * --threads), or its --folded, --svg, --sizes, --timeline, --pprof,
 * --massif or --alloc-time output. Returns 1 when the figures hold the
 * whole recording (model_complete()), else 0. */
int mode_report(const struct opts *o, const char *path);
/** --diff: o->diff_base compared with the recording at `path` (summary
 * and most changed stacks, a differential flame graph, or --alloc-time
 * side by side). Returns 1 when both were read whole. */
int mode_compare(const struct opts *o, const char *path);
/** --check and --max-increase on the recording at `path`: prints each
 * check (text), or the report with a "gate" member (JSON). Returns the
 * exit code: 0 all hold, 1 one fails, 3 a recording is incomplete. */
int mode_gate(const struct opts *o, const char *path);

/* ---- shared by the mode files (modes.c) ---- */

/** outfile_write() of `out` ('-': stdout), ending the run on failure. */
void modes_write_out(const char *out, const char *what, outfile_fn fn, void *ctx);
/** Folded stacks of `cost` into `out`: of the call tree `t`, or of the
 * comparison `d` when it is not NULL. */
void modes_write_folded(const char *out, const struct calltree *t, const struct difftree *d, enum cost_type cost);
/** A flame graph titled after the recording `s` (with `base`: a
 * differential one); `title` (of `title_cap` bytes) must outlive it. */
struct svg *modes_svg_new(const struct opts *o, const struct source *s, const struct source *base, char *title,
                          size_t title_cap);
/** The flame graph `g` written into `out`. */
void modes_write_svg(const char *out, struct svg *g);
/** The leak suppressions of the recording `m` (suppress_load_all(): files,
 * the program's, the built-in list; `checking`: also say when the
 * executable is not here). A file that cannot be read ends the run (exit 2). */
void modes_load_suppressions(const struct gate_opts *g, const struct model *m, struct suppressions *sup, int checking);
/** The allocator-time tables of `s` (alloctime_free() them); ends the run
 * when the recording is not timed (zeros would pass for data) or cannot
 * be read again. */
struct alloctime *modes_alloc_time(const struct source *s);

#endif
