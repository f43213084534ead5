// SPDX-License-Identifier: MIT
/* Builds the ranked reports (report.h): every trace with a cost is turned
 * into its symbolized frames, traces whose frames read the same are merged,
 * and each section ranks the merged stacks by its cost. Text output here;
 * JSON in json.c. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "util.h"

#define MAX_INLINE 16

/* ---- per-node frames, computed once ---- */

struct node_frames {
    uint32_t first; /* index into the frame pool */
    uint16_t count;
    uint8_t done;
};

struct builder {
    struct report *r;
    struct node_frames *nf;
    struct sym_frame *pool;
    size_t npool, pool_cap;
    /* merge table: key string -> stack index */
    char **keys;
    uint32_t *vals;
    size_t cap, count;
};

static struct node_frames *frames_of(struct builder *b, uint32_t node)
{
    struct node_frames *nf = &b->nf[node];
    if (nf->done) {
        return nf;
    }
    nf->done = 1;
    const struct model *m = b->r->model;
    const struct model_node *n = &m->nodes[node];
    struct sym_frame tmp[MAX_INLINE];
    int k = 0;
    if (n->module >= 0) {
        struct model_module *mod = &m->modules[n->module];
        if (mod->sym_index < 0) {
            mod->sym_index = symbolize_add_module(b->r->sym, mod->path, mod->bias, mod->build_id, mod->build_id_len);
        }
        if (mod->sym_index >= 0) {
            /* A return address points after the call: look up the call. */
            k = symbolize_lookup(b->r->sym, mod->sym_index, n->ip - 1, tmp, MAX_INLINE);
        }
    }
    if (k <= 0) {
        memset(&tmp[0], 0, sizeof tmp[0]);
        tmp[0].module = NULL;
        tmp[0].module_offset = n->ip;
        k = 1;
    }
    xgrow((void **)&b->pool, &b->pool_cap, b->npool + (size_t)k, sizeof *b->pool);
    nf->first = (uint32_t)b->npool;
    nf->count = (uint16_t)k;
    memcpy(b->pool + b->npool, tmp, sizeof tmp[0] * (size_t)k);
    b->npool += (size_t)k;
    return nf;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    }
    return h;
}

static void key_append(char **key, size_t *len, size_t *cap, const char *s)
{
    size_t n = strlen(s);
    xgrow((void **)key, cap, *len + n + 2, 1);
    memcpy(*key + *len, s, n);
    *len += n;
    (*key)[(*len)++] = '\x1f';
    (*key)[*len] = 0;
}

static void table_grow(struct builder *b)
{
    size_t ncap = b->cap ? b->cap * 2 : 1024;
    char **nk = xcalloc(ncap, sizeof *nk);
    uint32_t *nv = xmalloc(ncap * sizeof *nv);
    for (size_t i = 0; i < b->cap; i++) {
        if (!b->keys[i]) {
            continue;
        }
        size_t j = hash_str(b->keys[i]) & (ncap - 1);
        while (nk[j]) {
            j = (j + 1) & (ncap - 1);
        }
        nk[j] = b->keys[i];
        nv[j] = b->vals[i];
    }
    free(b->keys);
    free(b->vals);
    b->keys = nk;
    b->vals = nv;
    b->cap = ncap;
}

/* Returns the stack index for `key`, taking ownership of it, or
 * UINT32_MAX when the key is new (the caller creates the stack). */
static uint32_t table_find(struct builder *b, char *key, uint32_t new_index)
{
    if ((b->count + 1) * 2 > b->cap) {
        table_grow(b);
    }
    size_t mask = b->cap - 1;
    size_t j = hash_str(key) & mask;
    while (b->keys[j]) {
        if (strcmp(b->keys[j], key) == 0) {
            free(key);
            return b->vals[j];
        }
        j = (j + 1) & mask;
    }
    b->keys[j] = key;
    b->vals[j] = new_index;
    b->count++;
    return UINT32_MAX;
}

