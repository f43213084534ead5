// SPDX-License-Identifier: MIT
/* Folded-stack export (folded.h). */
#include "folded.h"

#include <inttypes.h>
#include <stdlib.h>

#include "util.h"

/* Frame names keep flamegraph.pl's separators out: ';' splits frames. */
static void put_name(const char *s, FILE *f)
{
    for (; *s; s++) {
        fputc(*s == ';' ? ':' : *s, f);
    }
}

/* The names from the outermost frame to `id`; `path` has room for the
 * tree's depth. Not recursive: stacks may be deeper than the C stack. A
 * stack deeper than FOLDED_MAX_DEPTH keeps its outermost frames and ends
 * with "[N frames cut]": every stack of a chain of 11,000 frames, each a
 * site, made 3.2 GB of text from a 1.2 MB recording. */
static void put_path(const struct calltree *t, uint32_t id, uint32_t *path, FILE *f)
{
    size_t n = 0;
    for (uint32_t x = id; x != 0 && x != CALLTREE_NONE; x = calltree_node(t, CALLTREE_TOP_DOWN, x)->parent) {
        path[n++] = x;
    }
    size_t cut = n > FOLDED_MAX_DEPTH ? n - (FOLDED_MAX_DEPTH - 1) : 0;
    while (n-- > cut) {
        put_name(calltree_name(t, CALLTREE_TOP_DOWN, path[n]), f);
        fputc(n > cut || cut ? ';' : ' ', f);
    }
    if (cut) {
        fprintf(f, "[%zu frames cut] ", cut);
    }
}

int folded_write(const struct calltree *t, enum cost_type c, FILE *f)
{
    const struct calltree_node *root = calltree_node(t, CALLTREE_TOP_DOWN, 0);
    if (root->self.v[c] > 0) {
        fprintf(f, "[no stack] %" PRIu64 "\n", root->self.v[c]);
    }
    /* Depth-first with an explicit stack: a recording's stacks may be
     * deeper than the C stack should recurse. */
    uint32_t size = calltree_size(t, CALLTREE_TOP_DOWN);
    uint32_t *stack = xmalloc(((size_t)size + 1) * sizeof *stack);
    uint32_t *path = xmalloc(((size_t)size + 1) * sizeof *path);
    size_t sp = 0;
    uint32_t n;
    const uint32_t *kids = calltree_children(t, CALLTREE_TOP_DOWN, 0, &n);
    for (uint32_t i = n; i-- > 0;) {
        stack[sp++] = kids[i];
    }
    while (sp > 0) {
        uint32_t id = stack[--sp];
        const struct calltree_node *nd = calltree_node(t, CALLTREE_TOP_DOWN, id);
        if (nd->incl.v[c] == 0) {
            continue;
        }
        if (nd->self.v[c] > 0) {
            put_path(t, id, path, f);
            fprintf(f, "%" PRIu64 "\n", nd->self.v[c]);
        }
        kids = calltree_children(t, CALLTREE_TOP_DOWN, id, &n);
        for (uint32_t i = n; i-- > 0;) {
            stack[sp++] = kids[i];
        }
    }
    free(stack);
    free(path);
    return ferror(f) ? -1 : 0;
}
