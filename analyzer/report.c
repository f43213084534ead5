// SPDX-License-Identifier: MIT
/* Builds the ranked reports (report.h): every trace with a cost is turned
 * into its symbolized frames, traces whose frames read the same are merged,
 * and each section ranks the merged stacks by its cost. Text output here;
 * JSON in json.c. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "idmap.h"
#include "names.h"
#include "packframes.h"
#include "rssgap.h"
#include "symfiles.h"
#include "util.h"

#define MAX_INLINE 16

/* How stacks are built, and why so: a trace's stack is the path from its
 * node to the root (cut after main()), and stacks whose frames read the
 * same are one entry. Building each trace's frames and a key string from
 * them costs depth x traces: a chain of 20,000 nodes with an allocation at
 * each would take gigabytes. Instead every node gets a *path id*, hash-
 * consed from its parent's path id and its own frames, so two nodes have
 * the same path id exactly when their stacks read the same, and each node
 * costs O(its own frames) once. Frames are made only for the stacks that
 * are printed (report_frames()), by walking the path. */

/* ---- per-node frames, computed once ---- */

/* A frame as integers, for comparing: interned strings (function, file) and
 * line, or module and offset for a frame without a name. */
struct fkey {
    uint32_t a, b;
    uint64_t c;
};

/* The frames of one (module, address): a node's frames depend on nothing
 * else, and a deep tree has millions of nodes over a few thousand
 * addresses, so each address is looked up and kept once. */
struct node_frames {
    uint32_t first; /* index into the frame pool */
    uint16_t count;
    uint8_t is_main; /* its outermost frame is main(): the stack stops there */
    uint64_t hash; /* of its fkeys */
    int32_t module; /* the address it stands for */
    uint64_t ip;
};

/* A path: a node's frames after its parent's path. */
struct path {
    uint32_t parent; /* path id, 0 = empty */
    uint32_t node; /* a node whose own frames are this path's first ones */
    uint32_t depth; /* frames in the whole path */
    uint32_t omitted; /* gap markers in the whole path */
};

struct report_index {
    uint32_t *nf_of; /* per node: 1 + index into nf; 0 = not looked up yet */
    struct node_frames *nf; /* per distinct (module, address) */
    size_t nnf, nf_cap;
    struct idmap nf_map; /* (module, address) -> index into nf */
    uint32_t *path_of; /* per node: its path id, 0 = not computed yet */
    struct sym_frame *pool;
    struct fkey *keys; /* parallel to pool */
    size_t npool, pool_cap;
    struct path *paths; /* [0] = the empty path */
    size_t npaths, paths_cap;
    struct idmap path_map; /* (parent path, node's frames) -> path id */
    const char **strs; /* string id -> a string with that content; [0] unused */
    size_t nstrs, strs_cap;
    struct idmap str_map; /* content -> string id */
    const char **ptrs; /* string addresses seen, with their string ids */
    uint32_t *ptr_ids;
    size_t nptrs, ptrs_cap, ptr_ids_cap;
    struct idmap ptr_map; /* address -> index into ptrs */
    uint32_t *walk; /* scratch: nodes of a path being built */
    size_t walk_cap;
    struct symfiles *files; /* each file registered with the symbolizer once */
};

static uint64_t str_rehash(const void *ctx, uint32_t i)
{
    const struct report_index *ix = ctx;
    return idmap_hash_str(ix->strs[i]);
}

struct str_key {
    const struct report_index *ix;
    const char *s;
};

static int same_str(const void *ctx, uint32_t i)
{
    const struct str_key *k = ctx;
    return strcmp(k->ix->strs[i], k->s) == 0;
}

static uint64_t ptr_rehash(const void *ctx, uint32_t i)
{
    const struct report_index *ix = ctx;
    return idmap_mix((uint64_t)(uintptr_t)ix->ptrs[i]);
}

static int same_ptr(const void *ctx, uint32_t i)
{
    const struct str_key *k = ctx;
    return k->ix->ptrs[i] == k->s;
}

/* An id per string content (0 = NULL). Strings are the symbolizer's, which
 * hands out the same address for the same string most of the time: the
 * content is hashed once per address. */
static uint32_t intern(struct report_index *ix, const char *s)
{
    if (!s) {
        return 0;
    }
    struct str_key key = {ix, s};
    size_t pslot;
    idmap_reserve(&ix->ptr_map, ix->nptrs + 1, ptr_rehash, ix);
    uint32_t pi = idmap_find(&ix->ptr_map, idmap_mix((uint64_t)(uintptr_t)s), same_ptr, &key, &pslot);
    if (pi != IDMAP_NONE) {
        return ix->ptr_ids[pi];
    }
    if (!ix->strs) {
        xgrow((void **)&ix->strs, &ix->strs_cap, 1, sizeof *ix->strs);
        ix->nstrs = 1; /* id 0 is NULL */
    }
    size_t sslot;
    idmap_reserve(&ix->str_map, ix->nstrs + 1, str_rehash, ix);
    uint32_t id = idmap_find(&ix->str_map, idmap_hash_str(s), same_str, &key, &sslot);
    if (id == IDMAP_NONE) {
        xgrow((void **)&ix->strs, &ix->strs_cap, ix->nstrs + 1, sizeof *ix->strs);
        id = (uint32_t)ix->nstrs++;
        ix->strs[id] = s;
        idmap_put(&ix->str_map, sslot, id);
    }
    /* The address map has not changed since its idmap_find(): pslot holds. */
    xgrow((void **)&ix->ptrs, &ix->ptrs_cap, ix->nptrs + 1, sizeof *ix->ptrs);
    xgrow((void **)&ix->ptr_ids, &ix->ptr_ids_cap, ix->nptrs + 1, sizeof *ix->ptr_ids);
    ix->ptrs[ix->nptrs] = s;
    ix->ptr_ids[ix->nptrs] = id;
    idmap_put(&ix->ptr_map, pslot, (uint32_t)ix->nptrs++);
    return id;
}

static uint64_t address_hash(int32_t module, uint64_t ip)
{
    return idmap_mix(ip ^ ((uint64_t)(uint32_t)module << 40) ^ (uint64_t)(uint32_t)module);
}

