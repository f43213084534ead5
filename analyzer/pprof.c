// SPDX-License-Identifier: MIT
/* pprof export (pprof.h). The profile is streamed: samples are encoded
 * and compressed as they are made, and the tables they refer to
 * (locations, functions, mappings, strings) follow them, which the wire
 * format allows (fields in any order, repeated fields in pieces). */
#include "pprof.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "escape.h"
#include "idmap.h"
#include "protobuf.h"
#include "util.h"

/* profile.proto's field numbers. */
enum {
    PROFILE_SAMPLE_TYPE = 1,
    PROFILE_SAMPLE = 2,
    PROFILE_MAPPING = 3,
    PROFILE_LOCATION = 4,
    PROFILE_FUNCTION = 5,
    PROFILE_STRING_TABLE = 6,
    PROFILE_TIME_NANOS = 9,
    PROFILE_DURATION_NANOS = 10,
    PROFILE_PERIOD_TYPE = 11,
    PROFILE_PERIOD = 12,
    PROFILE_COMMENT = 13,
    PROFILE_DEFAULT_SAMPLE_TYPE = 14,
};
enum { VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2 };
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2 };
enum {
    MAPPING_ID = 1,
    MAPPING_MEMORY_START = 2,
    MAPPING_MEMORY_LIMIT = 3,
    MAPPING_FILE_OFFSET = 4,
    MAPPING_FILENAME = 5,
    MAPPING_BUILD_ID = 6,
    MAPPING_HAS_FUNCTIONS = 7,
    MAPPING_HAS_FILENAMES = 8,
    MAPPING_HAS_LINE_NUMBERS = 9,
    MAPPING_HAS_INLINE_FRAMES = 10,
};
enum { LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4 };
enum { LINE_FUNCTION_ID = 1, LINE_LINE = 2 };
enum { FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4 };

/* Compressed bytes are written out in pieces of this size; the encoded
 * profile is handed to zlib whenever this much has gathered. */
#define CHUNK (64 * 1024)

/* ---- the string table ---- */

struct strtab {
    char **v; /* v[0] = "" */
    uint32_t n, cap;
    struct idmap map;
};

static uint64_t str_hash(const void *ctx, uint32_t i)
{
    return idmap_hash_str(((const struct strtab *)ctx)->v[i]);
}

struct str_key {
    const struct strtab *t;
    const char *s;
};

static int str_same(const void *ctx, uint32_t i)
{
    const struct str_key *k = ctx;
    return strcmp(k->t->v[i], k->s) == 0;
}

/* The index of `s` (copied the first time). */
static uint32_t strtab_id(struct strtab *t, const char *s)
{
    idmap_reserve(&t->map, (size_t)t->n + 1, str_hash, t);
    struct str_key k = {t, s};
    size_t slot;
    uint32_t i = idmap_find(&t->map, idmap_hash_str(s), str_same, &k, &slot);
    if (i != IDMAP_NONE) {
        return i;
    }
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 256;
        t->v = xrealloc(t->v, t->cap * sizeof *t->v);
    }
    i = t->n++;
    t->v[i] = xstrdup(s);
    idmap_put(&t->map, slot, i);
    return i;
}

/* The index of `s` escaped as util/escape.h's text form: the recording's
 * bytes may be anything, protobuf strings must be UTF-8. */
static uint32_t strtab_id_escaped(struct strtab *t, const char *s)
{
    char *e = esc_text(s);
    uint32_t i = strtab_id(t, e);
    free(e);
    return i;
}

/* ---- functions and locations ---- */

struct func {
    uint32_t name, file; /* string indexes */
};

struct loc {
    uint64_t ip;
    int32_t module; /* -1: none */
    uint32_t node; /* a model node with this ip and module; 0: "[no stack]" */
};

struct pprof {
    struct frames *fr;
    const struct model *m;
    struct strtab strs;
    struct func *funcs;
    uint32_t nfuncs, funcs_cap;
    struct idmap func_map;
    struct loc *locs;
    uint32_t nlocs, locs_cap;
    struct idmap loc_map;
    uint32_t *loc_of_node; /* per model node: location index + 1, 0 not yet */
    uint32_t no_stack_loc; /* location index + 1 of "[no stack]", 0 not yet */
    uint8_t *module_used; /* per model module: bit 0 used, 1 functions, 2 files, 3 lines, 4 inline frames */
    int timed; /* the file is timed (memrec --time): a fifth value, alloc_time */
    /* Output. */
    struct pb_buf top; /* encoded, not compressed yet */
    z_stream z;
    FILE *f;
    int failed; /* errno of the first failure, or 0 */
};

