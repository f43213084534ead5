// SPDX-License-Identifier: MIT
/* memprint's modes, one call each, for main()'s dispatch. Each returns what
 * main() turns into the exit code, and ends the run itself (util.h's die())
 * when a recording cannot be read or an output cannot be written. */
#ifndef MODES_H
#define MODES_H

#include "mpopts.h"

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

#endif