static uint64_t nf_rehash(const void *ctx, uint32_t i)
{
    const struct report_index *ix = ctx;
    return address_hash(ix->nf[i].module, ix->nf[i].ip);
}

struct address_key {
    const struct report_index *ix;
    int32_t module;
    uint64_t ip;
};

static int same_address(const void *ctx, uint32_t i)
{
    const struct address_key *k = ctx;
    return k->ix->nf[i].module == k->module && k->ix->nf[i].ip == k->ip;
}

static const struct node_frames *frames_of(struct report *r, uint32_t node)
{
    struct report_index *ix = r->ix;
    if (ix->nf_of[node]) {
        return &ix->nf[ix->nf_of[node] - 1];
    }
    const struct model *m = r->model;
    const struct model_node *n = &m->nodes[node];
    struct address_key key = {ix, n->module, n->ip};
    size_t slot;
    idmap_reserve(&ix->nf_map, ix->nnf + 1, nf_rehash, ix);
    uint32_t id = idmap_find(&ix->nf_map, address_hash(n->module, n->ip), same_address, &key, &slot);
    if (id != IDMAP_NONE) {
        ix->nf_of[node] = id + 1;
        return &ix->nf[id];
    }
    struct sym_frame tmp[MAX_INLINE];
    int k = 0;
    if (n->ip == 0) {
        /* The recorder's gap marker: keep its place in the stack. */
        memset(&tmp[0], 0, sizeof tmp[0]);
        k = 1;
    } else {
        k = symfiles_lookup(ix->files, node, tmp, MAX_INLINE);
    }
    xgrow((void **)&ix->nf, &ix->nf_cap, ix->nnf + 1, sizeof *ix->nf);
    id = (uint32_t)ix->nnf++;
    idmap_put(&ix->nf_map, slot, id);
    ix->nf_of[node] = id + 1;
    struct node_frames *nf = &ix->nf[id];
    nf->module = n->module;
    nf->ip = n->ip;
    size_t old_cap = ix->pool_cap;
    xgrow((void **)&ix->pool, &ix->pool_cap, ix->npool + (size_t)k, sizeof *ix->pool);
    if (ix->pool_cap != old_cap || !ix->keys) {
        ix->keys = xrealloc(ix->keys, ix->pool_cap * sizeof *ix->keys);
    }
    nf->first = (uint32_t)ix->npool;
    nf->count = (uint16_t)k;
    memcpy(ix->pool + ix->npool, tmp, sizeof tmp[0] * (size_t)k);
    uint64_t h = (uint64_t)k;
    for (int i = 0; i < k; i++) {
        struct fkey *fk = &ix->keys[ix->npool + (size_t)i];
        if (tmp[i].function) {
            fk->a = intern(ix, tmp[i].function);
            fk->b = intern(ix, tmp[i].file) | 0x80000000u;
            fk->c = (uint64_t)tmp[i].line << 1 | (tmp[i].inlined != 0);
        } else {
            fk->a = 0;
            fk->b = intern(ix, tmp[i].module);
            fk->c = tmp[i].module_offset;
        }
        h = idmap_mix(h ^ fk->a ^ ((uint64_t)fk->b << 32)) ^ fk->c;
    }
    nf->hash = idmap_mix(h);
    const struct sym_frame *last = &tmp[k - 1];
    nf->is_main = last->function && strcmp(last->function, "main") == 0;
    ix->npool += (size_t)k;
    return nf;
}

/* The frames of a node already looked up. */
static const struct node_frames *frames_known(const struct report_index *ix, uint32_t node)
{
    return &ix->nf[ix->nf_of[node] - 1];
}

static int same_frames(const struct report_index *ix, uint32_t x, uint32_t y)
{
    const struct node_frames *a = frames_known(ix, x), *b = frames_known(ix, y);
    if (a == b) {
        return 1;
    }
    if (a->count != b->count || a->hash != b->hash) {
        return 0;
    }
    for (uint32_t i = 0; i < a->count; i++) {
        const struct fkey *p = &ix->keys[a->first + i], *q = &ix->keys[b->first + i];
        if (p->a != q->a || p->b != q->b || p->c != q->c) {
            return 0;
        }
    }
    return 1;
}

static uint64_t path_hash(const struct report_index *ix, uint32_t parent, uint32_t node)
{
    return idmap_mix(frames_known(ix, node)->hash ^ ((uint64_t)parent * 0x9e3779b97f4a7c15ull));
}

static uint64_t path_rehash(const void *ctx, uint32_t i)
{
    const struct report_index *ix = ctx;
    return path_hash(ix, ix->paths[i].parent, ix->paths[i].node);
}

struct path_key {
    const struct report_index *ix;
    uint32_t parent, node;
};

static int same_path(const void *ctx, uint32_t i)
{
    const struct path_key *k = ctx;
    const struct path *p = &k->ix->paths[i];
    return p->parent == k->parent && same_frames(k->ix, p->node, k->node);
}

/* The path of `node`'s frames after path `parent`. */
static uint32_t path_intern(struct report *r, uint32_t parent, uint32_t node)
{
    struct report_index *ix = r->ix;
    const struct node_frames *nf = frames_of(r, node);
    struct path_key key = {ix, parent, node};
    size_t slot;
    idmap_reserve(&ix->path_map, ix->npaths + 1, path_rehash, ix);
    uint32_t id = idmap_find(&ix->path_map, path_hash(ix, parent, node), same_path, &key, &slot);
    if (id != IDMAP_NONE) {
        return id;
    }
    xgrow((void **)&ix->paths, &ix->paths_cap, ix->npaths + 1, sizeof *ix->paths);
    id = (uint32_t)ix->npaths++;
    struct path *p = &ix->paths[id];
    p->parent = parent;
    p->node = node;
    p->depth = ix->paths[parent].depth + nf->count;
    p->omitted = ix->paths[parent].omitted + (r->model->nodes[node].ip == 0);
    idmap_put(&ix->path_map, slot, id);
    return id;
}

/* The path id of a trace: its nodes up to the root or to main(), each
 * node's path made once. Iterative: chains are as deep as the file says. */
