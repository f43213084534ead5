// SPDX-License-Identifier: MIT
/* Per-node symbolized frames (frames.h): one lookup per (module,
 * address), the frames kept in chunks that never move, so that a pointer handed out stays
 * valid until frames_free() (the call tree keeps them). Never prints. */
#include "frames.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "symfiles.h"
#include "util.h"

#define MAX_INLINE 16

/* Frames per chunk: a node's frames (at most MAX_INLINE) never straddle two. */
#define CHUNK_FRAMES 4096

struct frame_chunk {
    struct frame_chunk *next;
    size_t used;
    struct sym_frame frames[CHUNK_FRAMES];
};

/* The frames of one (module, address), which are all a node's frames depend on: a deep tree
 * has millions of nodes over a few thousand addresses, so each address's are kept once, and a
 * node holds only the index of its address (4 bytes). */
struct address_entry {
    uint64_t ip;
    int32_t module;
    uint16_t count;
    const struct sym_frame *first; /* in a chunk */
};

struct frames {
    const struct model *m;
    struct symbolizer *sym;
    struct symfiles *files; /* each file registered with the symbolizer once */
    uint32_t *entry_of; /* per node: 1 + index into entries; 0: not looked up yet */
    struct frame_chunk *chunks; /* the newest first */
    struct address_entry *entries;
    size_t nentries, entries_cap;
    uint32_t *table; /* (module, address) -> 1 + index into entries; open addressing, 0 = empty */
    size_t table_mask;
};

struct frames *frames_new(const struct model *m)
{
    struct frames *f = xcalloc(1, sizeof *f);
    f->m = m;
    f->sym = symbolize_new();
    if (!f->sym) {
        free(f);
        return NULL;
    }
    f->files = symfiles_new(m, f->sym);
    f->entry_of = xcalloc((size_t)m->nnodes + 1, sizeof *f->entry_of);
    return f;
}

void frames_free(struct frames *f)
{
    if (!f) {
        return;
    }
    symfiles_free(f->files);
    symbolize_free(f->sym);
    free(f->entry_of);
    free(f->entries);
    free(f->table);
    while (f->chunks) {
        struct frame_chunk *next = f->chunks->next;
        free(f->chunks);
        f->chunks = next;
    }
    free(f);
}

static size_t address_index(const struct frames *f, int32_t module, uint64_t ip)
{
    uint64_t h = ip ^ ((uint64_t)(uint32_t)module << 40) ^ (uint64_t)(uint32_t)module;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    size_t i = (size_t)h & f->table_mask;
    for (;;) {
        uint32_t e = f->table[i];
        if (e == 0 || (f->entries[e - 1].ip == ip && f->entries[e - 1].module == module)) {
            return i;
        }
        i = (i + 1) & f->table_mask;
    }
}

/* Room in the table for one more address (load at most 1/2). */
static void table_reserve(struct frames *f)
{
    if (f->table && (f->nentries + 1) * 2 <= f->table_mask + 1) {
        return;
    }
    size_t old = f->table ? f->table_mask + 1 : 0;
    size_t size = old ? old * 2 : 1024;
    uint32_t *was = f->table;
    f->table = xcalloc(size, sizeof *f->table);
    f->table_mask = size - 1;
    for (size_t i = 0; i < old; i++) {
        if (was[i]) {
            const struct address_entry *e = &f->entries[was[i] - 1];
            f->table[address_index(f, e->module, e->ip)] = was[i];
        }
    }
    free(was);
}

/* Looks the node's address up once (the first node of each address symbolizes it): the index
 * of its entry. */
static uint32_t resolve(struct frames *f, uint32_t node)
{
    const struct model_node *n = &f->m->nodes[node];
    table_reserve(f);
    size_t slot = address_index(f, n->module, n->ip);
    if (f->table[slot]) {
        f->entry_of[node] = f->table[slot];
        return f->table[slot] - 1;
    }
    struct sym_frame tmp[MAX_INLINE];
    int k = 1;
    memset(&tmp[0], 0, sizeof tmp[0]); /* a gap: no function, no module, offset 0 */
    if (n->ip != 0) {
        k = symfiles_lookup(f->files, node, tmp, MAX_INLINE);
    }
    struct frame_chunk *c = f->chunks;
    if (!c || c->used + (size_t)k > CHUNK_FRAMES) {
        c = xmalloc(sizeof *c);
        c->next = f->chunks;
        c->used = 0;
        f->chunks = c;
    }
    memcpy(c->frames + c->used, tmp, sizeof tmp[0] * (size_t)k);
    xgrow((void **)&f->entries, &f->entries_cap, f->nentries + 1, sizeof *f->entries);
    struct address_entry *e = &f->entries[f->nentries];
    e->ip = n->ip;
    e->module = n->module;
    e->first = c->frames + c->used;
    e->count = (uint16_t)k;
    c->used += (size_t)k;
    f->table[slot] = (uint32_t)++f->nentries;
    f->entry_of[node] = f->table[slot];
    return f->table[slot] - 1;
}

const struct sym_frame *frames_of_node(struct frames *f, uint32_t node, uint32_t *n)
{
    *n = 0;
    if (node == 0 || node >= f->m->nnodes) {
        return NULL;
    }
    uint32_t e = f->entry_of[node] ? f->entry_of[node] - 1 : resolve(f, node);
    *n = f->entries[e].count;
    return f->entries[e].first;
}

const struct model *frames_model(const struct frames *f)
{
    return f->m;
}

int frames_node_is_main(struct frames *f, uint32_t node)
{
    uint32_t n;
    const struct sym_frame *fr = frames_of_node(f, node, &n);
    if (n == 0) {
        return 0;
    }
    const struct sym_frame *outer = &fr[n - 1];
    return !outer->inlined && outer->function && strcmp(outer->function, "main") == 0;
}

/* Into buf (always terminated; `cap` may cut a name inside a character):
 * frames_name_dup()'s form. */
static const char *frames_name(const struct sym_frame *fr, char *buf, size_t cap);

char *frames_name_dup(const struct sym_frame *fr)
{
    /* Escaped names are at most four times as long; the unknown-function
     * form adds its words and 16 digits. */
    size_t cap = (fr->function ? strlen(fr->function) : (fr->module ? strlen(fr->module) : 0)) * 4 + 64;
    char *s = xmalloc(cap);
    return (char *)frames_name(fr, s, cap);
}

/* 1 for a gap frame (see frames_of_node()). */
static int frames_is_gap(const struct sym_frame *fr)
{
    return !fr->function && !fr->module && fr->module_offset == 0;
}

static const char *frames_name(const struct sym_frame *fr, char *buf, size_t cap)
{
    if (cap == 0) {
        return buf;
    }
    if (frames_is_gap(fr)) {
        snprintf(buf, cap, "[frames omitted]");
        return buf;
    }
    /* Names from the recording, escaped (util/escape.h): no control
     * character, valid UTF-8 for SVG and JSON consumers. */
    if (fr->function) {
        char *e = esc_text(fr->function);
        snprintf(buf, cap, "%s", e);
        free(e);
    } else {
        const char *mod = fr->module ? strrchr(fr->module, '/') : NULL;
        char *e = esc_text(mod ? mod + 1 : (fr->module ? fr->module : "?"));
        snprintf(buf, cap, "?? in %s+0x%llx", e, (unsigned long long)fr->module_offset);
        free(e);
    }
    return buf;
}
