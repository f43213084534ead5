// SPDX-License-Identifier: MIT
/* The main heap's layout as read from a LAYOUT record (heaplayout.h);
 * pinned.c prints it. */
#include "heaplayout.h"

#include <inttypes.h>

uint32_t heaplayout_take(struct heaplayout *l, const struct memfmt_record *r, uint64_t ms, uint32_t nnodes)
{
    uint32_t bad = 0;
    *l = (struct heaplayout){0};
    l->known = 1;
    l->ms = ms;
    l->page = r->u.layout.page;
    l->heap_bytes = r->u.layout.heap_bytes;
    l->live_bytes = r->u.layout.live_bytes;
    l->live_blocks = r->u.layout.live_blocks;
    l->free_pages = r->u.layout.free_pages;
    l->top_end = r->u.layout.top_end;
    l->top_size = r->u.layout.top_size;
    l->top_held_pages = r->u.layout.top_held_pages;
    l->ntraces = r->u.layout.ntraces;
    l->cost_ns = r->u.layout.cost_ns;
    l->heap = r->u.layout.heap;
    l->heaps = r->u.layout.heaps;
    l->top_trace = r->u.layout.top_trace;
    if (l->top_trace >= nnodes) {
        l->top_trace = 0;
        bad++;
    }
    l->n = r->u.layout.n <= MEMFMT_MAX_LAYOUT ? r->u.layout.n : MEMFMT_MAX_LAYOUT;
    for (uint32_t i = 0; i < l->n; i++) {
        l->e[i] = r->u.layout.e[i];
        if (l->e[i].trace >= nnodes) {
            l->e[i].trace = 0;
            bad++;
        }
    }
    l->ntops = r->u.layout.ntops <= MEMFMT_MAX_LAYOUT ? r->u.layout.ntops : MEMFMT_MAX_LAYOUT;
    for (uint32_t i = 0; i < l->ntops; i++) {
        l->tops[i] = r->u.layout.tops[i];
        if (l->tops[i].trace >= nnodes) {
            l->tops[i].trace = 0;
            bad++;
        }
    }
    return bad != 0;
}

const char *heaplayout_why_name(enum heaplayout_why why)
{
    switch (why) {
    case HEAPLAYOUT_ALLOCATOR: return "allocator";
    case HEAPLAYOUT_SAMPLED: return "sampled";
    case HEAPLAYOUT_NOT_RECORDED: return "not_recorded";
    case HEAPLAYOUT_NOT_YET: return "not_yet";
    default: return NULL;
    }
}
