// SPDX-License-Identifier: MIT
/* Builds the call trees (calltree.h). Top-down follows the model's trace
 * tree: a model node's tree node is its parent's, extended by the node's
 * own frames (outermost first), so the whole tree costs one step per model
 * node and frame, never one per trace and depth. Node ids grow from the
 * root down: a parent's id is always below its children's. Bottom-up is
 * built on demand, one node's callers at a time, from the top-down tree:
 * each node not yet expanded keeps the top-down nodes it stands for. */
#define _GNU_SOURCE
#include "calltree.h"

#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "util.h"

/* One orientation: nodes, the (parent, function) -> child table used
 * while building, and the children lists. */
struct tree {
    struct calltree_node *n;
    uint32_t count;
    size_t cap;
    struct idmap map; /* (parent, function) -> node */
    uint32_t *first; /* per node: index into kids */
    uint32_t *nkids;
    uint32_t *kids;
    /* Per node, for the bottom-up nodes made from it: a node merges every
     * frame of its function on its path, so its own frame (the first
     * merged) may be a line that one stack passes through and another
     * does not. `via`: the parent's frame at the call that made this node
     * (the line a bottom-up caller node shows); `site`: the innermost
     * frame of a stack ending here (the line a bottom-up site shows). */
    const struct sym_frame **via, **site;
    size_t via_cap, site_cap;
};

/* A top-down node a bottom-up node stands for: the stacks of the sites
 * merged into `v` all reach `pos` on this node's path (`pos` is of the
 * node's function); `site` is the smallest top-down id among those sites,
 * which orders children as building the whole tree at once would. */
struct bu_entry {
    uint32_t pos, site;
    struct cost_vec v;
};

/* A bottom-up node and what it needs to be expanded. Nodes live in chunks
 * that never move, so calltree_node() pointers stay valid while more
 * nodes are built. */
struct bu_node {
    struct calltree_node n;
    struct bu_entry *e; /* until expanded; NULL afterwards */
    uint32_t ne;
    uint32_t *kids; /* once expanded */
    uint32_t nkids;
    uint8_t expanded;
    uint8_t has_kids; /* some stack continues above this node */
};

#define BU_CHUNK 4096

struct bottom_up {
    struct bu_node **chunk;
    size_t nchunks, chunk_cap;
    uint32_t count;
};

struct calltree {
    struct frames *fr;
    struct tree tr[1]; /* top-down */
    struct bottom_up bu;
    struct calltree_func *funcs;
    uint32_t nfuncs;
    size_t fcap;
    uint32_t *forder;
    char **fkeys; /* per function: name and source file, while building */
    size_t fkeys_cap;
    struct idmap fmap; /* key -> function */
    /* The whole bottom-up tree costs allocation sites x depth (a chain of
     * 20,000 nodes, each a site, made 20 million nodes and 2.3 GB), so a
     * node's callers are found when they are first asked for. The latest
     * calltree_sort() is applied to each new children list. */
    int sorted;
    enum cost_type sort_c;
};

/* ---- one orientation ---- */

static uint64_t child_hash(uint32_t parent, uint32_t func)
{
    return idmap_mix((uint64_t)parent << 32 | func);
}

static uint64_t node_rehash(const void *ctx, uint32_t i)
{
    const struct calltree_node *nd = &((const struct tree *)ctx)->n[i];
    return child_hash(nd->parent, nd->func);
}

struct child_key {
    const struct calltree_node *n;
    uint32_t parent, func;
};

static int child_same(const void *ctx, uint32_t i)
{
    const struct child_key *k = ctx;
    return k->n[i].parent == k->parent && k->n[i].func == k->func;
}

