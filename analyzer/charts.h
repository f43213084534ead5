// SPDX-License-Identifier: MIT
/* Text and JSON output of the size histogram (sizes.h) and of the heap
 * over time (timeseries.h): memprint --sizes and --timeline. The figures
 * come from the analysis pass; this only lays them out. Never prints but
 * to the stream it is given. */
#ifndef CHARTS_H
#define CHARTS_H

#include <stdint.h>
#include <stdio.h>

#include "accounting.h"
#include "frames.h"
#include "model.h"
#include "sizes.h"
#include "timeseries.h"

/** At most this many exact sizes are listed, whatever -n asks: choosing
 * them is O(distinct sizes × count). */
#define CHARTS_MAX_TOP 1000

/** A JSON string value of `s` (NULL: null), valid UTF-8 whatever `s`
 * holds: esc_json_fputs() (util/escape.h). */
void charts_json_str(const char *s, FILE *f);

/** Columns of the text chart: memprint asks the analysis for this many points. */
#define CHARTS_COLUMNS 64

/* What memprint --sizes and --timeline print of one recording. */
struct charts_report {
    const struct model *m; /* the program's name and runtime */
    const char *note; /* what was counted (text, "" for the whole run) */
    const char *json_members; /* the same as JSON members (", \"...\": ..."), "" for none */
    const struct sizes *sizes; /* --sizes; NULL: none */
    const struct accounting *acct; /* the query's figures, for by_stack */
    struct frames *by_stack; /* --by-stack: the frames to name the stacks with; NULL: not asked */
    const struct timeseries *series; /* --timeline; NULL: none */
    uint32_t top; /* entries of each table */
};

/** memprint --sizes and --timeline: the program line, the note, the size
 * histogram (and the sizes of the `top` stacks with the most calls) and
 * the chart of the heap over time as text, or one JSON object with the
 * runtime, the members and the same tables (`json`). */
void charts_print_report(const struct charts_report *c, int json, FILE *f);

#endif