/* Frames of one trace, innermost first, cut after main(). */
static void collect(struct builder *b, uint32_t trace, struct sym_frame **out, uint32_t *nout, uint32_t *omitted)
{
    const struct model *m = b->r->model;
    size_t cap = 0;
    *out = NULL;
    *nout = 0;
    *omitted = 0;
    for (uint32_t node = trace; node != 0; node = m->nodes[node].parent) {
        if (m->nodes[node].ip == 0) {
            /* The recorder's gap marker: keep its place in the stack. */
            (*omitted)++;
            xgrow((void **)out, &cap, *nout + 1, sizeof **out);
            memset(*out + *nout, 0, sizeof **out);
            (*nout)++;
            continue;
        }
        struct node_frames *nf = frames_of(b, node);
        xgrow((void **)out, &cap, *nout + nf->count, sizeof **out);
        memcpy(*out + *nout, b->pool + nf->first, sizeof **out * nf->count);
        *nout += nf->count;
        const struct sym_frame *last = &b->pool[nf->first + nf->count - 1];
        if (last->function && strcmp(last->function, "main") == 0) {
            break;
        }
    }
}

static char *make_key(const struct sym_frame *f, uint32_t n, uint32_t omitted)
{
    char *key = NULL;
    size_t len = 0, cap = 0;
    char num[64];
    snprintf(num, sizeof num, "o%u", omitted);
    key_append(&key, &len, &cap, num);
    for (uint32_t i = 0; i < n; i++) {
        if (f[i].function) {
            snprintf(num, sizeof num, "%u:%d", f[i].line, f[i].inlined);
            key_append(&key, &len, &cap, f[i].function);
            key_append(&key, &len, &cap, f[i].file ? f[i].file : "");
            key_append(&key, &len, &cap, num);
        } else {
            snprintf(num, sizeof num, "+%llx", (unsigned long long)f[i].module_offset);
            key_append(&key, &len, &cap, f[i].module ? f[i].module : "?");
            key_append(&key, &len, &cap, num);
        }
    }
    if (!key) {
        key = xstrdup("");
    }
    return key;
}

uint64_t report_cost(const struct report_stack *st, enum report_section s)
{
    switch (s) {
    case REPORT_CALLS: return st->calls;
    case REPORT_PEAK: return st->peak;
    case REPORT_TEMPORARY: return st->temporary;
    case REPORT_LEAKED: return st->leaked;
    case REPORT_MAPPED: return st->mapped_peak;
    case REPORT_ALLOCATED: return st->allocated;
    default: return 0;
    }
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
    struct builder b = {.r = r};
    b.nf = xcalloc(m->nnodes ? m->nnodes : 1, sizeof *b.nf);
    size_t stacks_cap = 0;
    uint32_t ntraces = accounting_ntraces(m->acct);
    for (uint32_t t = 0; t < ntraces; t++) {
        const struct acct_cost *c = accounting_cost(m->acct, t);
        if (!c || (c->calls == 0 && c->mapping_calls == 0)) {
            continue;
        }
        struct sym_frame *frames;
        uint32_t n, omitted;
        collect(&b, t < m->nnodes ? t : 0, &frames, &n, &omitted);
        char *key = make_key(frames, n, omitted);
        uint32_t idx = table_find(&b, key, r->nstacks);
        if (idx == UINT32_MAX) {
            idx = r->nstacks++;
            xgrow((void **)&r->stacks, &stacks_cap, r->nstacks, sizeof *r->stacks);
            r->stacks[idx].frames = frames;
            r->stacks[idx].nframes = n;
            r->stacks[idx].omitted = omitted;
        } else {
            free(frames);
        }
        struct report_stack *st = &r->stacks[idx];
        st->calls += c->calls;
        st->temporary += c->temporary;
        st->allocated += c->allocated;
        st->leaked += c->live;
        st->leaked_blocks += c->live_blocks;
        st->peak += accounting_at_peak(m->acct, t);
        st->mapped_peak += accounting_mapped_at_peak(m->acct, t);
        st->mapped_end += c->mapped;
        st->mapping_calls += c->mapping_calls;
    }
    for (size_t i = 0; i < b.cap; i++) {
        free(b.keys[i]);
    }
    free(b.keys);
    free(b.vals);
    free(b.nf);
    free(b.pool);
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

void report_free(struct report *r)
{
    if (!r) {
        return;
    }
    for (uint32_t i = 0; i < r->nstacks; i++) {
        free(r->stacks[i].frames);
    }
    free(r->stacks);
    for (int s = 0; s < REPORT_NSECTIONS; s++) {
        free(r->ranked[s]);
    }
    symbolize_free(r->sym);
    free(r);
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
        fprintf(out, "?? in %s+0x%llx\n", base_name(f->module), (unsigned long long)f->module_offset);
        return;
    }
    if (full_names) {
        fputs(f->function, out);
    } else {
        char *s = names_shorten(f->function);
        fputs(s, out);
        free(s);
    }
    if (f->file) {
        fprintf(out, " at %s:%u", f->file, f->line);
    }
    fprintf(out, " in %s\n", base_name(f->module));
}

