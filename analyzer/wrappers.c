// SPDX-License-Identifier: MIT
/* The node each trace is counted at once its wrapper frames are folded
 * into their callers (wrappers.h). */
#define _GNU_SOURCE
#include "wrappers.h"

#include <regex.h>
#include <stdlib.h>

#include "memfmt.h"
#include "util.h"

const char wrappers_known[] =
    "^(xmalloc|xcalloc|xrealloc|xzalloc|xmemdup|xstrdup|xstrndup|xnmalloc|x2nrealloc|"
    "g_malloc|g_malloc0|g_malloc_n|g_malloc0_n|g_realloc|g_realloc_n|g_try_malloc|g_try_malloc0|g_strdup|g_strndup|"
    "g_slice_alloc|g_slice_alloc0|"
    "Perl_safesysmalloc|Perl_safesyscalloc|Perl_safesysrealloc|Perl_savepv|Perl_savepvn|"
    "PyMem_Malloc|PyMem_Calloc|PyMem_Realloc|PyMem_RawMalloc|PyMem_RawCalloc|PyMem_RawRealloc|PyObject_Malloc|"
    "PyObject_Calloc|PyObject_Realloc|"
    "emalloc|ecalloc|erealloc|zmalloc|zcalloc|zrealloc|"
    "operator new|operator new\\[\\])(\\(.*\\))?$"
    "|^(std::|__gnu_cxx::)(__new_allocator|new_allocator|allocator|allocator_traits)<.*>::allocate(\\(.*\\))?$";

/* 1 when every frame of `node` is named by `re` (a node with no frame: no). */
static int all_wrappers(struct frames *fr, uint32_t node, const regex_t *re)
{
    uint32_t n;
    const struct sym_frame *f = frames_of_node(fr, node, &n);
    for (uint32_t i = 0; i < n; i++) {
        char *name = frames_name_dup(&f[i]);
        int hit = regexec(re, name, 0, NULL, 0) == 0;
        free(name);
        if (!hit) {
            return 0;
        }
    }
    return n > 0;
}

int wrappers_remap(struct frames *fr, const char *re, uint32_t **remap, uint32_t *folded, char *err, size_t cap)
{
    const struct model *m = frames_model(fr);
    regex_t rx;
    *remap = NULL;
    *folded = 0;
    int rc = regcomp(&rx, re ? re : wrappers_known, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        regerror(rc, &rx, err, cap);
        return MEMFMT_E_INVALID;
    }
    uint32_t n = m->nnodes ? m->nnodes : 1;
    uint32_t *to = xmalloc((size_t)n * sizeof *to);
    /* 0: not decided yet, 1: keeps its own frames, 2: a wrapper. Only
     * traces and the ancestors their walk reaches are symbolized. */
    uint8_t *kind = xcalloc(n, 1);
    for (uint32_t x = 0; x < n; x++) {
        to[x] = x;
    }
    for (uint32_t t = 1; t < m->nnodes; t++) {
        const struct acct_cost *c = accounting_cost(m->acct, t);
        if (!c || (c->calls == 0 && c->mapping_calls == 0)) {
            continue;
        }
        uint32_t x = t;
        for (;;) {
            if (!kind[x]) {
                kind[x] = !frames_node_is_main(fr, x) && all_wrappers(fr, x, &rx) ? 2 : 1;
            }
            uint32_t p = m->nodes[x].parent;
            if (kind[x] == 1 || p == 0 || p >= x) {
                break;
            }
            x = p;
        }
        to[t] = x;
        *folded += x != t;
    }
    free(kind);
    regfree(&rx);
    *remap = to;
    return 0;
}