static uint32_t tree_add(struct tree *tr, uint32_t parent, uint32_t func, const struct sym_frame *frame)
{
    xgrow((void **)&tr->n, &tr->cap, (size_t)tr->count + 1, sizeof *tr->n);
    struct calltree_node *nd = &tr->n[tr->count];
    memset(nd, 0, sizeof *nd);
    nd->parent = parent;
    nd->func = func;
    nd->frame = frame;
    nd->depth = parent == CALLTREE_NONE ? 0 : tr->n[parent].depth + 1;
    xgrow((void **)&tr->via, &tr->via_cap, (size_t)tr->count + 1, sizeof *tr->via);
    xgrow((void **)&tr->site, &tr->site_cap, (size_t)tr->count + 1, sizeof *tr->site);
    tr->via[tr->count] = NULL;
    tr->site[tr->count] = NULL;
    return tr->count++;
}

/* The child of `parent` for function `func`, made when missing. */
static uint32_t tree_child(struct tree *tr, uint32_t parent, uint32_t func, const struct sym_frame *frame)
{
    idmap_reserve(&tr->map, (size_t)tr->count + 1, node_rehash, tr);
    struct child_key k = {tr->n, parent, func};
    size_t slot;
    uint32_t id = idmap_find(&tr->map, child_hash(parent, func), child_same, &k, &slot);
    if (id != IDMAP_NONE) {
        return id;
    }
    id = tree_add(tr, parent, func, frame);
    idmap_put(&tr->map, slot, id);
    return id;
}

/* Children lists from the parent links, in creation order. */
static void tree_link(struct tree *tr)
{
    tr->first = xcalloc((size_t)tr->count + 1, sizeof *tr->first);
    tr->nkids = xcalloc((size_t)tr->count + 1, sizeof *tr->nkids);
    tr->kids = xmalloc(((size_t)tr->count + 1) * sizeof *tr->kids);
    for (uint32_t i = 1; i < tr->count; i++) {
        tr->nkids[tr->n[i].parent]++;
    }
    uint32_t at = 0;
    for (uint32_t i = 0; i < tr->count; i++) {
        tr->first[i] = at;
        at += tr->nkids[i];
        tr->nkids[i] = 0;
    }
    for (uint32_t i = 1; i < tr->count; i++) {
        uint32_t p = tr->n[i].parent;
        tr->kids[tr->first[p] + tr->nkids[p]++] = i;
    }
    idmap_release(&tr->map);
}

static void tree_release(struct tree *tr)
{
    free(tr->n);
    idmap_release(&tr->map);
    free(tr->first);
    free(tr->nkids);
    free(tr->kids);
    free(tr->via);
    free(tr->site);
}

/* ---- functions ---- */

static uint64_t func_rehash(const void *ctx, uint32_t i)
{
    return idmap_hash_str(((const struct calltree *)ctx)->fkeys[i]);
}

struct func_key {
    char *const *keys;
    const char *key;
};

static int func_same(const void *ctx, uint32_t i)
{
    const struct func_key *k = ctx;
    return strcmp(k->keys[i], k->key) == 0;
}

/* The function of a frame: same name and same source file are one
 * function; an unknown one is its module and offset. */
static uint32_t func_of(struct calltree *t, const struct sym_frame *fr)
{
    char *name = frames_name_dup(fr); /* C++ names can be thousands of characters */
    const char *file = fr->function && fr->file ? fr->file : "";
    size_t nl = strlen(name), fl = strlen(file);
    char *key = xmalloc(nl + fl + 2);
    memcpy(key, name, nl);
    key[nl] = '\x1f';
    memcpy(key + nl + 1, file, fl + 1);
    idmap_reserve(&t->fmap, (size_t)t->nfuncs + 1, func_rehash, t);
    struct func_key k = {t->fkeys, key};
    size_t slot;
    uint32_t i = idmap_find(&t->fmap, idmap_hash_str(key), func_same, &k, &slot);
    if (i != IDMAP_NONE) {
        free(key);
        free(name);
        return i;
    }
    xgrow((void **)&t->funcs, &t->fcap, (size_t)t->nfuncs + 1, sizeof *t->funcs);
    xgrow((void **)&t->fkeys, &t->fkeys_cap, (size_t)t->nfuncs + 1, sizeof *t->fkeys);
    struct calltree_func *f = &t->funcs[t->nfuncs];
    memset(f, 0, sizeof *f);
    f->name = name;
    f->frame = fr;
    t->fkeys[t->nfuncs] = key;
    idmap_put(&t->fmap, slot, t->nfuncs);
    return t->nfuncs++;
}

