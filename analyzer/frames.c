// SPDX-License-Identifier: MIT
/* Per-node symbolized frames (frames.h): one lookup per node, the frames
 * kept in chunks that never move, so that a pointer handed out stays
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
    struct symfiles *files; /* each file registered with the symbolizer once */
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
    f->files = symfiles_new(m, f->sym);
    f->slots = xcalloc((size_t)m->nnodes + 1, sizeof *f->slots);
    return f;
}

void frames_free(struct frames *f)
{
    if (!f) {
        return;
    }
    symfiles_free(f->files);
    symbolize_free(f->sym);
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