static uint32_t path_of(struct report *r, uint32_t trace)
{
    struct report_index *ix = r->ix;
    const struct model *m = r->model;
    size_t n = 0;
    uint32_t node = trace;
    uint32_t base = 0;
    while (node != 0) {
        if (ix->path_of[node]) {
            base = ix->path_of[node];
            break;
        }
        xgrow((void **)&ix->walk, &ix->walk_cap, n + 1, sizeof *ix->walk);
        ix->walk[n++] = node;
        if (m->nodes[node].ip != 0 && frames_of(r, node)->is_main) {
            break; /* frames outside main() are not shown: base stays empty */
        }
        node = m->nodes[node].parent;
    }
    while (n > 0) {
        uint32_t x = ix->walk[--n];
        base = path_intern(r, base, x);
        ix->path_of[x] = base;
    }
    return base;
}

static void index_free(struct report_index *ix)
{
    if (!ix) {
        return;
    }
    free(ix->nf_of);
    free(ix->nf);
    idmap_release(&ix->nf_map);
    free(ix->path_of);
    free(ix->pool);
    free(ix->keys);
    free(ix->paths);
    idmap_release(&ix->path_map);
    idmap_release(&ix->str_map);
    idmap_release(&ix->ptr_map);
    symfiles_free(ix->files);
    free(ix->strs);
    free(ix->ptrs);
    free(ix->ptr_ids);
    free(ix->walk);
    free(ix);
}

uint32_t report_frames(const struct report *r, const struct report_stack *st, struct sym_frame *out, uint32_t max)
{
    const struct report_index *ix = r->ix;
    uint32_t k = 0;
    for (uint32_t p = st->path; p != 0 && k < max; p = ix->paths[p].parent) {
        const struct node_frames *nf = frames_known(ix, ix->paths[p].node);
        for (uint32_t i = 0; i < nf->count && k < max; i++) {
            out[k++] = ix->pool[nf->first + i];
        }
    }
    return k;
}

struct report_stack report_stack_of_trace(struct report *r, uint32_t trace)
{
    struct report_stack st = {0};
    st.path = path_of(r, trace < r->model->nnodes ? trace : 0);
    st.nframes = r->ix->paths[st.path].depth;
    st.omitted = r->ix->paths[st.path].omitted;
    return st;
}

void report_print_json_frames(const struct report *r, const struct report_stack *st, FILE *f)
{
    fprintf(f, ", \"truncated\": %s, \"frames\": [", st->omitted ? "true" : "false");
    struct sym_frame *frames = xmalloc((st->nframes ? st->nframes : 1) * sizeof *frames);
    uint32_t nframes = report_frames(r, st, frames, st->nframes);
    for (uint32_t k = 0; k < nframes; k++) {
        const struct sym_frame *fr = &frames[k];
        fputs(k ? ", {\"function\": " : "{\"function\": ", f);
        esc_json_fputs(fr->function, f);
        fputs(", \"file\": ", f);
        esc_json_fputs(fr->file, f);
        fprintf(f, ", \"line\": %u, \"module\": ", fr->line);
        esc_json_fputs(fr->module, f);
        fprintf(f, ", \"offset\": %llu, \"inlined\": %s}", (unsigned long long)fr->module_offset,
                fr->inlined ? "true" : "false");
    }
    free(frames);
    fputs("]", f);
}

uint32_t report_npaths(const struct report *r)
{
    return (uint32_t)r->ix->npaths;
}

uint32_t report_path_step(const struct report *r, uint32_t p, const struct sym_frame **frames, uint32_t *n)
{
    const struct report_index *ix = r->ix;
    const struct node_frames *nf = frames_known(ix, ix->paths[p].node);
    *frames = &ix->pool[nf->first];
    *n = nf->count;
    return ix->paths[p].parent;
}

/* MOST MEMORY LEAKED's cost while ranking it by unreachable bytes
 * (report_rank_unreachable()). */
static int sort_unreachable;

uint64_t report_cost(const struct report_stack *st, enum report_section s)
{
    switch (s) {
    case REPORT_CALLS: return st->calls;
    case REPORT_PEAK: return st->peak;
    case REPORT_TEMPORARY: return st->temporary;
    case REPORT_LEAKED: return sort_unreachable ? st->unreachable : st->leaked;
    case REPORT_MAPPED: return st->mapped_peak;
    case REPORT_ALLOCATED: return st->allocated;
    case REPORT_TIME: return st->time_ns;
    case REPORT_GROWTH: return growth_cost_of_fit(&st->growth, st->grows);
    default: return 0;
    }
}

uint32_t report_stack_of(const struct report *r, uint32_t trace)
{
    return trace < r->ntraces && r->stack_of_trace[trace] ? r->stack_of_trace[trace] - 1 : UINT32_MAX;
}

/* Each stack's growth: the series of its traces summed (the fit of a sum
 * is not the sum of the fits' steadiness), then fitted. A stack of one
 * trace is fitted from the trace's own series; only stacks of several
 * get a sum, so the memory is GROWTH_POINTS per such stack, for the time
 * of the call. */
static void stacks_growth(struct report *r, const uint32_t *stack_of_trace, uint32_t ntraces)
{
    const struct growth *g = r->model->growth;
    uint32_t np = growth_npoints(g);
    if (r->nstacks == 0) {
        return;
    }
    uint32_t *one = xcalloc(r->nstacks, sizeof *one); /* a trace with a series, + 1 */
    uint32_t *sum_of = xcalloc(r->nstacks, sizeof *sum_of); /* index + 1 into sums when several */
    uint32_t nsums = 0;
    for (uint32_t t = 0; t < ntraces; t++) {
        uint64_t samples;
        if (stack_of_trace[t] == 0 || !growth_series(g, t, &samples)) {
            continue;
        }
        uint32_t i = stack_of_trace[t] - 1;
        r->stacks[i].growth_samples += samples;
        if (one[i] == 0) {
            one[i] = t + 1;
        } else if (sum_of[i] == 0) {
            sum_of[i] = ++nsums;
        }
    }
    double *sums = xcalloc((size_t)(nsums ? nsums : 1) * (np ? np : 1), sizeof *sums);
    for (uint32_t t = 0; t < ntraces && nsums; t++) {
        uint64_t samples;
        const double *y = stack_of_trace[t] ? growth_series(g, t, &samples) : NULL;
        uint32_t k = y ? sum_of[stack_of_trace[t] - 1] : 0;
        if (k == 0) {
            continue;
        }
        double *d = sums + (size_t)(k - 1) * np;
        for (uint32_t j = 0; j < np; j++) {
            d[j] += y[j];
        }
    }
    for (uint32_t i = 0; i < r->nstacks; i++) {
        struct report_stack *st = &r->stacks[i];
        if (one[i] == 0) {
            continue; /* no event in the pass (filtered out): no growth */
        }
        uint64_t samples;
        const double *y = sum_of[i] ? sums + (size_t)(sum_of[i] - 1) * np : growth_series(g, one[i] - 1, &samples);
        growth_fit_series(g, y, &st->growth);
        st->grows = growth_is_growth(g, &st->growth, st->growth_samples);
        if (growth_sampled(g) && st->growth_samples < GROWTH_MIN_SAMPLES && st->growth.rate > 0) {
            r->growth_undersampled++;
        }
    }
    free(sums);
    free(sum_of);
    free(one);
}