/* Inclusive cost per function, each stack counted once: a depth-first
 * walk of the top-down tree adds a node's inclusive cost to its function
 * only when no ancestor is the same function (`active` counts them). */
static void func_inclusive(struct calltree *t)
{
    const struct tree *tr = &t->tr[CALLTREE_TOP_DOWN];
    uint32_t *active = xcalloc((size_t)t->nfuncs + 1, sizeof *active);
    uint32_t *stack = xmalloc(((size_t)tr->count + 1) * sizeof *stack);
    uint32_t *next = xcalloc((size_t)tr->count + 1, sizeof *next); /* next child to visit */
    size_t sp = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        uint32_t id = stack[sp - 1];
        if (next[id] == 0 && id != 0) {
            const struct calltree_node *nd = &tr->n[id];
            if (active[nd->func]++ == 0) {
                cost_add(&t->funcs[nd->func].incl, &nd->incl);
            }
            cost_add(&t->funcs[nd->func].self, &nd->self);
        }
        if (next[id] < tr->nkids[id]) {
            stack[sp++] = tr->kids[tr->first[id] + next[id]++];
            continue;
        }
        if (id != 0) {
            active[tr->n[id].func]--;
        }
        sp--;
    }
    free(active);
    free(stack);
    free(next);
}

/* ---- building ---- */

static void build_top_down(struct calltree *t, const struct accounting *a, const struct growth *g)
{
    const struct model *m = frames_model(t->fr);
    struct tree *tr = &t->tr[CALLTREE_TOP_DOWN];
    uint32_t nn = m->nnodes;
    tree_add(tr, CALLTREE_NONE, CALLTREE_NONE, NULL);
    uint32_t ntraces = accounting_ntraces(a);
    /* Each model node on a stack with a cost gets its tree node once: the
     * walk up from a trace stops at a node already placed, or at main(),
     * so the C library's frames above main() are never even symbolized
     * (libc's debug file alone can cost libdw 10 MiB). */
    uint32_t *map = xmalloc(((size_t)nn + 1) * sizeof *map);
    uint32_t *path = xmalloc(((size_t)nn + 1) * sizeof *path);
    for (uint32_t x = 0; x <= nn; x++) {
        map[x] = CALLTREE_NONE;
    }
    map[0] = 0;
    for (uint32_t tid = 1; tid < ntraces && tid < nn; tid++) {
        struct cost_vec v;
        cost_of_trace_in(a, g, tid, &v);
        if (!cost_any(&v) || map[tid] != CALLTREE_NONE) {
            continue;
        }
        size_t np = 0;
        uint32_t base = 0;
        const struct sym_frame *above = NULL; /* the frame the path goes on from */
        for (uint32_t x = tid;;) {
            if (map[x] != CALLTREE_NONE) {
                base = map[x];
                uint32_t k;
                const struct sym_frame *fr = x ? frames_of_node(t->fr, x, &k) : NULL;
                above = fr && k ? &fr[0] : NULL;
                break;
            }
            path[np++] = x;
            if (frames_node_is_main(t->fr, x)) {
                break; /* base stays the root */
            }
            uint32_t p = m->nodes[x].parent;
            x = p < x ? p : 0;
        }
        while (np-- > 0) {
            uint32_t x = path[np], k;
            const struct sym_frame *fr = frames_of_node(t->fr, x, &k);
            for (uint32_t i = k; i-- > 0;) {
                uint32_t made = tr->count;
                base = tree_child(tr, base, func_of(t, &fr[i]), &fr[i]);
                if (base == made) {
                    tr->via[base] = above;
                }
                above = &fr[i];
            }
            map[x] = base;
        }
    }
    for (uint32_t tid = 0; tid < ntraces; tid++) {
        struct cost_vec v;
        cost_of_trace_in(a, g, tid, &v);
        if (!cost_any(&v)) {
            continue;
        }
        uint32_t at = tid < nn && map[tid] != CALLTREE_NONE ? map[tid] : 0;
        cost_add(&tr->n[at].self, &v);
        if (at && !tr->site[at]) {
            uint32_t k;
            const struct sym_frame *fr = frames_of_node(t->fr, tid, &k);
            tr->site[at] = k ? &fr[0] : NULL;
        }
    }
    free(map);
    free(path);
    /* Parents come before their children: one backward sweep sums. */
    for (uint32_t i = 0; i < tr->count; i++) {
        tr->n[i].incl = tr->n[i].self;
    }
    for (uint32_t i = tr->count; i-- > 1;) {
        cost_add(&tr->n[tr->n[i].parent].incl, &tr->n[i].incl);
    }
    tree_link(tr);
}

