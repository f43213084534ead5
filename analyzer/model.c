// SPDX-License-Identifier: MIT
/* Streams a recording into a struct model (model.h). Each trace node is
 * attributed to the module mapped at its address when the node was read,
 * so a library unloaded and replaced at the same address later still
 * symbolizes right. Every id and count from the file is checked against
 * what the file defined so far or a limit of model.h before it sizes
 * anything, and no step costs more than O(log n) per record. */
#include "model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "addrmap.h"
#include "idmap.h"
#include "readahead.h"
#include "util.h"

static char *dup_bytes(const char *s, uint32_t n)
{
    char *d = xmalloc((size_t)n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

/* Whether a shell would take `a` (n bytes) as one word without quotes. */
static int shell_plain(const char *a, size_t n)
{
    if (n == 0) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)a[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("_-+=%@:,./", c))) {
            return 0;
        }
    }
    return 1;
}

/* The process's arguments (NUL-separated, as /proc/PID/cmdline has them)
 * as a shell command line: joined by spaces, each argument that needs it
 * in single quotes (a quote inside written '\''), so that it reads back as
 * the same arguments. */
static char *shell_line(const char *s, uint32_t n)
{
    if (n && s[n - 1] == 0) {
        n--; /* the last argument's terminator */
    }
    char *d = xmalloc((size_t)n * 4 + 3);
    size_t k = 0;
    for (uint32_t i = 0; n && i <= n;) {
        const char *a = s + i;
        const char *end = memchr(a, 0, n - i);
        size_t len = end ? (size_t)(end - a) : n - i;
        if (k) {
            d[k++] = ' ';
        }
        if (shell_plain(a, len)) {
            memcpy(d + k, a, len);
            k += len;
        } else {
            d[k++] = '\'';
            for (size_t j = 0; j < len; j++) {
                if (a[j] == '\'') {
                    memcpy(d + k, "'\\''", 4);
                    k += 4;
                } else {
                    d[k++] = a[j];
                }
            }
            d[k++] = '\'';
        }
        i += (uint32_t)len + 1;
    }
    d[k] = 0;
    return d;
}

/* What loading needs besides the model: capacities, the address map of
 * the modules loaded now, and module id -> index. */
struct loader {
    struct model *m;
    size_t mod_cap, node_cap;
    uint16_t *depth; /* per node: nodes from it to the root, at most MODEL_MAX_DEPTH */
    size_t depth_cap;
    struct addrmap loaded;
    struct idmap ids; /* module id -> index into m->modules */
};

static uint64_t module_id_hash(const void *ctx, uint32_t i)
{
    const struct model *m = ctx;
    return idmap_mix(m->modules[i].id);
}

struct id_key {
    const struct model *m;
    uint32_t id;
};

static int same_id(const void *ctx, uint32_t i)
{
    const struct id_key *k = ctx;
    return k->m->modules[i].id == k->id;
}

/* Each segment of module `index` into `map`. */
static void map_module(struct addrmap *map, const struct model_module *mod, uint32_t index)
{
    for (uint32_t i = 0; i < mod->nsegments; i++) {
        uint64_t lo = mod->bias + mod->segments[i].vaddr;
        uint64_t hi = lo + mod->segments[i].memsz;
        addrmap_insert(map, lo, hi < lo ? UINT64_MAX : hi, index);
    }
}

/* Returns 0, or -1 when the record is refused: an id 0 or one defined
 * before (ids are never reused), or one module too many. */
