// SPDX-License-Identifier: MIT
/* What keeps RSS up, printed: the heap layouts of the RSS VERSUS HEAP
 * section (heaplayout.h, the ones rssgap_layout() and rssgap_arenas()
 * pick: the main heap's and the thread arenas' heaps') with the call
 * stacks of its blocks, as text (memprint, after the report's sections),
 * JSON (members of rss_gap, json.c) and one line of memtui's summary. An
 * output: it calls the report, the frames and the layout below it. */
#ifndef PINNED_H
#define PINNED_H

#include <stdio.h>

#include "heaplayout.h"

struct frames;
struct report;
struct report_options;

/** The text lines of the section for the main heap's layout `l` (NULL
 * or unknown: one line that says why) and the thread arenas' heaps'
 * (`arenas`, NULL: none laid out), their stacks merged as the report
 * merges them and printed as its sections print them (o->top entries,
 * o->max_frames). `attached`: the recording began in a running process,
 * whose blocks from before memrec knows nothing of (said, and JSON
 * heap_layout.partial). */
void pinned_print_text(const struct heaplayout *l, const struct heaplayout *arenas, enum heaplayout_why why,
                       int attached, struct report *r, const struct report_options *o, FILE *f);
/** One line for memtui's summary when the layout is known and free
 * pages are held below live blocks: the free pages below the main heap's
 * top block and the block's function, those of the thread arenas' heaps,
 * the stack holding the most and its function (names from `fr`,
 * escaped), "at most" when `attached`; nothing otherwise. */
void pinned_print_brief(const struct heaplayout *l, const struct heaplayout *arenas, enum heaplayout_why why,
                        int attached, struct frames *fr, FILE *f);
/** `, "heap_layout": {...}, "pinned_by": [...]` (pinned_by null when
 * unknown; heap_layout.arenas null without `arenas`; heap_layout.partial
 * is `attached`), entries with every frame of their stacks. */
void pinned_print_json(const struct heaplayout *l, const struct heaplayout *arenas, enum heaplayout_why why,
                       int attached, struct report *r, const struct report_options *o, FILE *f);

/** memprint's text: the part for the report's model (its rssgap), when
 * the section has a place for a layout (rssgap_layout()); nothing with
 * o->sections set (the RSS section is printed with every section only). */
void pinned_print_report_text(struct report *r, const struct report_options *o, FILE *f);

#endif