/* ---- bottom-up, built on demand ---- */

static struct bu_node *bu_at(const struct bottom_up *bu, uint32_t id)
{
    return &bu->chunk[id / BU_CHUNK][id % BU_CHUNK];
}

static uint32_t bu_add(struct bottom_up *bu, uint32_t parent, uint32_t func, const struct sym_frame *frame)
{
    if (bu->count % BU_CHUNK == 0) {
        xgrow((void **)&bu->chunk, &bu->chunk_cap, bu->nchunks + 1, sizeof *bu->chunk);
        /* malloc, not calloc: only the pages of nodes made are touched. */
        bu->chunk[bu->nchunks++] = xmalloc(BU_CHUNK * sizeof **bu->chunk);
    }
    struct bu_node *b = bu_at(bu, bu->count);
    memset(b, 0, sizeof *b);
    b->n.parent = parent;
    b->n.func = func;
    b->n.frame = frame;
    b->n.depth = parent == CALLTREE_NONE ? 0 : bu_at(bu, parent)->n.depth + 1;
    return bu->count++;
}

static void bu_release(struct bottom_up *bu)
{
    for (uint32_t i = 0; i < bu->count; i++) {
        struct bu_node *b = bu_at(bu, i);
        free(b->e);
        free(b->kids);
    }
    for (size_t c = 0; c < bu->nchunks; c++) {
        free(bu->chunk[c]);
    }
    free(bu->chunk);
}

/* One stack's way up, while children are made: `pos` is the top-down
 * node the child stands for. */
struct bu_item {
    uint32_t func, pos, site;
    const struct sym_frame *frame; /* its frame on this stack (tree.via, tree.site) */
    struct cost_vec v;
};

static int by_func_pos(const void *pa, const void *pb)
{
    const struct bu_item *a = pa, *b = pb;
    if (a->func != b->func) {
        return a->func < b->func ? -1 : 1;
    }
    if (a->pos != b->pos) {
        return a->pos < b->pos ? -1 : 1;
    }
    return a->site < b->site ? -1 : (a->site > b->site ? 1 : 0);
}

/* A group of items of one function: one child. */
struct bu_group {
    uint32_t from, to, site;
};

static int by_site(const void *pa, const void *pb)
{
    const struct bu_group *a = pa, *b = pb;
    return a->site < b->site ? -1 : (a->site > b->site ? 1 : 0);
}

static void sort_bu_kids(const struct calltree *t, struct bu_node *b, enum cost_type c);

/* The children of bottom-up node `id` from `items` (sorted here): one
 * child per function, in the order of their smallest site (the order in
 * which building every stack's path at once made them); items of one
 * top-down node merge into one entry, since their paths go on together.
 * O(items log items). */