static int add_module(struct loader *L, const struct memfmt_record *r)
{
    struct model *m = L->m;
    idmap_reserve(&L->ids, (size_t)m->nmodules + 1, module_id_hash, m);
    struct id_key key = {m, r->u.module.id};
    size_t slot;
    if (r->u.module.id == 0 || m->nmodules >= MODEL_MAX_MODULES ||
        idmap_find(&L->ids, idmap_mix(r->u.module.id), same_id, &key, &slot) != IDMAP_NONE) {
        return -1;
    }
    xgrow((void **)&m->modules, &L->mod_cap, (size_t)m->nmodules + 1, sizeof *m->modules);
    uint32_t index = m->nmodules++;
    struct model_module *mod = &m->modules[index];
    memset(mod, 0, sizeof *mod);
    mod->id = r->u.module.id;
    mod->path = dup_bytes(r->u.module.path, r->u.module.path_len);
    mod->bias = r->u.module.bias;
    mod->build_id_len = r->u.module.build_id_len <= sizeof mod->build_id ? r->u.module.build_id_len : 0;
    memcpy(mod->build_id, r->u.module.build_id, mod->build_id_len);
    mod->nsegments = r->u.module.nsegments <= MEMFMT_MAX_SEGMENTS ? r->u.module.nsegments : 0;
    mod->segments = xmalloc(sizeof(struct memfmt_segment) * (mod->nsegments ? mod->nsegments : 1));
    memcpy(mod->segments, r->u.module.segments, sizeof(struct memfmt_segment) * mod->nsegments);
    mod->loaded = 1;
    mod->sym_index = -1;
    idmap_put(&L->ids, slot, index);
    map_module(&L->loaded, mod, index);
    return 0;
}

/* A PACK_* record: into the pack of a packed file (ignored in any other).
 * Returns -1 when refused: an undefined module or string id, an address
 * given twice, more addresses than trace nodes. */
static int apply_pack(struct loader *L, const struct memfmt_record *r)
{
    struct model *m = L->m;
    if (!m->pack) {
        return 0;
    }
    if (r->tag == MEMFMT_REC_PACK_STRING) {
        return packed_add_string(m->pack, r->u.pack_string.str, r->u.pack_string.len, m->nnodes);
    }
    struct id_key key = {m, r->u.pack_frames.module};
    size_t slot;
    uint32_t i = idmap_find(&L->ids, idmap_mix(r->u.pack_frames.module), same_id, &key, &slot);
    if (i == IDMAP_NONE) {
        return -1;
    }
    return packed_add_frames(m->pack, i, r, m->nnodes - 1); /* the root has no address */
}

/* A LOST record: joined to the previous span when less than a second
 * after it, so a long stall of memrec is one span however many rounds
 * said it; the table is bounded, the last span takes in the overflow. */
static void add_lost_span(struct model *m, uint64_t from_ms, uint64_t to_ms, uint64_t events)
{
    const uint32_t cap = sizeof m->lost_spans / sizeof m->lost_spans[0];
    struct model_lost_span *last = m->nlost_spans ? &m->lost_spans[m->nlost_spans - 1] : NULL;
    if (last && (from_ms <= last->to_ms + 1000 || m->nlost_spans == cap)) {
        if (to_ms > last->to_ms) {
            last->to_ms = to_ms;
        }
        if (from_ms < last->from_ms) {
            last->from_ms = from_ms;
        }
        last->events = last->events + events < last->events ? UINT64_MAX : last->events + events;
        return;
    }
    m->lost_spans[m->nlost_spans++] = (struct model_lost_span){from_ms, to_ms, events};
}

