// SPDX-License-Identifier: MIT
/* Per-node symbolized frames (frames.h): one lookup per node, the frames
 * kept in chunks that never move, so that a pointer handed out stays
 * valid until frames_free() (the call tree keeps them). Never prints. */
#include "frames.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define MAX_INLINE 16

/* Frames per chunk: a node's frames (at most MAX_INLINE) never straddle two. */
#define CHUNK_FRAMES 4096

struct node_slot {
    const struct sym_frame *first; /* in a chunk */
    uint16_t count;
    uint8_t done;
};

struct frame_chunk {
    struct frame_chunk *next;
    size_t used;
    struct sym_frame frames[CHUNK_FRAMES];
};

struct frames {
    const struct model *m;
    struct symbolizer *sym;
    int *sym_index; /* per model module: symbolizer's index, -2 not registered yet */
    struct node_slot *slots;
    struct frame_chunk *chunks; /* the newest first */
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
    f->sym_index = xmalloc(((size_t)m->nmodules + 1) * sizeof *f->sym_index);
    for (uint32_t i = 0; i < m->nmodules; i++) {
        f->sym_index[i] = -2;
    }
    f->slots = xcalloc((size_t)m->nnodes + 1, sizeof *f->slots);
    return f;
}

void frames_free(struct frames *f)
{
    if (!f) {
        return;
    }
    symbolize_free(f->sym);
    free(f->sym_index);
    free(f->slots);
    while (f->chunks) {
        struct frame_chunk *next = f->chunks->next;
        free(f->chunks);
        f->chunks = next;
    }
    free(f);
}

/* Looks the node up once; the slot then points into a chunk. */
static void resolve(struct frames *f, uint32_t node)
{
    struct node_slot *s = &f->slots[node];
    s->done = 1;
    if (node == 0) {
        return;
    }
    const struct model_node *n = &f->m->nodes[node];
    struct sym_frame tmp[MAX_INLINE];
    int k = 0;
    memset(&tmp[0], 0, sizeof tmp[0]);
    if (n->ip != 0 && n->module >= 0 && (uint32_t)n->module < f->m->nmodules) {
        const struct model_module *mod = &f->m->modules[n->module];
        if (f->sym_index[n->module] == -2) {
            f->sym_index[n->module] =
                symbolize_add_module(f->sym, mod->path, mod->bias, mod->build_id, mod->build_id_len);
        }
        if (f->sym_index[n->module] >= 0) {
            /* A return address points after the call: look up the call. */
            k = symbolize_lookup(f->sym, f->sym_index[n->module], n->ip - 1, tmp, MAX_INLINE);
        }
    }
    if (k <= 0) {
        memset(&tmp[0], 0, sizeof tmp[0]);
        tmp[0].module_offset = n->ip; /* 0 for a gap */
        k = 1;
    }
    struct frame_chunk *c = f->chunks;
    if (!c || c->used + (size_t)k > CHUNK_FRAMES) {
        c = xmalloc(sizeof *c);
        c->next = f->chunks;
        c->used = 0;
        f->chunks = c;
    }
    memcpy(c->frames + c->used, tmp, sizeof tmp[0] * (size_t)k);
    s->first = c->frames + c->used;
    s->count = (uint16_t)k;
    c->used += (size_t)k;
}

const struct sym_frame *frames_of_node(struct frames *f, uint32_t node, uint32_t *n)
{
    *n = 0;
    if (node >= f->m->nnodes) {
        return NULL;
    }
    if (!f->slots[node].done) {
        resolve(f, node);
    }
    *n = f->slots[node].count;
    return *n ? f->slots[node].first : NULL;
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

char *frames_name_dup(const struct sym_frame *fr)
{
    /* The unknown-function form needs the module's name and 16 digits. */
    size_t cap = (fr->function ? strlen(fr->function) : (fr->module ? strlen(fr->module) : 0)) + 64;
    char *s = xmalloc(cap);
    return (char *)frames_name(fr, s, cap);
}

int frames_is_gap(const struct sym_frame *fr)
{
    return !fr->function && !fr->module && fr->module_offset == 0;
}

const char *frames_name(const struct sym_frame *fr, char *buf, size_t cap)
{
    if (cap == 0) {
        return buf;
    }
    if (frames_is_gap(fr)) {
        snprintf(buf, cap, "[frames omitted]");
    } else if (fr->function) {
        snprintf(buf, cap, "%s", fr->function);
    } else {
        const char *mod = fr->module ? strrchr(fr->module, '/') : NULL;
        mod = mod ? mod + 1 : (fr->module ? fr->module : "?");
        snprintf(buf, cap, "?? in %s+0x%llx", mod, (unsigned long long)fr->module_offset);
    }
    for (char *p = buf; *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f) {
            *p = '?';
        }
    }
    return buf;
}