static void bu_make_children(struct calltree *t, uint32_t id, struct bu_item *items, uint32_t n)
{
    const struct tree *td = &t->tr[CALLTREE_TOP_DOWN];
    struct bottom_up *bu = &t->bu;
    qsort(items, n, sizeof *items, by_func_pos);
    struct bu_group *g = xmalloc(((size_t)n + 1) * sizeof *g);
    uint32_t ng = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (i == 0 || items[i].func != items[i - 1].func) {
            g[ng].from = i;
            g[ng].site = items[i].site;
            ng++;
        }
        g[ng - 1].to = i + 1;
        if (items[i].site < g[ng - 1].site) {
            g[ng - 1].site = items[i].site;
        }
    }
    qsort(g, ng, sizeof *g, by_site);
    uint32_t *kids = xmalloc(((size_t)ng + 1) * sizeof *kids);
    uint32_t depth = bu_at(bu, id)->n.depth + 1;
    for (uint32_t k = 0; k < ng; k++) {
        /* The frame of the first site's stack: a line that stack passes through. */
        uint32_t first = g[k].from;
        for (uint32_t i = g[k].from; i < g[k].to; i++) {
            if (items[i].site == g[k].site) {
                first = i;
                break;
            }
        }
        uint32_t c = bu_add(bu, id, items[first].func, items[first].frame);
        struct bu_node *b = bu_at(bu, c);
        kids[k] = c;
        struct bu_entry *e = xmalloc((size_t)(g[k].to - g[k].from) * sizeof *e);
        uint32_t ne = 0;
        for (uint32_t i = g[k].from; i < g[k].to; i++) {
            cost_add(&b->n.incl, &items[i].v);
            int ends = td->n[items[i].pos].parent == 0 || depth >= CALLTREE_MAX_DEPTH;
            if (ends) {
                cost_add(&b->n.self, &items[i].v);
                continue;
            }
            b->has_kids = 1;
            if (ne > 0 && e[ne - 1].pos == items[i].pos) {
                cost_add(&e[ne - 1].v, &items[i].v); /* sorted by site: the first keeps the smallest */
                continue;
            }
            e[ne].pos = items[i].pos;
            e[ne].site = items[i].site;
            e[ne].v = items[i].v;
            ne++;
        }
        if (ne == 0) {
            free(e);
            e = NULL;
        }
        b->e = e;
        b->ne = ne;
    }
    free(g);
    struct bu_node *p = bu_at(bu, id);
    p->kids = kids;
    p->nkids = ng;
    p->expanded = 1;
    if (t->sorted) {
        sort_bu_kids(t, p, t->sort_c);
    }
}

/* The root's children: every top-down node with a cost of its own is a
 * stack's innermost frame, its site. O(top-down nodes). */
static void bu_expand_root(struct calltree *t)
{
    const struct tree *td = &t->tr[CALLTREE_TOP_DOWN];
    struct bu_item *items = xmalloc(((size_t)td->count + 1) * sizeof *items);
    uint32_t n = 0;
    for (uint32_t id = 1; id < td->count; id++) {
        if (!cost_any(&td->n[id].self)) {
            continue;
        }
        items[n].func = td->n[id].func;
        items[n].pos = id;
        items[n].site = id;
        items[n].frame = td->site[id] ? td->site[id] : td->n[id].frame;
        items[n].v = td->n[id].self;
        n++;
    }
    bu_make_children(t, 0, items, n);
    free(items);
}

/* Node `id`'s callers: each entry moves one frame up its top-down path.
 * O(entries log entries); the entries are freed (the children hold them
 * now). */
static void bu_expand(struct calltree *t, uint32_t id)
{
    struct bu_node *b = bu_at(&t->bu, id);
    if (b->expanded) {
        return;
    }
    if (id == 0) {
        bu_expand_root(t);
        return;
    }
    const struct tree *td = &t->tr[CALLTREE_TOP_DOWN];
    struct bu_item *items = xmalloc(((size_t)b->ne + 1) * sizeof *items);
    for (uint32_t i = 0; i < b->ne; i++) {
        uint32_t up = td->n[b->e[i].pos].parent;
        items[i].func = td->n[up].func;
        items[i].pos = up;
        items[i].site = b->e[i].site;
        items[i].frame = td->via[b->e[i].pos] ? td->via[b->e[i].pos] : td->n[up].frame;
        items[i].v = b->e[i].v;
    }
    uint32_t n = b->ne;
    free(b->e);
    b->e = NULL;
    b->ne = 0;
    bu_make_children(t, id, items, n);
    free(items);
}