static const struct report_stack *sort_base;
static enum report_section sort_section;

static int by_cost(const void *a, const void *b)
{
    uint64_t ca = report_cost(&sort_base[*(const uint32_t *)a], sort_section);
    uint64_t cb = report_cost(&sort_base[*(const uint32_t *)b], sort_section);
    if (ca != cb) {
        return ca > cb ? -1 : 1;
    }
    /* Ties: by calls, then by index, so the output is deterministic. */
    uint64_t na = sort_base[*(const uint32_t *)a].calls, nb = sort_base[*(const uint32_t *)b].calls;
    if (na != nb) {
        return na > nb ? -1 : 1;
    }
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

struct report *report_new(const struct model *m)
{
    struct report *r = xcalloc(1, sizeof *r);
    r->model = m;
    r->sym = symbolize_new();
    if (!r->sym) {
        free(r);
        return NULL;
    }
    struct report_index *ix = xcalloc(1, sizeof *ix);
    r->ix = ix;
    size_t nn = m->nnodes ? m->nnodes : 1;
    ix->nf_of = xcalloc(nn, sizeof *ix->nf_of);
    ix->path_of = xcalloc(nn, sizeof *ix->path_of);
    ix->files = symfiles_new(m, r->sym);
    /* At most a path per node and the empty one: allocated whole and zeroed by calloc, so that
     * no doubling slack is touched. */
    ix->paths_cap = nn + 1;
    ix->paths = xcalloc(ix->paths_cap, sizeof *ix->paths);
    ix->npaths = 1; /* the empty path */
    size_t stack_of_cap = nn + 1;
    uint32_t *stack_of = xcalloc(stack_of_cap, sizeof *stack_of); /* path id -> stack index + 1 */
    size_t stacks_cap = 0;
    uint32_t ntraces = accounting_ntraces(m->acct);
    uint32_t *stack_of_trace = xcalloc(ntraces ? ntraces : 1, sizeof *stack_of_trace);
    for (uint32_t t = 0; t < ntraces; t++) {
        const struct acct_cost *c = accounting_cost(m->acct, t);
        if (!c || (c->calls == 0 && c->mapping_calls == 0)) {
            continue;
        }
        uint32_t p = path_of(r, t < m->nnodes ? t : 0);
        xgrow((void **)&stack_of, &stack_of_cap, ix->npaths, sizeof *stack_of);
        uint32_t idx = stack_of[p];
        if (idx == 0) {
            idx = r->nstacks++;
            stack_of[p] = idx + 1;
            xgrow((void **)&r->stacks, &stacks_cap, r->nstacks, sizeof *r->stacks);
            r->stacks[idx].path = p;
            r->stacks[idx].nframes = ix->paths[p].depth;
            r->stacks[idx].omitted = ix->paths[p].omitted;
        } else {
            idx--;
        }
        struct report_stack *st = &r->stacks[idx];
        stack_of_trace[t] = idx + 1;
        st->calls += c->calls;
        st->temporary += c->temporary;
        st->allocated += c->allocated;
        st->leaked += c->live;
        st->leaked_blocks += c->live_blocks;
        st->peak += accounting_at_peak(m->acct, t);
        st->mapped_peak += accounting_mapped_at_peak(m->acct, t);
        st->mapped_end += c->mapped;
        st->mapping_calls += c->mapping_calls;
        st->time_ns += c->time_ns;
        st->unreachable += c->unreachable;
        st->unreachable_blocks += c->unreachable_blocks;
        st->indirect += c->indirect;
        st->indirect_blocks += c->indirect_blocks;
        st->possible += c->possible;
        st->possible_blocks += c->possible_blocks;
    }
    free(stack_of);
    if (m->growth) {
        stacks_growth(r, stack_of_trace, ntraces);
    }
    r->stack_of_trace = stack_of_trace;
    r->ntraces = ntraces;
    for (int s = 0; s < REPORT_NSECTIONS; s++) {
        r->ranked[s] = xmalloc((r->nstacks ? r->nstacks : 1) * sizeof *r->ranked[s]);
        uint32_t k = 0;
        for (uint32_t i = 0; i < r->nstacks; i++) {
            if (report_cost(&r->stacks[i], (enum report_section)s) > 0) {
                r->ranked[s][k++] = i;
            }
        }
        sort_base = r->stacks;
        sort_section = (enum report_section)s;
        qsort(r->ranked[s], k, sizeof *r->ranked[s], by_cost);
        r->nranked[s] = k;
    }
    return r;
}

int report_has_reach(const struct model *m)
{
    const struct acct_totals *t = accounting_totals(m->acct);
    return t->has_reach && t->reach_status == MEMFMT_REACH_DONE && !m->sample_rate;
}

const char *report_reach_missing(const struct model *m)
{
    const struct acct_totals *t = accounting_totals(m->acct);
    if (m->sample_rate) {
        return "not available in a sampled recording (only the sampled blocks are known)";
    }
    if (!t->has_reach) {
        /* The reason the file shows, where it shows one; each line fits
         * 80 columns after "  reachability: ". */
        if (!m->has_end) {
            return "not classified (the recording ends early; scans run at a normal end)";
        }
        switch (m->end.how) {
        case MEMFMT_END_SIGNALED: return "not classified (killed by a signal; scans run at a normal end)";
        case MEMFMT_END_DETACHED: return "not classified (attached: see memrec --pid --reachability)";
        case MEMFMT_END_EXITED: return "not classified (_exit, --no-reachability or an older memrec)";
        default:
            return "not classified (no scan at a normal end: the program was killed, called _exit, was detached, "
                   "or ran with --no-reachability or an older memrec)";
        }
    }
    switch (t->reach_status) {
    case MEMFMT_REACH_DONE: return NULL;
    case MEMFMT_REACH_TOO_BIG: return "not classified (more live blocks than memrec scans)";
    case MEMFMT_REACH_TOO_SLOW: return "not classified (memrec's scan passed its time bound and was given up)";
    case MEMFMT_REACH_NO_STOP: return "not classified (memrec could not stop or read the program)";
    case MEMFMT_REACH_SAMPLED: return "not available in a sampled recording (only the sampled blocks are known)";
    default: return "not classified (a scan status this memprint does not know)";
    }
}

void report_rank_unreachable(struct report *r)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < r->nstacks; i++) {
        if (r->stacks[i].unreachable > 0) {
            r->ranked[REPORT_LEAKED][k++] = i;
        }
    }
    sort_base = r->stacks;
    sort_section = REPORT_LEAKED;
    sort_unreachable = 1;
    qsort(r->ranked[REPORT_LEAKED], k, sizeof *r->ranked[REPORT_LEAKED], by_cost);
    sort_unreachable = 0;
    r->nranked[REPORT_LEAKED] = k;
    r->leaked_unreachable = 1;
}

