// SPDX-License-Identifier: MIT
/* One symbolizer registration per file (symfiles.h). A module of the same
 * file at another address is looked up at its place in the registered
 * one: ip - its bias + the registered bias. */
#include "symfiles.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "idmap.h"
#include "util.h"

#define NOT_TRIED (-1)
#define REFUSED (-2)

struct symfiles {
    const struct model *m;
    struct symbolizer *sym;
    int *index; /* per model module: symbolizer index, NOT_TRIED or REFUSED */
    uint32_t *files; /* model modules registered, one per file */
    uint32_t nfiles;
    struct idmap by_file; /* (path, build-id) -> index into files */
    uint64_t *bias; /* per symbolizer index: the bias it was registered with */
    size_t bias_cap;
};

struct symfiles *symfiles_new(const struct model *m, struct symbolizer *sym)
{
    struct symfiles *s = xcalloc(1, sizeof *s);
    s->m = m;
    s->sym = sym;
    s->index = xmalloc(((size_t)m->nmodules + 1) * sizeof *s->index);
    for (uint32_t i = 0; i < m->nmodules; i++) {
        s->index[i] = NOT_TRIED;
    }
    s->files = xmalloc(((size_t)m->nmodules + 1) * sizeof *s->files);
    s->by_file = (struct idmap)IDMAP_INIT;
    return s;
}

void symfiles_free(struct symfiles *s)
{
    if (!s) {
        return;
    }
    free(s->index);
    free(s->files);
    idmap_release(&s->by_file);
    free(s->bias);
    free(s);
}

static uint64_t file_hash(const struct model_module *mod)
{
    uint64_t h = idmap_hash_str(mod->path);
    for (uint32_t i = 0; i < mod->build_id_len; i++) {
        h = idmap_mix(h ^ mod->build_id[i]);
    }
    return h;
}

struct file_key {
    const struct symfiles *s;
    const struct model_module *mod;
};

static uint64_t rehash(const void *ctx, uint32_t i)
{
    const struct symfiles *s = ctx;
    return file_hash(&s->m->modules[s->files[i]]);
}

static int same_file(const void *ctx, uint32_t i)
{
    const struct file_key *k = ctx;
    const struct model_module *o = &k->s->m->modules[k->s->files[i]];
    return o->build_id_len == k->mod->build_id_len && memcmp(o->build_id, k->mod->build_id, o->build_id_len) == 0 &&
           strcmp(o->path, k->mod->path) == 0;
}

/* The symbolizer's index for module `mi`, registering its file the first
 * time; REFUSED when it cannot be symbolized. */
static int module_index(struct symfiles *s, uint32_t mi)
{
    const struct model_module *mod = &s->m->modules[mi];
    idmap_reserve(&s->by_file, (size_t)s->nfiles + 1, rehash, s);
    struct file_key key = {s, mod};
    size_t slot;
    uint32_t f = idmap_find(&s->by_file, file_hash(mod), same_file, &key, &slot);
    if (f != IDMAP_NONE) {
        return s->index[s->files[f]];
    }
    /* Only a regular file, or none: a FIFO or a device named by the
     * recording could block opening or reading for ever. */
    struct stat st;
    int si = REFUSED;
    if (stat(mod->path, &st) != 0 || S_ISREG(st.st_mode)) {
        si = symbolize_add_module(s->sym, mod->path, mod->bias, mod->build_id, mod->build_id_len);
    }
    si = si < 0 ? REFUSED : si;
    s->index[mi] = si;
    s->files[s->nfiles] = mi;
    idmap_put(&s->by_file, slot, s->nfiles++);
    if (si >= 0) {
        xgrow((void **)&s->bias, &s->bias_cap, (size_t)si + 1, sizeof *s->bias);
        s->bias[si] = mod->bias;
    }
    return si;
}

/* A packed file's frames of module `mi` at return address `ip`: the
 * pack is the truth for the file, so no module file is ever opened, even
 * where it exists. An address the pack lacks reads as the symbolizer
 * gives it for a module it cannot open: module and offset of the call. */
static int packed_lookup(const struct symfiles *s, int32_t mi, uint64_t ip, struct sym_frame *out, int max)
{
    const struct model_module *mod = &s->m->modules[mi];
    uint64_t offset = ip - mod->bias;
    struct packed_frame pf[MEMFMT_MAX_PACK_FRAMES];
    int k =
        packed_find(s->m->pack, (uint32_t)mi, offset, pf, max < MEMFMT_MAX_PACK_FRAMES ? max : MEMFMT_MAX_PACK_FRAMES);
    if (k == 0) {
        memset(&out[0], 0, sizeof out[0]);
        out[0].module = mod->path;
        out[0].module_offset = offset - 1;
        return 1;
    }
    for (int i = 0; i < k; i++) {
        out[i] = (struct sym_frame){
            .function = pf[i].function,
            .file = pf[i].file,
            .line = pf[i].line,
            .module = mod->path,
            .module_offset = offset - 1,
            .inlined = pf[i].inlined,
        };
    }
    return k;
}

int symfiles_lookup(struct symfiles *s, uint32_t node, struct sym_frame *out, int max)
{
    const struct model_node *n = &s->m->nodes[node];
    int k = 0;
    int32_t mi = n->module >= 0 && (uint32_t)n->module < s->m->nmodules ? n->module : -1;
    if (mi >= 0 && s->m->pack) {
        return packed_lookup(s, mi, n->ip, out, max);
    }
    if (mi >= 0) {
        if (s->index[mi] == NOT_TRIED) {
            s->index[mi] = module_index(s, (uint32_t)mi);
        }
        int si = s->index[mi];
        if (si >= 0) {
            /* A return address points after the call: look up the call,
             * at its place in the file as the symbolizer has it. */
            uint64_t ip = n->ip - s->m->modules[mi].bias + s->bias[si];
            k = symbolize_lookup(s->sym, si, ip - 1, out, max);
        }
    }
    if (k <= 0) {
        memset(&out[0], 0, sizeof out[0]);
        out[0].module = mi >= 0 ? s->m->modules[mi].path : NULL;
        out[0].module_offset = mi >= 0 ? n->ip - s->m->modules[mi].bias : n->ip;
        k = 1;
    }
    return k;
}
