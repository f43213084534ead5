// SPDX-License-Identifier: MIT
/* livelist.c's contract: the list of the stacks live at one moment of the
 * run (memprint --at T), which the over-time charts open at their cursor
 * with `a`. The figures are analysis_run()'s with has_at, the pass
 * memprint --at makes; the list ranks its traces by live bytes
 * (topseries_rank()). The chart's view holds one and hands it its draw and
 * its keys while it is open. */
#ifndef TUI_LIVELIST_H
#define TUI_LIVELIST_H

#include <stdint.h>

#include "action.h"
#include "analysis.h"
#include "data.h"
#include "listbox.h"
#include "report.h"
#include "topseries.h"

/* The most stacks the list shows (the heading says how many live). */
#define LIVELIST_MAX 500

struct livelist {
    int open;
    uint64_t at_ms; /* the moment asked for */
    struct analysis *a; /* has_at = at_ms: a->acct's live figures are those at that moment */
    uint64_t generation; /* d->generation when computed: a reload closes the list */
    struct report *r; /* memprint's merged stacks of the model */
    uint64_t rgen;
    uint32_t n;
    struct topseries_stack top[LIVELIST_MAX]; /* cost: bytes live then */
    uint32_t stacks; /* stacks live at that moment, listed or not */
    struct listbox lb;
    char *frame_name; /* livelist_frame()'s */
};

/** Compute what was live at `at_ms` (one more pass over the file) and
 * open the list. Returns 0, or analysis_run()'s negative status (the list
 * stays closed). */
int livelist_open(struct livelist *l, struct data *d, uint64_t at_ms, int *err_errno);
/** Close and release the list's figures. */
void livelist_close(struct livelist *l);
/** livelist_close(), and the merged stacks too: when the view goes. */
void livelist_free(struct livelist *l);
/** Draw the list in `h` rows from row `y`; closes it when the data were
 * reloaded since (returns 0 then, 1 when drawn). */
int livelist_draw(struct livelist *l, struct data *d, int y, int h, int w);
/** A key while the list is open: moves; Backspace or Left closes it.
 * Returns 1 when taken. */
int livelist_key(struct livelist *l, enum action a, int page);
/** The innermost frame of the selected stack (d and e describe it), *name
 * its function's name as memprint prints it (owned by the list until the
 * next call); NULL when the list is closed or empty. */
const struct sym_frame *livelist_frame(struct livelist *l, struct data *d, const char **name);
/** A click on body line `line`. */
void livelist_click(struct livelist *l, int line);

#endif