/* The root: the total of every stack; its self, the costs without one. */
static void bu_init(struct calltree *t)
{
    const struct tree *td = &t->tr[CALLTREE_TOP_DOWN];
    uint32_t root = bu_add(&t->bu, CALLTREE_NONE, CALLTREE_NONE, NULL);
    struct bu_node *b = bu_at(&t->bu, root);
    b->n.self = td->n[0].self;
    for (uint32_t id = 0; id < td->count; id++) {
        cost_add(&b->n.incl, &td->n[id].self);
    }
    b->has_kids = td->count > 1;
}

struct calltree *calltree_build(struct frames *fr, const struct accounting *a)
{
    return calltree_build_growth(fr, a, NULL);
}

struct calltree *calltree_build_growth(struct frames *fr, const struct accounting *a, const struct growth *g)
{
    struct calltree *t = xcalloc(1, sizeof *t);
    t->fr = fr;
    build_top_down(t, a, g);
    func_inclusive(t);
    bu_init(t);
    t->forder = xmalloc(((size_t)t->nfuncs + 1) * sizeof *t->forder);
    for (uint32_t i = 0; i < t->nfuncs; i++) {
        t->forder[i] = i;
    }
    for (uint32_t i = 0; i < t->nfuncs; i++) {
        free(t->fkeys[i]);
    }
    free(t->fkeys);
    t->fkeys = NULL;
    idmap_release(&t->fmap);
    return t;
}

void calltree_free(struct calltree *t)
{
    if (!t) {
        return;
    }
    tree_release(&t->tr[0]);
    bu_release(&t->bu);
    for (uint32_t i = 0; i < t->nfuncs; i++) {
        free((char *)t->funcs[i].name);
    }
    free(t->funcs);
    free(t->forder);
    free(t);
}

/* ---- reading and sorting ---- */

/* Expanding a bottom-up node changes what is cached, not what the tree
 * says, so the readers take the tree as const and cast here (the tools
 * are single-threaded). */
static struct calltree *mut(const struct calltree *t)
{
    return (struct calltree *)t;
}

uint32_t calltree_size(const struct calltree *t, enum calltree_orient o)
{
    if (o != CALLTREE_BOTTOM_UP) {
        return t->tr[CALLTREE_TOP_DOWN].count;
    }
    /* Every node: expand each in turn (new ones are appended). */
    for (uint32_t id = 0; id < t->bu.count; id++) {
        bu_expand(mut(t), id);
    }
    return t->bu.count;
}

uint32_t calltree_built(const struct calltree *t, enum calltree_orient o)
{
    return o == CALLTREE_BOTTOM_UP ? t->bu.count : t->tr[CALLTREE_TOP_DOWN].count;
}

const struct calltree_node *calltree_node(const struct calltree *t, enum calltree_orient o, uint32_t id)
{
    if (o == CALLTREE_BOTTOM_UP) {
        return id < t->bu.count ? &bu_at(&t->bu, id)->n : NULL;
    }
    const struct tree *tr = &t->tr[CALLTREE_TOP_DOWN];
    return id < tr->count ? &tr->n[id] : NULL;
}

const uint32_t *calltree_children(const struct calltree *t, enum calltree_orient o, uint32_t id, uint32_t *n)
{
    *n = 0;
    if (o == CALLTREE_BOTTOM_UP) {
        if (id >= t->bu.count) {
            return NULL;
        }
        bu_expand(mut(t), id);
        const struct bu_node *b = bu_at(&t->bu, id);
        *n = b->nkids;
        return b->nkids ? b->kids : NULL;
    }
    const struct tree *tr = &t->tr[CALLTREE_TOP_DOWN];
    if (id >= tr->count || tr->nkids[id] == 0) {
        return NULL;
    }
    *n = tr->nkids[id];
    return tr->kids + tr->first[id];
}