static uint64_t func_hash_of(const struct func *fn)
{
    return idmap_mix(((uint64_t)fn->name << 32) ^ fn->file);
}

static uint64_t func_hash(const void *ctx, uint32_t i)
{
    return func_hash_of(&((const struct pprof *)ctx)->funcs[i]);
}

static int func_same(const void *ctx, uint32_t i)
{
    const struct func *const *k = ctx;
    const struct func *key = k[0], *fn = &k[1][i];
    return fn->name == key->name && fn->file == key->file;
}

/* Function id (index + 1) of a (name, file) pair of string indexes. */
static uint32_t func_id(struct pprof *p, uint32_t name, uint32_t file)
{
    idmap_reserve(&p->func_map, (size_t)p->nfuncs + 1, func_hash, p);
    struct func key = {name, file};
    const struct func *k[2] = {&key, p->funcs};
    size_t slot;
    uint32_t i = idmap_find(&p->func_map, func_hash_of(&key), func_same, k, &slot);
    if (i != IDMAP_NONE) {
        return i + 1;
    }
    if (p->nfuncs == p->funcs_cap) {
        p->funcs_cap = p->funcs_cap ? p->funcs_cap * 2 : 256;
        p->funcs = xrealloc(p->funcs, p->funcs_cap * sizeof *p->funcs);
    }
    i = p->nfuncs++;
    p->funcs[i] = key;
    idmap_put(&p->func_map, slot, i);
    return i + 1;
}

static uint64_t loc_hash_of(uint64_t ip, int32_t module)
{
    return idmap_mix(ip ^ ((uint64_t)(uint32_t)module << 48) ^ ((uint64_t)(uint32_t)module >> 16));
}

static uint64_t loc_hash(const void *ctx, uint32_t i)
{
    const struct loc *l = &((const struct pprof *)ctx)->locs[i];
    return loc_hash_of(l->ip, l->module);
}

static int loc_same(const void *ctx, uint32_t i)
{
    const struct loc *const *k = ctx;
    return k[1][i].ip == k[0]->ip && k[1][i].module == k[0]->module;
}

static uint32_t add_loc(struct pprof *p, const struct loc *l)
{
    if (p->nlocs == p->locs_cap) {
        p->locs_cap = p->locs_cap ? p->locs_cap * 2 : 256;
        p->locs = xrealloc(p->locs, p->locs_cap * sizeof *p->locs);
    }
    p->locs[p->nlocs] = *l;
    return ++p->nlocs;
}

/* Location id of model node `node` (one per distinct address and module:
 * nodes of different stacks share it). */
static uint32_t loc_of(struct pprof *p, uint32_t node)
{
    if (p->loc_of_node[node]) {
        return p->loc_of_node[node];
    }
    const struct model_node *n = &p->m->nodes[node];
    struct loc key = {n->ip, n->module, node};
    idmap_reserve(&p->loc_map, (size_t)p->nlocs + 1, loc_hash, p);
    const struct loc *k[2] = {&key, p->locs};
    size_t slot;
    uint32_t i = idmap_find(&p->loc_map, loc_hash_of(key.ip, key.module), loc_same, k, &slot);
    uint32_t id;
    if (i != IDMAP_NONE) {
        id = i + 1;
    } else {
        id = add_loc(p, &key);
        idmap_put(&p->loc_map, slot, id - 1);
    }
    p->loc_of_node[node] = id;
    return id;
}

/* ---- output ---- */

/* Compress what `top` holds (and finish the stream with `finish`). */
static void drain(struct pprof *p, int finish)
{
    if (p->failed) {
        pb_clear(&p->top);
        return;
    }
    uint8_t out[CHUNK];
    p->z.next_in = p->top.data;
    p->z.avail_in = (uInt)p->top.len;
    for (;;) {
        p->z.next_out = out;
        p->z.avail_out = sizeof out;
        int rc = deflate(&p->z, finish ? Z_FINISH : Z_NO_FLUSH);
        if (rc == Z_STREAM_ERROR) {
            p->failed = EIO;
            break;
        }
        size_t n = sizeof out - p->z.avail_out;
        if (n && fwrite(out, 1, n, p->f) != n) {
            p->failed = errno ? errno : EIO;
            break;
        }
        if (finish ? rc == Z_STREAM_END : p->z.avail_in == 0 && p->z.avail_out != 0) {
            break;
        }
    }
    pb_clear(&p->top);
}

