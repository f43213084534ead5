// SPDX-License-Identifier: MIT
/* Two call trees merged by frame names (diff.h). A node is found under its
 * merged parent by (parent, name, file) in one hash index over all nodes,
 * so merging is linear in the trees' sizes. */
#include "diff.h"

#include <stdlib.h>
#include <string.h>

#include "charts.h"
#include "escape.h"
#include "idmap.h"
#include "util.h"

struct merge {
    struct difftree *d;
    struct idmap map;
};

static uint64_t key_hash(uint32_t parent, const char *name, const char *file)
{
    return idmap_mix(idmap_hash_str(name) ^ (idmap_hash_str(file ? file : "") * 31) ^ parent);
}

static uint64_t node_rehash(const void *ctx, uint32_t i)
{
    const struct diff_node *nd = &((const struct difftree *)ctx)->nodes[i];
    return key_hash(nd->parent, nd->name, nd->file);
}

struct node_key {
    const struct difftree *d;
    uint32_t parent;
    const char *name, *file;
};

static int same_file(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int node_same(const void *ctx, uint32_t i)
{
    const struct node_key *k = ctx;
    const struct diff_node *nd = &k->d->nodes[i];
    return nd->parent == k->parent && strcmp(nd->name, k->name) == 0 && same_file(nd->file, k->file);
}

static uint32_t node_of(struct merge *mg, uint32_t parent, const char *name, const char *file)
{
    struct difftree *d = mg->d;
    idmap_reserve(&mg->map, (size_t)d->n + 1, node_rehash, d);
    struct node_key k = {d, parent, name, file};
    size_t slot;
    uint32_t i = idmap_find(&mg->map, key_hash(parent, name, file), node_same, &k, &slot);
    if (i != IDMAP_NONE) {
        return i;
    }
    size_t cap = d->cap;
    xgrow((void **)&d->nodes, &cap, (size_t)d->n + 1, sizeof *d->nodes);
    d->cap = (uint32_t)cap;
    i = d->n++;
    idmap_put(&mg->map, slot, i);
    struct diff_node *nd = &d->nodes[i];
    memset(nd, 0, sizeof *nd);
    nd->parent = parent;
    nd->depth = d->nodes[parent].depth + 1;
    nd->name = xstrdup(name);
    nd->file = file ? xstrdup(file) : NULL;
    struct diff_node *p = &d->nodes[parent];
    size_t kcap = p->kids_cap;
    xgrow((void **)&p->kids, &kcap, (size_t)p->nkids + 1, sizeof *p->kids);
    p->kids_cap = (uint32_t)kcap;
    p->kids[p->nkids++] = i;
    return i;
}

/* Adds one tree's costs (`side` 0: base, 1: new). */
static void add_tree(struct merge *mg, const struct calltree *t, int side)
{
    uint32_t size = calltree_size(t, CALLTREE_TOP_DOWN);
    uint32_t *map = xmalloc((size_t)size * sizeof *map);
    uint32_t *stack = xmalloc(((size_t)size + 1) * sizeof *stack);
    size_t sp = 0;
    map[0] = 0;
    stack[sp++] = 0;
    /* Depth-first, so a node's parent is mapped before it. */
    while (sp > 0) {
        uint32_t id = stack[--sp];
        const struct calltree_node *tn = calltree_node(t, CALLTREE_TOP_DOWN, id);
        if (id != 0) {
            const char *file = tn->frame ? tn->frame->file : NULL;
            map[id] = node_of(mg, map[tn->parent], calltree_name(t, CALLTREE_TOP_DOWN, id), file);
        }
        struct diff_node *nd = &mg->d->nodes[map[id]];
        cost_add(side ? &nd->new_self : &nd->base_self, &tn->self);
        cost_add(side ? &nd->new_incl : &nd->base_incl, &tn->incl);
        uint32_t n;
        const uint32_t *kids = calltree_children(t, CALLTREE_TOP_DOWN, id, &n);
        for (uint32_t i = 0; i < n; i++) {
            stack[sp++] = kids[i];
        }
    }
    free(stack);
    free(map);
}

static const struct difftree *sort_tree;

static int by_name(const void *a, const void *b)
{
    const struct diff_node *x = &sort_tree->nodes[*(const uint32_t *)a];
    const struct diff_node *y = &sort_tree->nodes[*(const uint32_t *)b];
    int c = strcmp(x->name, y->name);
    if (c) {
        return c;
    }
    c = strcmp(x->file ? x->file : "", y->file ? y->file : "");
    if (c) {
        return c;
    }
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

struct difftree *diff_build(const struct calltree *base, const struct calltree *newer)
{
    struct difftree *d = xcalloc(1, sizeof *d);
    size_t cap = 0;
    xgrow((void **)&d->nodes, &cap, 1, sizeof *d->nodes);
    d->cap = (uint32_t)cap;
    memset(&d->nodes[0], 0, sizeof d->nodes[0]);
    d->nodes[0].parent = CALLTREE_NONE;
    d->nodes[0].name = xstrdup("[root]");
    d->n = 1;
    struct merge mg = {d, IDMAP_INIT};
    idmap_reserve(&mg.map, 1, node_rehash, d);
    add_tree(&mg, base, 0);
    add_tree(&mg, newer, 1);
    idmap_release(&mg.map);
    sort_tree = d;
    for (uint32_t i = 0; i < d->n; i++) {
        if (d->nodes[i].nkids > 1) {
            qsort(d->nodes[i].kids, d->nodes[i].nkids, sizeof *d->nodes[i].kids, by_name);
        }
    }
    return d;
}

void diff_free(struct difftree *d)
{
    if (!d) {
        return;
    }
    for (uint32_t i = 0; i < d->n; i++) {
        free(d->nodes[i].name);
        free(d->nodes[i].file);
        free(d->nodes[i].kids);
    }
    free(d->nodes);
    free(d);
}

/* Signed change of cost `c` in a cost pair, saturated to int64. */
static int64_t diff_delta(uint64_t base, uint64_t newer)
{
    if (newer >= base) {
        uint64_t d = newer - base;
        return d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
    }
    uint64_t d = base - newer;
    return d > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)d;
}

static const struct difftree *rank_tree;
static enum cost_type rank_cost;

static uint64_t abs_change(const struct diff_node *nd, enum cost_type c)
{
    uint64_t b = nd->base_self.v[c], n = nd->new_self.v[c];
    return n > b ? n - b : b - n;
}

static int by_change(const void *a, const void *b)
{
    const struct diff_node *x = &rank_tree->nodes[*(const uint32_t *)a];
    const struct diff_node *y = &rank_tree->nodes[*(const uint32_t *)b];
    uint64_t cx = abs_change(x, rank_cost), cy = abs_change(y, rank_cost);
    if (cx != cy) {
        return cx > cy ? -1 : 1;
    }
    if (x->new_self.v[rank_cost] != y->new_self.v[rank_cost]) {
        return x->new_self.v[rank_cost] > y->new_self.v[rank_cost] ? -1 : 1;
    }
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The nodes whose self cost `c` changed (the call stacks that end there),
 * largest absolute change first (ties: larger new cost, then node order):
 * *out is malloc'd (the caller frees it). Returns the count. */
static uint32_t diff_changed(const struct difftree *d, enum cost_type c, uint32_t **out)
{
    uint32_t *ids = xmalloc((size_t)d->n * sizeof *ids);
    uint32_t k = 0;
    for (uint32_t i = 0; i < d->n; i++) {
        if (abs_change(&d->nodes[i], c) > 0) {
            ids[k++] = i;
        }
    }
    rank_tree = d;
    rank_cost = c;
    qsort(ids, k, sizeof *ids, by_change);
    *out = ids;
    return k;
}

/* ---- exports ---- */

static void put_name(const char *s, FILE *f)
{
    for (; *s; s++) {
        fputc(*s == ';' ? ':' : *s, f);
    }
}

int diff_write_folded(const struct difftree *d, enum cost_type c, FILE *f)
{
    uint32_t *path = xmalloc(((size_t)d->n + 1) * sizeof *path);
    if (d->nodes[0].base_self.v[c] || d->nodes[0].new_self.v[c]) {
        fprintf(f, "[no stack] %llu %llu\n", (unsigned long long)d->nodes[0].base_self.v[c],
                (unsigned long long)d->nodes[0].new_self.v[c]);
    }
    for (uint32_t i = 1; i < d->n; i++) {
        const struct diff_node *nd = &d->nodes[i];
        if (!nd->base_self.v[c] && !nd->new_self.v[c]) {
            continue;
        }
        size_t n = 0;
        for (uint32_t x = i; x != 0; x = d->nodes[x].parent) {
            path[n++] = x;
        }
        while (n-- > 0) {
            put_name(d->nodes[path[n]].name, f);
            fputc(n ? ';' : ' ', f);
        }
        fprintf(f, "%llu %llu\n", (unsigned long long)nd->base_self.v[c], (unsigned long long)nd->new_self.v[c]);
    }
    free(path);
    return ferror(f) ? -1 : 0;
}

void diff_add_svg(const struct difftree *d, enum cost_type c, struct svg *g)
{
    uint32_t *stack = xmalloc(((size_t)d->n + 1) * sizeof *stack);
    size_t sp = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        const struct diff_node *nd = &d->nodes[stack[--sp]];
        if (nd->new_incl.v[c] == 0 && nd != &d->nodes[0]) {
            continue; /* nothing left in the new recording: no width (the text diff lists it) */
        }
        svg_frame(g, nd->depth, nd->depth ? nd->name : "all", nd->new_incl.v[c], nd->base_incl.v[c]);
        for (uint32_t i = nd->nkids; i-- > 0;) {
            stack[sp++] = nd->kids[i];
        }
    }
    free(stack);
}

/* ---- reports ---- */

static const char *const change_titles[COST_NTYPES] = {
    "CALLS TO ALLOCATION FUNCTIONS",
    "TEMPORARY ALLOCATIONS",
    "PEAK MEMORY CONSUMERS",
    "MEMORY LEAKED",
    "MEMORY ALLOCATED",
    "PEAK MAPPED MEMORY",
    "TIME IN THE ALLOCATOR (ns)",
    "MEMORY GROWTH (bytes/s)",
    "MEMORY LEAKED UNREACHABLE",
};
static const char *const summary_names[COST_NTYPES] = {
    "calls to allocation functions", "temporary allocations",   "peak heap memory consumption",
    "total memory leaked",           "total bytes allocated",   "peak mapped memory",
    "time in the allocator (ns)",    "steady growth (bytes/s)", "unreachable at the end",
};

/* Names are frames_name_dup()'s, escaped already; files come from the
 * recording as they are. */
static void put_file(const char *s, FILE *f)
{
    esc_text_fputs(s, f);
}

void diff_print_text(const struct difftree *d, const char *base_name, const char *new_name, uint32_t top, FILE *f)
{
    const struct diff_node *root = &d->nodes[0];
    fputs("comparing base: ", f);
    esc_text_fputs(base_name, f);
    fputs("\n     with new: ", f);
    esc_text_fputs(new_name, f);
    fputs("\n(call stacks matched by function and source file, not by address)\n\n", f);
    fprintf(f, "%-32s %16s %16s %17s\n", "", "base", "new", "change");
    int timed = d->base_timed && d->new_timed;
    for (int c = 0; c < COST_NTYPES; c++) {
        uint64_t b = root->base_incl.v[c], n = root->new_incl.v[c];
        if (c == COST_TIME && !timed) {
            fprintf(f, "allocator time: not recorded in %s (memrec --time)\n",
                    d->base_timed ? "new" : (d->new_timed ? "base" : "either"));
            continue;
        }
        fprintf(f, "%-32s %16llu %16llu %+17lld\n", summary_names[c], (unsigned long long)b, (unsigned long long)n,
                (long long)diff_delta(b, n));
    }
    uint32_t *path = xmalloc(((size_t)d->n + 1) * sizeof *path);
    for (int c = 0; c < COST_NTYPES; c++) {
        if (c == COST_TIME && !timed) {
            continue;
        }
        uint32_t *ids;
        uint32_t k = diff_changed(d, (enum cost_type)c, &ids);
        fprintf(f, "\nMOST CHANGED: %s\n", change_titles[c]);
        if (k == 0) {
            fprintf(f, "  (no change)\n");
        }
        uint32_t shown = k < top ? k : top;
        for (uint32_t i = 0; i < shown; i++) {
            const struct diff_node *nd = &d->nodes[ids[i]];
            uint64_t b = nd->base_self.v[c], n = nd->new_self.v[c];
            fprintf(f, "  %+lld (%llu -> %llu)\n", (long long)diff_delta(b, n), (unsigned long long)b,
                    (unsigned long long)n);
            if (ids[i] == 0) {
                fprintf(f, "      (no stack)\n");
            }
            int depth = 0;
            for (uint32_t x = ids[i]; x != 0; x = d->nodes[x].parent) {
                fprintf(f, "      #%-2d ", depth++);
                fputs(d->nodes[x].name, f);
                if (d->nodes[x].file) {
                    fputs(" at ", f);
                    put_file(d->nodes[x].file, f);
                }
                fputc('\n', f);
            }
        }
        if (k > shown) {
            fprintf(f, "  ... and %u more call stacks\n", k - shown);
        }
        free(ids);
    }
    free(path);
}

static void json_costs(const char *name, const struct cost_vec *v, int timed, FILE *f)
{
    fprintf(f, "\"%s\": {", name);
    for (int c = 0; c < COST_NTYPES; c++) {
        if (c == COST_TIME && !timed) {
            fprintf(f, ", \"%s\": null", cost_name((enum cost_type)c));
            continue;
        }
        fprintf(f, "%s\"%s\": %llu", c ? ", " : "", cost_name((enum cost_type)c), (unsigned long long)v->v[c]);
    }
    fputc('}', f);
}

void diff_print_json(const struct difftree *d, const char *base_name, const char *new_name, uint32_t top, FILE *f)
{
    const struct diff_node *root = &d->nodes[0];
    fputs("{\"base_program\": ", f);
    charts_json_str(base_name, f);
    fputs(", \"new_program\": ", f);
    charts_json_str(new_name, f);
    fputs(", ", f);
    int timed = d->base_timed && d->new_timed;
    json_costs("base", &root->base_incl, d->base_timed, f);
    fputs(", ", f);
    json_costs("new", &root->new_incl, d->new_timed, f);
    fputs(", \"delta\": {", f);
    for (int c = 0; c < COST_NTYPES; c++) {
        if (c == COST_TIME && !timed) {
            fprintf(f, ", \"%s\": null", cost_name((enum cost_type)c));
            continue;
        }
        fprintf(f, "%s\"%s\": %lld", c ? ", " : "", cost_name((enum cost_type)c),
                (long long)diff_delta(root->base_incl.v[c], root->new_incl.v[c]));
    }
    fputs("}, \"changes\": {", f);
    for (int c = 0; c < COST_NTYPES; c++) {
        if (c == COST_TIME && !timed) {
            fprintf(f, ", \"%s\": null", cost_name((enum cost_type)c));
            continue;
        }
        uint32_t *ids;
        uint32_t k = diff_changed(d, (enum cost_type)c, &ids);
        fprintf(f, "%s\"%s\": [", c ? ", " : "", cost_name((enum cost_type)c));
        for (uint32_t i = 0; i < k && i < top; i++) {
            const struct diff_node *nd = &d->nodes[ids[i]];
            fprintf(f, "%s{\"base\": %llu, \"new\": %llu, \"delta\": %lld, \"frames\": [", i ? ", " : "",
                    (unsigned long long)nd->base_self.v[c], (unsigned long long)nd->new_self.v[c],
                    (long long)diff_delta(nd->base_self.v[c], nd->new_self.v[c]));
            int first = 1;
            for (uint32_t x = ids[i]; x != 0; x = d->nodes[x].parent) {
                fputs(first ? "{\"function\": " : ", {\"function\": ", f);
                charts_json_str(d->nodes[x].name, f);
                fputs(", \"file\": ", f);
                charts_json_str(d->nodes[x].file, f);
                fputc('}', f);
                first = 0;
            }
            fputs("]}", f);
        }
        fputs("]", f);
        free(ids);
    }
    fputs("}}\n", f);
}