int calltree_has_children(const struct calltree *t, enum calltree_orient o, uint32_t id)
{
    if (o == CALLTREE_BOTTOM_UP) {
        if (id >= t->bu.count) {
            return 0;
        }
        const struct bu_node *b = bu_at(&t->bu, id);
        return b->expanded ? b->nkids > 0 : b->has_kids;
    }
    const struct tree *tr = &t->tr[CALLTREE_TOP_DOWN];
    return id < tr->count && tr->nkids[id] > 0;
}

int calltree_expanded(const struct calltree *t, enum calltree_orient o, uint32_t id)
{
    if (o == CALLTREE_BOTTOM_UP) {
        return id < t->bu.count && bu_at(&t->bu, id)->expanded;
    }
    return id < t->tr[CALLTREE_TOP_DOWN].count;
}

uint32_t calltree_nfuncs(const struct calltree *t)
{
    return t->nfuncs;
}

const struct calltree_func *calltree_func(const struct calltree *t, uint32_t i)
{
    return i < t->nfuncs ? &t->funcs[i] : NULL;
}

const uint32_t *calltree_func_order(const struct calltree *t, uint32_t *n)
{
    *n = t->nfuncs;
    return t->forder;
}

const char *calltree_name(const struct calltree *t, enum calltree_orient o, uint32_t id)
{
    const struct calltree_node *nd = calltree_node(t, o, id);
    if (!nd || nd->func == CALLTREE_NONE) {
        return "[root]";
    }
    return t->funcs[nd->func].name;
}

struct sort_ctx {
    const struct calltree *t;
    const struct calltree_node *nodes;
    enum cost_type c;
    int by_self;
};

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
    return a > b ? -1 : (a < b ? 1 : 0);
}

static int by_node_cost(const void *pa, const void *pb, void *arg)
{
    const struct sort_ctx *s = arg;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    int r = cmp_u64_desc(s->nodes[a].incl.v[s->c], s->nodes[b].incl.v[s->c]);
    if (r == 0) {
        r = strcmp(s->t->funcs[s->nodes[a].func].name, s->t->funcs[s->nodes[b].func].name);
    }
    if (r == 0) {
        r = a < b ? -1 : (a > b ? 1 : 0);
    }
    return r;
}

static int by_func_cost(const void *pa, const void *pb, void *arg)
{
    const struct sort_ctx *s = arg;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    const struct calltree_func *fa = &s->t->funcs[a], *fb = &s->t->funcs[b];
    int r = s->by_self ? cmp_u64_desc(fa->self.v[s->c], fb->self.v[s->c])
                       : cmp_u64_desc(fa->incl.v[s->c], fb->incl.v[s->c]);
    if (r == 0) {
        r = strcmp(fa->name, fb->name);
    }
    if (r == 0) {
        r = a < b ? -1 : (a > b ? 1 : 0);
    }
    return r;
}

static void sort_tree(const struct calltree *t, struct tree *tr, enum cost_type c)
{
    struct sort_ctx s = {t, tr->n, c, 0};
    for (uint32_t i = 0; i < tr->count; i++) {
        if (tr->nkids[i] > 1) {
            qsort_r(tr->kids + tr->first[i], tr->nkids[i], sizeof *tr->kids, by_node_cost, &s);
        }
    }
}

static int by_bu_cost(const void *pa, const void *pb, void *arg)
{
    const struct sort_ctx *s = arg;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    const struct calltree_node *na = &bu_at(&s->t->bu, a)->n, *nb = &bu_at(&s->t->bu, b)->n;
    int r = cmp_u64_desc(na->incl.v[s->c], nb->incl.v[s->c]);
    if (r == 0) {
        r = strcmp(s->t->funcs[na->func].name, s->t->funcs[nb->func].name);
    }
    if (r == 0) {
        r = a < b ? -1 : (a > b ? 1 : 0);
    }
    return r;
}