void report_free(struct report *r)
{
    if (!r) {
        return;
    }
    free(r->stacks);
    free(r->stack_of_trace);
    index_free(r->ix);
    for (int s = 0; s < REPORT_NSECTIONS; s++) {
        free(r->ranked[s]);
    }
    symbolize_free(r->sym);
    free(r);
}

int report_section_shown(const struct report *r, const struct report_options *o, enum report_section s)
{
    if (o->sections) {
        return (o->sections & (1u << s)) != 0;
    }
    if (s == REPORT_GROWTH) {
        return r->model->growth != NULL;
    }
    return s != REPORT_TIME || (r->model->header.flags & MEMFMT_HF_TIMED);
}

const char *report_title(enum report_section s)
{
    static const char *const titles[REPORT_NSECTIONS] = {
        "MOST CALLS TO ALLOCATION FUNCTIONS",
        "PEAK MEMORY CONSUMERS",
        "MOST TEMPORARY ALLOCATIONS",
        "MOST MEMORY LEAKED",
        "MOST MEMORY ALLOCATED",
        "PEAK MAPPED MEMORY",
        "MOST TIME IN THE ALLOCATOR",
        "MOST MEMORY GROWTH",
    };
    return s < REPORT_NSECTIONS ? titles[s] : "";
}

/* ---- text ---- */

static const char *base_name(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : (path ? path : "?");
}

/* The gap left where a too deep stack lost its middle frames, or where a
 * signal handler's call, queued while its thread was inside the recorder,
 * has only its call site. */
static int is_gap(const struct sym_frame *f)
{
    return !f->function && !f->module && f->module_offset == 0;
}

static void print_frame(const struct sym_frame *f, int depth, int full_names, FILE *out)
{
    if (is_gap(f)) {
        fputs("      ... frames omitted: a stack deeper than the depth limit, or a signal handler's call made inside "
              "memrec ...\n",
              out);
        return;
    }
    fprintf(out, "      #%-2d ", depth);
    if (f->inlined) {
        fputs("(inlined) ", out);
    }
    if (!f->function) {
        fputs("?? in ", out);
        esc_text_fputs(base_name(f->module), out);
        fprintf(out, "+0x%llx\n", (unsigned long long)f->module_offset);
        return;
    }
    if (full_names) {
        esc_text_fputs(f->function, out);
    } else {
        char *s = names_shorten(f->function);
        esc_text_fputs(s, out);
        free(s);
    }
    if (f->file) {
        fputs(" at ", out);
        esc_text_fputs(f->file, out);
        fprintf(out, ":%u", f->line);
    }
    fputs(" in ", out);
    esc_text_fputs(base_name(f->module), out);
    fputc('\n', out);
}

static double per_second(uint64_t n, uint64_t ms)
{
    return ms ? (double)n * 1000.0 / (double)ms : 0.0;
}

/* A leaked entry's share: what of it is unreachable (and indirectly so),
 * possibly reachable, reachable. */
static void print_reach_share(const struct report_stack *st, FILE *out)
{
    char b1[32];
    uint64_t reach_n = st->leaked_blocks - st->unreachable_blocks;
    if (st->unreachable_blocks && reach_n == 0) {
        fprintf(out, ": unreachable");
    } else if (st->unreachable_blocks) {
        fprintf(out, ": %s (%llu bytes) in %llu %s unreachable", util_bytes(b1, sizeof b1, st->unreachable),
                (unsigned long long)st->unreachable, (unsigned long long)st->unreachable_blocks,
                util_plural(st->unreachable_blocks, "block", "blocks"));
    }
    if (st->indirect_blocks == st->unreachable_blocks && st->indirect_blocks) {
        fprintf(out, " (indirectly)");
    } else if (st->indirect_blocks) {
        fprintf(out, " (%llu indirectly)", (unsigned long long)st->indirect_blocks);
    }
    if (reach_n == 0) {
        return;
    }
    fprintf(out, st->unreachable_blocks ? ", the rest " : ": ");
    if (st->possible_blocks == reach_n) {
        fprintf(out, "possibly reachable (through interior pointers only)");
    } else if (st->possible_blocks) {
        fprintf(out, "reachable (%llu %s possibly, through interior pointers only)",
                (unsigned long long)st->possible_blocks, util_plural(st->possible_blocks, "block", "blocks"));
    } else {
        fprintf(out, "reachable");
    }
}

