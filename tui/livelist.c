// SPDX-License-Identifier: MIT
/* The stacks live at a moment (livelist.h): one analysis pass stopped at
 * the moment, its traces ranked by live bytes, drawn as a list. */
#define _GNU_SOURCE
#include "livelist.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crt.h"
#include "frames.h"
#include "site.h"
#include "text.h"

int livelist_open(struct livelist *l, struct data *d, uint64_t at_ms, int *err_errno)
{
    livelist_close(l);
    struct analysis_query q = ANALYSIS_QUERY_INIT;
    q.has_at = 1;
    q.at_ms = at_ms;
    /* The filter's stacks (F), as memprint --at --function counts them;
     * not the folding, whose sites need not be memprint's stacks. */
    q.keep = d->keep;
    q.thread = d->filter.thread;
    int rc = analysis_run(d->path, d->m, &q, &l->a, err_errno);
    if (rc < 0) {
        l->a = NULL;
        return rc;
    }
    const struct report *r = site_report(d, &l->r, &l->rgen);
    if (!r) {
        analysis_free(l->a);
        l->a = NULL;
        return DATA_E_SYMBOLIZER;
    }
    l->at_ms = at_ms;
    l->generation = d->generation;
    /* Live at at_ms is what the pass leaves live: its "leaked". */
    l->n = topseries_rank(r, l->a->acct, NULL, COST_LEAKED, LIVELIST_MAX, l->top, &l->stacks);
    listbox_clear(&l->lb);
    l->lb.sel = l->lb.top = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        listbox_push(&l->lb, i, 0, 0);
    }
    l->open = 1;
    return 0;
}

void livelist_close(struct livelist *l)
{
    analysis_free(l->a);
    l->a = NULL;
    l->open = 0;
    l->n = 0;
    listbox_release(&l->lb);
}

void livelist_free(struct livelist *l)
{
    livelist_close(l);
    report_free(l->r);
    l->r = NULL;
    free(l->frame_name);
    l->frame_name = NULL;
}

int livelist_draw(struct livelist *l, struct data *d, int y, int h, int w)
{
    if (l->generation != d->generation) {
        livelist_close(l);
        return 0;
    }
    char buf[1024], b1[32], label[768];
    const struct acct_totals *t = accounting_totals(l->a->acct);
    snprintf(buf, sizeof buf, "LIVE AT %.3f s: %llu bytes (%s) in %llu blocks, %u stacks; Backspace: back",
             (double)l->at_ms / 1000.0, (unsigned long long)t->live_bytes, text_bytes(b1, sizeof b1, t->live_bytes),
             (unsigned long long)t->live_blocks, l->stacks);
    crt_put(y, 0, buf, w, A_BOLD);
    crt_put(y + 1, 0, "         bytes   blocks   share  stack (innermost frame < its caller)", w, A_BOLD);
    int rows = h - 2;
    if (rows < 1) {
        return 1;
    }
    if (l->n == 0) {
        crt_put(y + 2, 0, "  (nothing live at that moment)", w, (int)A_NORMAL);
        return 1;
    }
    listbox_scroll(&l->lb, rows);
    for (int r = 0; r < rows && l->lb.top + (uint32_t)r < l->lb.n; r++) {
        const struct topseries_stack *st = &l->top[l->lb.rows[l->lb.top + (uint32_t)r].id];
        double share = t->live_bytes ? 100.0 * (double)st->cost / (double)t->live_bytes : 0.0;
        snprintf(buf, sizeof buf, "%14llu %8llu %6.2f%%  %s", (unsigned long long)st->cost,
                 (unsigned long long)st->blocks, share, site_label(d, st->trace, label, sizeof label));
        int attr = l->lb.top + (uint32_t)r == l->lb.sel ? crt_attr(CRT_SELECTED) : (int)A_NORMAL;
        if (attr != (int)A_NORMAL) {
            crt_fill(y + 2 + r, 0, w, ' ', attr);
        }
        crt_put(y + 2 + r, 0, buf, w, attr);
    }
    return 1;
}

int livelist_key(struct livelist *l, enum action a, int page)
{
    if (a == ACT_BACK || a == ACT_LEFT) {
        livelist_close(l);
        return 1;
    }
    return listbox_move(&l->lb, a, page);
}

const struct sym_frame *livelist_frame(struct livelist *l, struct data *d, const char **name)
{
    if (!l->open || l->lb.n == 0 || l->generation != d->generation) {
        return NULL;
    }
    uint32_t n = 0;
    const struct sym_frame *fr = frames_of_node(d->fr, l->top[l->lb.rows[l->lb.sel].id].trace, &n);
    if (n == 0) {
        return NULL;
    }
    free(l->frame_name);
    l->frame_name = frames_name_dup(&fr[0]);
    *name = l->frame_name;
    return &fr[0];
}

void livelist_click(struct livelist *l, int line)
{
    /* Two heading lines above the rows; listbox_click() counts one. */
    if (line >= 1) {
        listbox_click(&l->lb, line - 1);
    }
}