static void sort_bu_kids(const struct calltree *t, struct bu_node *b, enum cost_type c)
{
    struct sort_ctx s = {t, NULL, c, 0};
    if (b->nkids > 1) {
        qsort_r(b->kids, b->nkids, sizeof *b->kids, by_bu_cost, &s);
    }
}

void calltree_sort(struct calltree *t, enum cost_type c, int by_self)
{
    if ((unsigned)c >= COST_NTYPES) {
        return;
    }
    t->sorted = 1;
    t->sort_c = c;
    sort_tree(t, &t->tr[CALLTREE_TOP_DOWN], c);
    for (uint32_t i = 0; i < t->bu.count; i++) {
        sort_bu_kids(t, bu_at(&t->bu, i), c);
    }
    struct sort_ctx s = {t, NULL, c, by_self};
    qsort_r(t->forder, t->nfuncs, sizeof *t->forder, by_func_cost, &s);
}

/* ---- callers and callees of a function ---- */

/* The neighbour a top-down node stands for, or CALLTREE_NONE: for callers,
 * the parent's function of a node of `f`; for callees, the function of a
 * node whose parent is of `f`. */
static uint32_t edge_neighbour(const struct tree *tr, uint32_t id, uint32_t f, enum calltree_link_kind kind)
{
    if (id == 0) {
        return CALLTREE_NONE;
    }
    const struct calltree_node *nd = &tr->n[id];
    if (nd->parent == 0) {
        return CALLTREE_NONE;
    }
    uint32_t pf = tr->n[nd->parent].func;
    if (kind == CALLTREE_CALLERS) {
        return nd->func == f ? pf : CALLTREE_NONE;
    }
    return pf == f ? nd->func : CALLTREE_NONE;
}

/* Adds the cost of the stacks through each edge between `f` and a
 * neighbour, each stack once: a depth-first walk of the top-down tree
 * counts, per neighbour, the edges of that kind open on the current path
 * (`open`), and adds a node's inclusive cost only when none is. */
uint32_t calltree_func_links(const struct calltree *t, uint32_t f, enum calltree_link_kind kind,
                             struct calltree_link **out)
{
    *out = NULL;
    if (f >= t->nfuncs) {
        return 0;
    }
    const struct tree *tr = &t->tr[CALLTREE_TOP_DOWN];
    uint32_t *open = xcalloc((size_t)t->nfuncs + 1, sizeof *open);
    uint32_t *slot = xmalloc(((size_t)t->nfuncs + 1) * sizeof *slot); /* neighbour -> index in *out */
    memset(slot, 0xff, ((size_t)t->nfuncs + 1) * sizeof *slot);
    uint32_t *stack = xmalloc(((size_t)tr->count + 1) * sizeof *stack);
    uint32_t *next = xcalloc((size_t)tr->count + 1, sizeof *next);
    struct calltree_link *links = NULL;
    size_t cap = 0;
    uint32_t n = 0;
    size_t sp = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        uint32_t id = stack[sp - 1];
        uint32_t nb = edge_neighbour(tr, id, f, kind);
        if (next[id] == 0 && nb != CALLTREE_NONE) {
            if (open[nb]++ == 0) {
                if (slot[nb] == UINT32_MAX) {
                    xgrow((void **)&links, &cap, (size_t)n + 1, sizeof *links);
                    memset(&links[n], 0, sizeof links[n]);
                    links[n].func = nb;
                    slot[nb] = n++;
                }
                cost_add(&links[slot[nb]].incl, &tr->n[id].incl);
            }
        }
        if (next[id] < tr->nkids[id]) {
            stack[sp++] = tr->kids[tr->first[id] + next[id]++];
            continue;
        }
        if (nb != CALLTREE_NONE) {
            open[nb]--;
        }
        sp--;
    }
    free(open);
    free(slot);
    free(stack);
    free(next);
    *out = links;
    return n;
}