/* One entry's cost line; `est` ("~" when sampling) marks estimates. */
static void print_cost(const struct report_stack *st, enum report_section s, const struct acct_totals *t,
                       const char *est, FILE *out)
{
    char b1[32];
    switch (s) {
    case REPORT_CALLS:
        fprintf(out, "  %s%llu calls to allocation functions (%.1f%% of all), %s%s allocated\n", est,
                (unsigned long long)st->calls,
                t->allocations ? 100.0 * (double)st->calls / (double)t->allocations : 0.0, est,
                util_bytes(b1, sizeof b1, st->allocated));
        break;
    case REPORT_PEAK:
        fprintf(out, "  %s%s (%llu bytes) live at the peak\n", est, util_bytes(b1, sizeof b1, st->peak),
                (unsigned long long)st->peak);
        break;
    case REPORT_TEMPORARY:
        fprintf(out, "  %s%llu temporary allocations of %llu calls (%.1f%%)\n", est, (unsigned long long)st->temporary,
                (unsigned long long)st->calls, st->calls ? 100.0 * (double)st->temporary / (double)st->calls : 0.0);
        break;
    case REPORT_LEAKED:
        fprintf(out, "  %s%s (%llu bytes) leaked in %s%llu %s", est, util_bytes(b1, sizeof b1, st->leaked),
                (unsigned long long)st->leaked, est, (unsigned long long)st->leaked_blocks,
                util_plural(st->leaked_blocks, "block", "blocks"));
        if (t->has_reach && t->reach_status == MEMFMT_REACH_DONE && !*est) {
            print_reach_share(st, out);
        }
        fputc('\n', out);
        break;
    case REPORT_ALLOCATED:
        fprintf(out, "  %s%s (%llu bytes) allocated in %s%llu calls\n", est, util_bytes(b1, sizeof b1, st->allocated),
                (unsigned long long)st->allocated, est, (unsigned long long)st->calls);
        break;
    case REPORT_MAPPED:
        /* Never sampled: no estimate mark. */
        fprintf(out, "  %s (%llu bytes) mapped at the mapped peak, ", util_bytes(b1, sizeof b1, st->mapped_peak),
                (unsigned long long)st->mapped_peak);
        fprintf(out, "%s (%llu bytes) still mapped at the end, %llu mapping calls\n",
                util_bytes(b1, sizeof b1, st->mapped_end), (unsigned long long)st->mapped_end,
                (unsigned long long)st->mapping_calls);
        break;
    case REPORT_TIME:
        fprintf(out, "  %s%s (%llu ns) in the allocator (%.1f%% of all allocator time) in %s%llu calls\n", est,
                util_ns(b1, sizeof b1, st->time_ns), (unsigned long long)st->time_ns,
                t->time_ns ? 100.0 * (double)st->time_ns / (double)t->time_ns : 0.0, est,
                (unsigned long long)st->calls);
        break;
    case REPORT_GROWTH: {
        char b2[32], b3[32];
        fprintf(out,
                "  %s%s/s growth (%s%.0f bytes/s; fit R\xc2\xb2 %.2f, rising in %.0f%% of intervals), "
                "%s%s at the window's start, %s%s at its end\n",
                est, util_bytes(b1, sizeof b1, (uint64_t)llround(st->growth.rate)), est, st->growth.rate, st->growth.r2,
                100.0 * st->growth.growing, est, util_bytes(b2, sizeof b2, (uint64_t)llround(st->growth.start)), est,
                util_bytes(b3, sizeof b3, (uint64_t)llround(st->growth.end)));
        break;
    }
    default: break;
    }
}

static void print_stack(const struct report *r, const struct report_stack *st, int max_frames, int full_names,
                        FILE *out)
{
    uint32_t n = st->nframes < (uint32_t)max_frames ? st->nframes : (uint32_t)max_frames;
    struct sym_frame *frames = xmalloc((n ? n : 1) * sizeof *frames);
    n = report_frames(r, st, frames, n);
    for (uint32_t i = 0; i < n; i++) {
        print_frame(&frames[i], (int)i, full_names, out);
    }
    free(frames);
    if (n < st->nframes) {
        fprintf(out, "      ... %u more frames\n", st->nframes - n);
    }
    if (st->nframes == 0) {
        fprintf(out, "      (no stack)\n");
    }
}

void report_print_frames(const struct report *r, const struct report_stack *st, uint32_t from,
                         const struct report_options *o, FILE *out)
{
    uint32_t end = st->nframes;
    if (from < end && end - from > (uint32_t)o->max_frames) {
        end = from + (uint32_t)o->max_frames;
    }
    struct sym_frame *frames = xmalloc((end ? end : 1) * sizeof *frames);
    end = report_frames(r, st, frames, end);
    for (uint32_t i = from; i < end; i++) {
        print_frame(&frames[i], (int)i, o->full_names, out);
    }
    free(frames);
    if (end < st->nframes) {
        fprintf(out, "      ... %u more frames\n", st->nframes - end);
    }
}

static const char *end_text(const struct model *m, char *buf, size_t cap)
{
    if (!m->has_end) {
        snprintf(buf, cap, "recording ends early (memrec or the machine stopped)");
        return buf;
    }
    switch (m->end.how) {
    case MEMFMT_END_EXITED:
        if (m->end.value < 0) {
            snprintf(buf, cap, "exited (status not known: memrec was not its parent)");
        } else {
            snprintf(buf, cap, "exited with status %d", m->end.value);
        }
        break;
    case MEMFMT_END_SIGNALED:
        snprintf(buf, cap, "killed by signal %d (%s): the process did not end normally", m->end.value,
                 strsignal(m->end.value));
        break;
    case MEMFMT_END_DETACHED: snprintf(buf, cap, "still running when the recording stopped"); break;
    case MEMFMT_END_EXEC_UNRECORDED:
        snprintf(buf, cap,
                 "went on in a program that cannot be recorded (set-user-ID or similar); its end is not known");
        break;
    default:
        snprintf(buf, cap, "ended without exiting normally (killed or crashed): the process did not end normally");
        break;
    }
    return buf;
}

/* Events the recorder dropped (memrec --max-wait: memrec did not read for
 * longer than the bound): how many and when, and what that does to the
 * figures below, which are then marked '~'. */
static void print_lost(const struct model *m, FILE *out)
{
    if (!m->lost_events) {
        return;
    }
    fprintf(out, "lost: %llu events dropped by the recorder", (unsigned long long)m->lost_events);
    for (uint32_t i = 0; i < m->nlost_spans; i++) {
        fprintf(out, "%s %.3f s to %.3f s", i ? "," : " from", (double)m->lost_spans[i].from_ms / 1000.0,
                (double)m->lost_spans[i].to_ms / 1000.0);
    }
    fputs(" (memrec did not read for longer than --max-wait);\n"
          "      figures marked '~' miss them: the frees of blocks whose allocation was dropped are not\n"
          "      counted, blocks whose free was dropped count as leaked\n",
          out);
}