static void emit(struct pprof *p, uint32_t field, const struct pb_buf *msg)
{
    pb_message(&p->top, field, msg);
    if (p->top.len >= CHUNK) {
        drain(p, 0);
    }
}

static void value_type(struct pprof *p, uint32_t field, const char *type, const char *unit, struct pb_buf *msg)
{
    pb_clear(msg);
    pb_uint(msg, VALUE_TYPE_TYPE, strtab_id(&p->strs, type));
    pb_uint(msg, VALUE_TYPE_UNIT, strtab_id(&p->strs, unit));
    emit(p, field, msg);
}

/* The samples: one per trace with a value, its locations leaf first. */
static void write_samples(struct pprof *p, const struct accounting *a, enum pprof_at at, struct pb_buf *msg)
{
    uint64_t *ids = xmalloc((MODEL_MAX_DEPTH + 2) * sizeof *ids);
    uint32_t ntraces = accounting_ntraces(a);
    for (uint32_t t = 0; t < ntraces; t++) {
        const struct acct_cost *c = accounting_cost(a, t);
        if (!c) {
            continue;
        }
        uint64_t v[5] = {c->calls, c->allocated, at == PPROF_AT_PEAK ? accounting_blocks_at_peak(a, t) : c->live_blocks,
                         at == PPROF_AT_PEAK ? accounting_at_peak(a, t) : c->live, c->time_ns};
        if (!(v[0] | v[1] | v[2] | v[3] | (p->timed ? v[4] : 0))) {
            continue;
        }
        size_t n = 0;
        /* The model keeps every stack within MODEL_MAX_DEPTH nodes. */
        for (uint32_t x = t < p->m->nnodes ? t : 0; x != 0 && n <= MODEL_MAX_DEPTH; x = p->m->nodes[x].parent) {
            ids[n++] = loc_of(p, x);
            if (frames_node_is_main(p->fr, x)) {
                break;
            }
        }
        if (n == 0) {
            if (!p->no_stack_loc) {
                struct loc none = {0, -1, 0};
                p->no_stack_loc = add_loc(p, &none);
            }
            ids[n++] = p->no_stack_loc;
        }
        pb_clear(msg);
        pb_packed(msg, SAMPLE_LOCATION_ID, ids, n);
        pb_packed(msg, SAMPLE_VALUE, v, p->timed ? 5 : 4);
        emit(p, PROFILE_SAMPLE, msg);
    }
    free(ids);
}

static void write_locations(struct pprof *p, struct pb_buf *msg, struct pb_buf *line)
{
    for (uint32_t i = 0; i < p->nlocs; i++) {
        const struct loc *l = &p->locs[i];
        pb_clear(msg);
        pb_uint(msg, LOCATION_ID, i + 1);
        uint32_t nf = 0;
        const struct sym_frame *fr = l->node ? frames_of_node(p->fr, l->node, &nf) : NULL;
        if (l->module >= 0 && (uint32_t)l->module < p->m->nmodules) {
            pb_uint(msg, LOCATION_MAPPING_ID, (uint64_t)l->module + 1);
            uint8_t *u = &p->module_used[l->module];
            *u |= 1;
            for (uint32_t k = 0; k < nf; k++) {
                *u |= (fr[k].function ? 2 : 0) | (fr[k].file ? 4 : 0) | (fr[k].line ? 8 : 0);
            }
            *u |= nf > 1 ? 16 : 0;
        }
        /* The address symbolized: inside the call instruction, since
         * every recorded frame is a return address. */
        if (l->ip) {
            pb_uint(msg, LOCATION_ADDRESS, l->ip - 1);
        }
        /* Innermost first, the real function last: the order of
         * frames_of_node() and of profile.proto's Location.line. */
        for (uint32_t k = 0; k < nf || (k == 0 && l->node == 0); k++) {
            uint32_t fname, ffile = 0;
            uint64_t lineno = 0;
            if (l->node == 0) {
                fname = strtab_id(&p->strs, "[no stack]");
            } else {
                char *name = frames_name_dup(&fr[k]); /* whole: a cut could split a character */
                fname = strtab_id(&p->strs, name);
                free(name);
                ffile = fr[k].file ? strtab_id_escaped(&p->strs, fr[k].file) : 0;
                lineno = fr[k].line;
            }
            pb_clear(line);
            pb_uint(line, LINE_FUNCTION_ID, func_id(p, fname, ffile));
            if (lineno) {
                pb_uint(line, LINE_LINE, lineno);
            }
            pb_message(msg, LOCATION_LINE, line);
        }
        emit(p, PROFILE_LOCATION, msg);
    }
}