static double per_second(uint64_t n, uint64_t ms)
{
    return ms ? (double)n * 1000.0 / (double)ms : 0.0;
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
        fprintf(out, "  %s%s (%llu bytes) leaked in %s%llu blocks\n", est, util_bytes(b1, sizeof b1, st->leaked),
                (unsigned long long)st->leaked, est, (unsigned long long)st->leaked_blocks);
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
    default: break;
    }
}

static void print_stack(const struct report_stack *st, int max_frames, int full_names, FILE *out)
{
    uint32_t n = st->nframes < (uint32_t)max_frames ? st->nframes : (uint32_t)max_frames;
    for (uint32_t i = 0; i < n; i++) {
        print_frame(&st->frames[i], (int)i, full_names, out);
    }
    if (n < st->nframes) {
        fprintf(out, "      ... %u more frames\n", st->nframes - n);
    }
    if (st->nframes == 0) {
        fprintf(out, "      (no stack)\n");
    }
}

void report_print_frames(const struct report_stack *st, uint32_t from, const struct report_options *o, FILE *out)
{
    uint32_t end = st->nframes;
    if (end - from > (uint32_t)o->max_frames && from < end) {
        end = from + (uint32_t)o->max_frames;
    }
    for (uint32_t i = from; i < end; i++) {
        print_frame(&st->frames[i], (int)i, o->full_names, out);
    }
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
    default:
        snprintf(buf, cap, "ended without exiting normally (killed or crashed): the process did not end normally");
        break;
    }
    return buf;
}