/* The summary's allocator time line (memrec --time): the total and its
 * share of the process's CPU time; nothing for a file not timed. */
static void print_time_summary(const struct model *m, const struct acct_totals *t, FILE *out)
{
    if (!(m->header.flags & MEMFMT_HF_TIMED)) {
        return;
    }
    const char *est = m->sample_rate ? "~" : "";
    uint64_t cpu = m->end.cpu_user_ns + m->end.cpu_sys_ns;
    char b1[32];
    fprintf(out, "time in the allocator: %s%s (%llu ns)", est, util_ns(b1, sizeof b1, t->time_ns),
            (unsigned long long)t->time_ns);
    if (cpu) {
        fprintf(out, ", %s%.1f%% of the run's CPU time (%.3f s user + %.3f s system)", est,
                100.0 * (double)t->time_ns / (double)cpu, (double)m->end.cpu_user_ns / 1e9,
                (double)m->end.cpu_sys_ns / 1e9);
        /* The time is wall time inside the calls, summed over threads: a
         * thread waiting for an arena lock, or preempted inside malloc,
         * counts without using the CPU. Over 100% is then real, and the
         * reader should be told why rather than suspect the figure. */
        if (t->time_ns > cpu) {
            fputs("; more than the CPU time: threads waited inside the allocator (locks, page faults, preemption)",
                  out);
        }
        fputc('\n', out);
    } else {
        fprintf(out, ", share of the run's CPU time unknown (the recording does not say it)\n");
    }
}

void report_print_growth(const struct model *m, const struct growth *g, FILE *out)
{
    if (!g) {
        return;
    }
    uint32_t np = growth_npoints(g);
    if (np < 3) {
        fprintf(out, "memory growth: not measured (the window is too short to fit)\n");
        return;
    }
    struct growth_fit f;
    growth_fit_series(g, growth_total(g), &f);
    char b1[32];
    const char *est = m->sample_rate ? "~" : "";
    double secs = (double)(np - 1) * (double)growth_spacing_ms(g) / 1000.0;
    fprintf(out, "memory growth: %s%s%s/s (%.0f bytes/s) fitted over %.3f s from %.3f s, R\xc2\xb2 %.2f\n", est,
            f.rate < 0 ? "-" : "", util_bytes(b1, sizeof b1, (uint64_t)llround(fabs(f.rate))), f.rate, secs,
            (double)growth_from_ms(g) / 1000.0, f.r2);
}

/* The split of the leaked figure by reachability: one line. A window's or
 * filter's accounting has no split (only the whole run was classified). */
static void print_reach_summary(const struct model *m, const struct accounting *a, const struct acct_totals *t,
                                FILE *out)
{
    char b1[32], b2[32];
    if (t->live_blocks == 0) {
        return;
    }
    if (a != m->acct) {
        if (report_has_reach(m)) {
            fprintf(out, "  reachability: for the whole run only (without a window or filter)\n");
        }
        return;
    }
    const char *missing = report_reach_missing(m);
    if (missing) {
        fprintf(out, "  reachability: %s\n", missing);
        return;
    }
    uint64_t rb = t->live_bytes - t->unreachable_bytes, rn = t->live_blocks - t->unreachable_blocks;
    /* Two lines, each within 80 columns: memtui shows them as they are. */
    fprintf(out, "  unreachable: %s (%llu bytes) in %llu %s", util_bytes(b1, sizeof b1, t->unreachable_bytes),
            (unsigned long long)t->unreachable_bytes, (unsigned long long)t->unreachable_blocks,
            util_plural(t->unreachable_blocks, "block", "blocks"));
    fprintf(out, " (%llu indirectly)\n", (unsigned long long)t->indirect_blocks);
    fprintf(out, "  reachable: %s (%llu bytes) in %llu %s (%llu possibly)\n", util_bytes(b2, sizeof b2, rb),
            (unsigned long long)rb, (unsigned long long)rn, util_plural(rn, "block", "blocks"),
            (unsigned long long)t->possible_blocks);
}