static void write_functions(struct pprof *p, struct pb_buf *msg)
{
    for (uint32_t i = 0; i < p->nfuncs; i++) {
        pb_clear(msg);
        pb_uint(msg, FUNCTION_ID, i + 1);
        pb_uint(msg, FUNCTION_NAME, p->funcs[i].name);
        /* The symbolizer keeps demangled names only: the system name is
         * the same. The start line is not known (0, left out). */
        pb_uint(msg, FUNCTION_SYSTEM_NAME, p->funcs[i].name);
        if (p->funcs[i].file) {
            pb_uint(msg, FUNCTION_FILENAME, p->funcs[i].file);
        }
        emit(p, PROFILE_FUNCTION, msg);
    }
}

static void write_mappings(struct pprof *p, struct pb_buf *msg)
{
    static const char hex[] = "0123456789abcdef";
    for (uint32_t i = 0; i < p->m->nmodules; i++) {
        uint8_t u = p->module_used[i];
        if (!(u & 1)) {
            continue;
        }
        const struct model_module *mod = &p->m->modules[i];
        uint64_t lo = UINT64_MAX, hi = 0;
        for (uint32_t s = 0; s < mod->nsegments; s++) {
            const struct memfmt_segment *seg = &mod->segments[s];
            lo = seg->vaddr < lo ? seg->vaddr : lo;
            hi = seg->vaddr + seg->memsz > hi ? seg->vaddr + seg->memsz : hi;
        }
        if (lo > hi) {
            lo = hi = 0;
        }
        /* The first loadable segment starts at file offset 0 of a
         * normally linked object, page-aligned: the recording keeps no
         * file offsets. */
        lo &= ~(uint64_t)4095;
        char id[2 * sizeof mod->build_id + 1];
        uint32_t idlen = mod->build_id_len < sizeof mod->build_id ? mod->build_id_len : sizeof mod->build_id;
        for (uint32_t k = 0; k < idlen; k++) {
            id[2 * k] = hex[mod->build_id[k] >> 4];
            id[2 * k + 1] = hex[mod->build_id[k] & 15];
        }
        id[2 * idlen] = 0;
        pb_clear(msg);
        pb_uint(msg, MAPPING_ID, (uint64_t)i + 1);
        pb_uint(msg, MAPPING_MEMORY_START, mod->bias + lo);
        pb_uint(msg, MAPPING_MEMORY_LIMIT, mod->bias + hi);
        pb_uint(msg, MAPPING_FILE_OFFSET, 0);
        pb_uint(msg, MAPPING_FILENAME, mod->path ? strtab_id_escaped(&p->strs, mod->path) : 0);
        pb_uint(msg, MAPPING_BUILD_ID, strtab_id(&p->strs, id));
        pb_uint(msg, MAPPING_HAS_FUNCTIONS, (u & 2) != 0);
        pb_uint(msg, MAPPING_HAS_FILENAMES, (u & 4) != 0);
        pb_uint(msg, MAPPING_HAS_LINE_NUMBERS, (u & 8) != 0);
        pb_uint(msg, MAPPING_HAS_INLINE_FRAMES, (u & 16) != 0);
        emit(p, PROFILE_MAPPING, msg);
    }
}