static void apply(struct loader *L, const struct memfmt_record *r)
{
    struct model *m = L->m;
    switch (r->tag) {
    case MEMFMT_REC_PROCESS:
        /* The weights must be known before the first event. */
        if (r->u.process.sample_rate && !m->sample_rate && accounting_totals(m->acct)->allocations == 0) {
            m->sample_rate = r->u.process.sample_rate;
            accounting_set_sample_rate(m->acct, m->sample_rate);
        }
        free(m->exe);
        free(m->cmdline);
        m->pid = r->u.process.pid;
        m->start_unix_ns = r->u.process.start_unix_ns;
        m->exe = dup_bytes(r->u.process.exe, r->u.process.exe_len);
        m->cmdline = shell_line(r->u.process.cmdline, r->u.process.cmdline_len);
        break;
    case MEMFMT_REC_MODULE:
        if (add_module(L, r) < 0) {
            m->bad_records++;
        }
        break;
    case MEMFMT_REC_UNMODULE: {
        struct id_key key = {m, r->u.unmodule.id};
        size_t slot;
        uint32_t i = idmap_find(&L->ids, idmap_mix(r->u.unmodule.id), same_id, &key, &slot);
        if (i != IDMAP_NONE && m->modules[i].loaded) {
            m->modules[i].loaded = 0;
            addrmap_remove_owner(&L->loaded, i);
        }
        break;
    }
    case MEMFMT_REC_THREAD:
        m->nthreads++;
        /* A reused index: the counts so far belong to the thread that ended. */
        if (r->u.thread.index < m->counts_cap) {
            m->retired_calls += m->counts[r->u.thread.index].calls;
            m->retired_bytes += m->counts[r->u.thread.index].bytes;
            m->counts[r->u.thread.index].calls = 0;
            m->counts[r->u.thread.index].bytes = 0;
        }
        break;
    case MEMFMT_REC_BASELINE:
        m->has_baseline = 1;
        m->baseline_in_use = r->u.baseline.in_use;
        m->baseline_arena = r->u.baseline.arena;
        break;
    case MEMFMT_REC_COUNTS:
        /* The reader checked thread < MEMFMT_MAX_THREADS: at most 16 MiB. */
        if (r->u.counts.thread >= m->counts_cap) {
            xgrow((void **)&m->counts, &m->counts_cap, (size_t)r->u.counts.thread + 1, sizeof *m->counts);
        }
        m->counts[r->u.counts.thread].calls = r->u.counts.calls;
        m->counts[r->u.counts.thread].bytes = r->u.counts.bytes;
        m->has_counts = 1;
        break;
    case MEMFMT_REC_NODE: {
        if (m->nnodes >= MODEL_MAX_NODES) {
            m->bad_records++; /* ids from here on stay undefined */
            break;
        }
        xgrow((void **)&m->nodes, &L->node_cap, (size_t)m->nnodes + 1, sizeof *m->nodes);
        struct model_node *n = &m->nodes[m->nnodes++];
        n->parent = r->u.node.parent < m->nnodes - 1 ? r->u.node.parent : 0;
        n->ip = r->u.node.ip;
        xgrow((void **)&L->depth, &L->depth_cap, m->nnodes, sizeof *L->depth);
        uint32_t depth = (uint32_t)L->depth[n->parent] + 1; /* depth[0] = 0: the root */
        if (depth > MODEL_MAX_DEPTH) {
            n->parent = 0;
            depth = 1;
            m->bad_records++;
        }
        L->depth[m->nnodes - 1] = (uint16_t)depth;
        n->module = n->ip ? addrmap_find(&L->loaded, n->ip) : -1;
        break;
    }
    case MEMFMT_REC_END:
        m->has_end = 1;
        m->end.how = r->u.end.how;
        m->end.value = r->u.end.value;
        m->end.runtime_ms = r->u.end.runtime_ms;
        m->end.cpu_user_ns = r->u.end.cpu_user_ns;
        m->end.cpu_sys_ns = r->u.end.cpu_sys_ns;
        break;
    case MEMFMT_REC_PACK_STRING:
    case MEMFMT_REC_PACK_FRAMES:
        if (apply_pack(L, r) < 0) {
            m->bad_records++;
        }
        break;
    case MEMFMT_REC_LOST: add_lost_span(m, r->u.lost.from_ms, r->u.lost.to_ms, r->u.lost.events); break;
    case MEMFMT_REC_STATS:
        m->lost_events = r->u.stats.lost_events;
        m->unmatched_frees = r->u.stats.unmatched_frees;
        m->startup_calls = r->u.stats.startup_calls;
        m->startup_bytes = r->u.stats.startup_bytes;
        break;
    default: break;
    }
    if (r->tag == MEMFMT_REC_MAP && r->u.map.trace >= m->nnodes) {
        /* A trace id that was never defined: count it without a stack. */
        struct memfmt_record fixed = *r;
        fixed.u.map.trace = 0;
        m->bad_records++;
        accounting_feed(m->acct, &fixed);
        return;
    }
    if (accounting_feed(m->acct, r) < 0) {
        m->bad_records++;
    }
    if (r->tag == MEMFMT_REC_LAYOUT) {
        m->bad_records += rssgap_feed_layout(&m->rssgap, r, accounting_totals(m->acct), m->nnodes);
        return;
    }
    rssgap_feed(&m->rssgap, r, accounting_totals(m->acct));
}

/* Nodes read before their module's record (or after its unload): the
 * newest module of the whole file that holds the address. */
static void late_modules(struct model *m)
{
    struct addrmap all = ADDRMAP_INIT;
    int built = 0;
    for (uint32_t i = 1; i < m->nnodes; i++) {
        if (m->nodes[i].module >= 0 || !m->nodes[i].ip) {
            continue;
        }
        if (!built) {
            for (uint32_t k = 0; k < m->nmodules; k++) {
                map_module(&all, &m->modules[k], k);
            }
            built = 1;
        }
        m->nodes[i].module = addrmap_find(&all, m->nodes[i].ip);
    }
    addrmap_release(&all);
}