void report_print_summary(const struct model *m, const struct accounting *a, FILE *out)
{
    const struct acct_totals *t = accounting_totals(a);
    uint64_t ms = model_runtime_ms(m);
    char b1[32], b2[160];
    fputs("program: ", out);
    esc_text_fputs(m->cmdline && *m->cmdline ? m->cmdline : (m->exe ? m->exe : "?"), out);
    fprintf(out, " (pid %u), %s\n", m->pid, end_text(m, b2, sizeof b2));
    if (m->header.flags & MEMFMT_HF_ATTACHED) {
        fprintf(out, "attached to the running process: blocks allocated before are unknown; %llu %s not counted\n",
                (unsigned long long)m->unmatched_frees,
                m->unmatched_frees == 1 ? "free of such a block is" : "frees of such blocks are");
    }
    print_lost(m, out);
    if (m->pack) {
        fprintf(out, "packed: the file carries the frames of %u addresses (no module file is read)\n",
                packed_addresses(m->pack));
    }
    if (m->has_baseline) {
        char b3[32];
        fprintf(out, "heap in use at attach (the allocator's own count): %s (%llu bytes), %s held from the system\n",
                util_bytes(b1, sizeof b1, m->baseline_in_use), (unsigned long long)m->baseline_in_use,
                util_bytes(b3, sizeof b3, m->baseline_arena));
    }
    fprintf(out, "total runtime: %.3f s\n", (double)ms / 1000.0);
    /* Sampling: calls and bytes are exact (counted by every thread), the
     * rest are estimates from the sampled stacks, marked with '~'. Events
     * the recorder dropped make every figure of the heap approximate too. */
    const char *est = m->sample_rate || m->lost_events ? "~" : "";
    /* The exact counts are the whole run's: a window's accounting keeps its own. */
    int exact = m->has_counts && a == m->acct;
    uint64_t calls = exact ? m->exact_calls : t->allocations;
    uint64_t bytes = exact ? m->exact_bytes : t->allocated_bytes;
    if (m->sample_rate) {
        fprintf(out, "sampled: one stack per %llu bytes allocated on average; '~' marks estimates\n",
                (unsigned long long)m->sample_rate);
    }
    const char *calls_est = exact || (!m->sample_rate && !m->lost_events) ? "" : "~";
    fprintf(out, "calls to allocation functions: %s%llu (%.0f/s)\n", calls_est, (unsigned long long)calls,
            per_second(calls, ms));
    if (m->sample_rate) {
        fprintf(out, "temporary allocations: not measured when sampling\n");
    } else {
        fprintf(out, "temporary allocations: %s%llu (%.1f%%, %.0f/s)\n", est, (unsigned long long)t->temporary,
                t->allocations ? 100.0 * (double)t->temporary / (double)t->allocations : 0.0,
                per_second(t->temporary, ms));
    }
    fprintf(out, "peak heap memory consumption: %s%s (%llu bytes)", est, util_bytes(b1, sizeof b1, t->peak_bytes),
            (unsigned long long)t->peak_bytes);
    fprintf(out, " after %.3f s\n", (double)t->peak_ms / 1000.0);
    fprintf(out, "peak RSS (including memrec overhead): %s (%llu bytes)\n", util_bytes(b1, sizeof b1, t->peak_rss),
            (unsigned long long)t->peak_rss);
    fprintf(out, "total memory leaked: %s%s (%llu bytes) in %s%llu %s\n", est, util_bytes(b1, sizeof b1, t->live_bytes),
            (unsigned long long)t->live_bytes, est, (unsigned long long)t->live_blocks,
            util_plural(t->live_blocks, "block", "blocks"));
    print_reach_summary(m, a, t, out);
    fprintf(out, "total bytes allocated: %s%s (%llu bytes)\n", calls_est, util_bytes(b1, sizeof b1, bytes),
            (unsigned long long)bytes);
    /* Direct mappings, beside the heap and never in its figures. */
    fprintf(out, "peak mapped memory (mmap, mremap, brk; not heap): %s (%llu bytes) after %.3f s\n",
            util_bytes(b1, sizeof b1, t->mapped_peak), (unsigned long long)t->mapped_peak,
            (double)t->mapped_peak_ms / 1000.0);
    fprintf(out, "still mapped at the end: %s (%llu bytes), %llu mapping calls\n",
            util_bytes(b1, sizeof b1, t->mapped_bytes), (unsigned long long)t->mapped_bytes,
            (unsigned long long)t->mapping_calls);
    print_time_summary(m, t, out);
    if (m->startup_calls) {
        fprintf(out,
                "allocator start-up: %llu allocations (%llu bytes) by preloaded libraries' initialization, not "
                "counted\n",
                (unsigned long long)m->startup_calls, (unsigned long long)m->startup_bytes);
    }
}

/* What limits the growth section: too short a window, too few samples. */
static void print_growth_notes(const struct report *r, FILE *out)
{
    const struct growth *g = r->model->growth;
    if (growth_npoints(g) < 3) {
        if (growth_npoints(g) == 1) {
            fprintf(out, "  (the window is too short to fit: a single point, at %llu ms spacing)\n",
                    (unsigned long long)growth_spacing_ms(g));
        } else {
            fprintf(out, "  (the window is too short to fit: %u points %llu ms apart)\n", growth_npoints(g),
                    (unsigned long long)growth_spacing_ms(g));
        }
    }
    if (r->growth_undersampled) {
        fprintf(out,
                "  (%u call %s grew with fewer than %d sampled allocations in the window: too few samples for an "
                "estimate; record longer or with a smaller --sample-rate)\n",
                r->growth_undersampled, r->growth_undersampled == 1 ? "stack" : "stacks", GROWTH_MIN_SAMPLES);
    } else if (growth_sampled(g) && r->nranked[REPORT_GROWTH] == 0) {
        fprintf(out, "  (sampled: a call stack needs at least %d sampled allocations in the window to be ranked)\n",
                GROWTH_MIN_SAMPLES);
    }
}

void report_print_text(const struct report *r, const struct report_options *o, FILE *out)
{
    const struct model *m = r->model;
    const struct acct_totals *t = accounting_totals(m->acct);
    report_print_summary(m, m->acct, out);
    if (o->note) {
        fprintf(out, "%s\n", o->note);
    }
    /* The window's fit, not the accounting's: a line of its own, after
     * the summary that memtui shows as it is. */
    if (m->growth) {
        fputc('\n', out);
        report_print_growth(m, m->growth, out);
    }
    for (int s = 0; s < REPORT_NSECTIONS; s++) {
        if (!report_section_shown(r, o, (enum report_section)s)) {
            continue;
        }
        fprintf(out, "\n%s%s\n", report_title((enum report_section)s),
                s == REPORT_LEAKED && r->leaked_unreachable ? " (UNREACHABLE ONLY)" : "");
        if (s == REPORT_LEAKED && r->leaked_unreachable && report_reach_missing(m)) {
            fprintf(out, "  reachability: %s\n", report_reach_missing(m));
            continue;
        }
        if (s == REPORT_TIME && !(m->header.flags & MEMFMT_HF_TIMED)) {
            fprintf(out, "  allocator time: not recorded (memrec --time)\n");
            continue;
        }
        uint32_t n = r->nranked[s] < (uint32_t)o->top ? r->nranked[s] : (uint32_t)o->top;
        if (r->nranked[s] == 0) {
            fprintf(out, "  (none)\n");
        }
        if (m->sample_rate && s == REPORT_TEMPORARY) {
            fprintf(out, "  (not measured when sampling)\n");
            continue;
        }
        if (s == REPORT_GROWTH) {
            print_growth_notes(r, out);
        }
        for (uint32_t i = 0; i < n; i++) {
            const struct report_stack *st = &r->stacks[r->ranked[s][i]];
            print_cost(st, (enum report_section)s, t, m->sample_rate ? "~" : "", out);
            print_stack(r, st, o->max_frames, o->full_names, out);
        }
        if (r->nranked[s] > n) {
            fprintf(out, "  ... and %u more call stacks\n", r->nranked[s] - n);
        }
    }
    if (!o->sections) {
        rssgap_print_text(&m->rssgap, m->sample_rate != 0, m->nthreads, out);
    }
}