static void write_header(struct pprof *p, enum pprof_at at, struct pb_buf *msg)
{
    value_type(p, PROFILE_SAMPLE_TYPE, "alloc_objects", "count", msg);
    value_type(p, PROFILE_SAMPLE_TYPE, "alloc_space", "bytes", msg);
    value_type(p, PROFILE_SAMPLE_TYPE, "inuse_objects", "count", msg);
    value_type(p, PROFILE_SAMPLE_TYPE, "inuse_space", "bytes", msg);
    /* Appended, so that the four above keep their indexes; an untimed
     * file's profile is byte for byte what it was before. */
    if (p->timed) {
        value_type(p, PROFILE_SAMPLE_TYPE, "alloc_time", "nanoseconds", msg);
    }
    value_type(p, PROFILE_PERIOD_TYPE, "space", "bytes", msg);
    /* A sampled recording takes one block per sample_rate bytes on
     * average; its values are already estimates (docs/definitions.md),
     * as Go's heap profiles are, with the rate as their period. */
    pb_uint(&p->top, PROFILE_PERIOD, p->m->sample_rate ? p->m->sample_rate : 1);
    pb_uint(&p->top, PROFILE_TIME_NANOS, p->m->start_unix_ns);
    pb_uint(&p->top, PROFILE_DURATION_NANOS, model_runtime_ms(p->m) * 1000000u);
    pb_uint(&p->top, PROFILE_DEFAULT_SAMPLE_TYPE, strtab_id(&p->strs, "inuse_space"));
    char note[256];
    snprintf(note, sizeof note, "memrec recording; inuse_* = live %s",
             at == PPROF_AT_PEAK ? "at the heap peak" : "at the end");
    pb_uint(&p->top, PROFILE_COMMENT, strtab_id(&p->strs, note));
    if (p->m->sample_rate) {
        snprintf(note, sizeof note, "sampled: one block per %llu bytes on average; values are estimates",
                 (unsigned long long)p->m->sample_rate);
        pb_uint(&p->top, PROFILE_COMMENT, strtab_id(&p->strs, note));
    }
    const char *prog = p->m->cmdline && *p->m->cmdline ? p->m->cmdline : p->m->exe;
    if (prog) {
        char *e = esc_text(prog);
        size_t len = strlen(e) + 16;
        char *c = xmalloc(len);
        snprintf(c, len, "program: %s", e);
        pb_uint(&p->top, PROFILE_COMMENT, strtab_id(&p->strs, c));
        free(c);
        free(e);
    }
}

int pprof_write(struct frames *fr, const struct accounting *a, enum pprof_at at, FILE *f)
{
    struct pprof p;
    memset(&p, 0, sizeof p);
    p.fr = fr;
    p.m = frames_model(fr);
    p.timed = (p.m->header.flags & MEMFMT_HF_TIMED) != 0;
    p.f = f;
    p.loc_of_node = xcalloc(p.m->nnodes ? p.m->nnodes : 1, sizeof *p.loc_of_node);
    p.module_used = xcalloc(p.m->nmodules ? p.m->nmodules : 1, 1);
    strtab_id(&p.strs, ""); /* index 0, as profile.proto requires */
    /* windowBits 15 + 16: a gzip wrapper around the deflate stream. */
    if (deflateInit2(&p.z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        p.failed = ENOMEM;
    }
    struct pb_buf msg = PB_BUF_INIT, line = PB_BUF_INIT;
    write_header(&p, at, &msg);
    write_samples(&p, a, at, &msg);
    write_locations(&p, &msg, &line);
    write_functions(&p, &msg);
    write_mappings(&p, &msg);
    for (uint32_t i = 0; i < p.strs.n; i++) {
        pb_string(&p.top, PROFILE_STRING_TABLE, p.strs.v[i]);
        if (p.top.len >= CHUNK) {
            drain(&p, 0);
        }
    }
    drain(&p, 1);
    int failed = p.failed;
    deflateEnd(&p.z);
    pb_release(&msg);
    pb_release(&line);
    pb_release(&p.top);
    for (uint32_t i = 0; i < p.strs.n; i++) {
        free(p.strs.v[i]);
    }
    free(p.strs.v);
    idmap_release(&p.strs.map);
    free(p.funcs);
    idmap_release(&p.func_map);
    free(p.locs);
    idmap_release(&p.loc_map);
    free(p.loc_of_node);
    free(p.module_used);
    if (failed) {
        errno = failed;
        return -1;
    }
    return ferror(f) ? -1 : 0;
}
