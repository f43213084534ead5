// SPDX-License-Identifier: MIT
/* The search's order and forwarding, shared by the views (search.h); the
 * views keep their cursors, this file only says where a match is. */
#include "search.h"

#include "text.h"

uint32_t search_step(uint32_t n, uint32_t at, int dir, const char *needle, search_name_fn name, void *arg)
{
    for (uint32_t k = 0; k < n; k++) {
        uint32_t step = dir == 0 ? k : k + 1;
        uint32_t i = dir < 0 ? (at + n - step % n) % n : (at + step) % n;
        if (text_match(name(arg, i), needle)) {
            return i;
        }
    }
    return n;
}

struct view_result search_forward(enum calltree_orient o, int go)
{
    struct view_result r = VIEW_RESULT_NONE;
    r.flags = VIEW_SEARCH_IN | (go ? VIEW_GOTO : 0);
    r.o = o;
    return r;
}

int search_any_function(struct data *d, const char *needle)
{
    uint32_t nf = calltree_nfuncs(d->tree);
    for (uint32_t f = 0; f < nf; f++) {
        if (text_match(data_func_name(d, f), needle)) {
            return 1;
        }
    }
    return 0;
}

struct view_result search_chart(struct view *v, struct view_ctx *c, int dir)
{
    (void)v;
    (void)c;
    (void)dir;
    return search_forward(CALLTREE_TOP_DOWN, 0);
}