void report_print_summary(const struct model *m, const struct accounting *a, FILE *out)
{
    const struct acct_totals *t = accounting_totals(a);
    uint64_t ms = model_runtime_ms(m);
    char b1[32], b2[160];
    fprintf(out, "program: %s (pid %u), %s\n", m->cmdline && *m->cmdline ? m->cmdline : (m->exe ? m->exe : "?"), m->pid,
            end_text(m, b2, sizeof b2));
    if (m->header.flags & MEMFMT_HF_ATTACHED) {
        fprintf(out,
                "attached to the running process: blocks allocated before are unknown; %llu frees of such blocks "
                "are not counted\n",
                (unsigned long long)m->unmatched_frees);
    }
    if (m->has_baseline) {
        char b3[32];
        fprintf(out, "heap in use at attach (the allocator's own count): %s (%llu bytes), %s held from the system\n",
                util_bytes(b1, sizeof b1, m->baseline_in_use), (unsigned long long)m->baseline_in_use,
                util_bytes(b3, sizeof b3, m->baseline_arena));
    }
    fprintf(out, "total runtime: %.3f s\n", (double)ms / 1000.0);
    /* Sampling: calls and bytes are exact (counted by every thread), the
     * rest are estimates from the sampled stacks, marked with '~'. */
    const char *est = m->sample_rate ? "~" : "";
    /* The exact counts are the whole run's: a window's accounting keeps its own. */
    int exact = m->has_counts && a == m->acct;
    uint64_t calls = exact ? m->exact_calls : t->allocations;
    uint64_t bytes = exact ? m->exact_bytes : t->allocated_bytes;
    if (m->sample_rate) {
        fprintf(out, "sampled: one stack per %llu bytes allocated on average; '~' marks estimates\n",
                (unsigned long long)m->sample_rate);
    }
    fprintf(out, "calls to allocation functions: %s%llu (%.0f/s)\n", exact || !m->sample_rate ? "" : "~",
            (unsigned long long)calls, per_second(calls, ms));
    if (m->sample_rate) {
        fprintf(out, "temporary allocations: not measured when sampling\n");
    } else {
        fprintf(out, "temporary allocations: %llu (%.1f%%, %.0f/s)\n", (unsigned long long)t->temporary,
                t->allocations ? 100.0 * (double)t->temporary / (double)t->allocations : 0.0,
                per_second(t->temporary, ms));
    }
    fprintf(out, "peak heap memory consumption: %s%s (%llu bytes)", est, util_bytes(b1, sizeof b1, t->peak_bytes),
            (unsigned long long)t->peak_bytes);
    fprintf(out, " after %.3f s\n", (double)t->peak_ms / 1000.0);
    fprintf(out, "peak RSS (including memrec overhead): %s (%llu bytes)\n", util_bytes(b1, sizeof b1, t->peak_rss),
            (unsigned long long)t->peak_rss);
    fprintf(out, "total memory leaked: %s%s (%llu bytes) in %s%llu blocks\n", est,
            util_bytes(b1, sizeof b1, t->live_bytes), (unsigned long long)t->live_bytes, est,
            (unsigned long long)t->live_blocks);
    fprintf(out, "total bytes allocated: %s%s (%llu bytes)\n", exact || !m->sample_rate ? "" : "~",
            util_bytes(b1, sizeof b1, bytes), (unsigned long long)bytes);
    /* Direct mappings, beside the heap and never in its figures. */
    fprintf(out, "peak mapped memory (mmap, mremap, brk; not heap): %s (%llu bytes) after %.3f s\n",
            util_bytes(b1, sizeof b1, t->mapped_peak), (unsigned long long)t->mapped_peak,
            (double)t->mapped_peak_ms / 1000.0);
    fprintf(out, "still mapped at the end: %s (%llu bytes), %llu mapping calls\n",
            util_bytes(b1, sizeof b1, t->mapped_bytes), (unsigned long long)t->mapped_bytes,
            (unsigned long long)t->mapping_calls);
    if (m->startup_calls) {
        fprintf(out,
                "allocator start-up: %llu allocations (%llu bytes) by preloaded libraries' initialization, not "
                "counted\n",
                (unsigned long long)m->startup_calls, (unsigned long long)m->startup_bytes);
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
    for (int s = 0; s < REPORT_NSECTIONS; s++) {
        if (o->sections && !(o->sections & (1u << s))) {
            continue;
        }
        fprintf(out, "\n%s\n", report_title((enum report_section)s));
        uint32_t n = r->nranked[s] < (uint32_t)o->top ? r->nranked[s] : (uint32_t)o->top;
        if (r->nranked[s] == 0) {
            fprintf(out, "  (none)\n");
        }
        if (m->sample_rate && s == REPORT_TEMPORARY) {
            fprintf(out, "  (not measured when sampling)\n");
            continue;
        }
        for (uint32_t i = 0; i < n; i++) {
            const struct report_stack *st = &r->stacks[r->ranked[s][i]];
            print_cost(st, (enum report_section)s, t, m->sample_rate ? "~" : "", out);
            print_stack(st, o->max_frames, o->full_names, out);
        }
        if (r->nranked[s] > n) {
            fprintf(out, "  ... and %u more call stacks\n", r->nranked[s] - n);
        }
    }
}