int model_load(const char *path, struct model **out, int *err_errno)
{
    return model_load_hooked(path, NULL, out, err_errno);
}

int model_load_hooked(const char *path, const struct model_hook *hook, struct model **out, int *err_errno)
{
    int rc;
    *err_errno = 0;
    memfmt_reader *rd = memfmt_reader_open(path, &rc);
    if (!rd) {
        *err_errno = errno;
        return rc;
    }
    struct model *m = xcalloc(1, sizeof *m);
    m->header = *memfmt_reader_header(rd);
    if (m->header.flags & MEMFMT_HF_PACKED) {
        m->pack = packed_new();
    }
    m->acct = accounting_new(1);
    struct loader L = {.m = m, .loaded = ADDRMAP_INIT, .ids = IDMAP_INIT};
    xgrow((void **)&m->nodes, &L.node_cap, 1, sizeof *m->nodes);
    m->nodes[0].module = -1;
    m->nnodes = 1;
    m->rssgap.events_accounted = !hook || !hook->replaces_events;
    m->rssgap.format_version = m->header.version;
    /* Events come in batches: most of a recording is events, and a
     * struct memfmt_record for each cost more than the accounting. An
     * allocation naming a trace not defined yet is counted without a
     * stack (accounting_feed_events). */
    /* The reading and the decoding of the events run on the second core
     * (readahead.h), the applying here. */
    struct readahead *ra = readahead_new(rd);
    const struct memfmt_record *rec = NULL;
    const struct memfmt_event *evs = NULL;
    size_t n;
    while ((rc = readahead_next(ra, &rec, &evs, &n)) > 0) {
        if (n > 0) {
            if (!hook || !hook->replaces_events) {
                m->bad_records += accounting_feed_events(m->acct, evs, n, m->nnodes);
            }
            if (hook) {
                hook->events(hook->ctx, m, evs, n);
            }
        } else {
            apply(&L, rec);
            if (hook) {
                hook->record(hook->ctx, m, rec);
            }
        }
    }
    readahead_free(ra);
    if (rc < 0) {
        m->stop_rc = rc;
        m->stop_offset = memfmt_reader_offset(rd);
        if (rc == MEMFMT_E_IO) {
            *err_errno = memfmt_reader_errno(rd);
        }
    }
    memfmt_reader_free(rd);
    addrmap_release(&L.loaded);
    free(L.depth);
    /* The nodes grew by doubling; nothing adds any now: give the slack back before the
     * analyses allocate per node. */
    m->nodes = xrealloc(m->nodes, (size_t)m->nnodes * sizeof *m->nodes);
    idmap_release(&L.ids);
    accounting_finish(m->acct);
    m->impossible_sizes = accounting_totals(m->acct)->impossible;
    m->beyond_total = accounting_totals(m->acct)->beyond_total;
    m->exact_calls = m->retired_calls;
    m->exact_bytes = m->retired_bytes;
    for (size_t i = 0; i < m->counts_cap; i++) {
        m->exact_calls += m->counts[i].calls;
        m->exact_bytes += m->counts[i].bytes;
    }
    late_modules(m);
    *out = m;
    return 0;
}

void model_free(struct model *m)
{
    if (!m) {
        return;
    }
    for (uint32_t i = 0; i < m->nmodules; i++) {
        free(m->modules[i].path);
        free(m->modules[i].segments);
    }
    free(m->modules);
    free(m->counts);
    free(m->nodes);
    free(m->exe);
    free(m->cmdline);
    accounting_free(m->acct);
    packed_free(m->pack);
    free(m);
}

int model_complete(const struct model *m)
{
    return m->has_end && m->stop_rc == 0 && m->bad_records == 0;
}

uint64_t model_runtime_ms(const struct model *m)
{
    uint64_t t = accounting_totals(m->acct)->last_ms;
    if (m->has_end && m->end.runtime_ms > t) {
        t = m->end.runtime_ms;
    }
    return t;
}

const char *model_program(const struct model *m)
{
    return m->cmdline && *m->cmdline ? m->cmdline : (m->exe ? m->exe : "?");
}
