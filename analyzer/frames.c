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

/* The frames of one (module, address), which are all a node's frames depend on: a deep tree
 * has millions of nodes over a few thousand addresses, so each address's are kept once. */
struct address_slot {
    uint64_t ip;
    int32_t module;
    uint16_t count;
    const struct sym_frame *first; /* NULL: empty slot */
};

struct frames {
    const struct model *m;
    struct symbolizer *sym;
    struct symfiles *files; /* each file registered with the symbolizer once */
    struct node_slot *slots;
    struct frame_chunk *chunks; /* the newest first */
    struct address_slot *addrs; /* open addressing, power-of-two size */
    size_t addr_mask;
    size_t naddrs;
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
    free(f->addrs);
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
    size_t i = (size_t)h & f->addr_mask;
    while (f->addrs[i].first && (f->addrs[i].ip != ip || f->addrs[i].module != module)) {
        i = (i + 1) & f->addr_mask;
    }
    return i;
}

/* The slot of (module, ip) in the address table, made room for (load at most 1/2). */
static struct address_slot *address_slot(struct frames *f, int32_t module, uint64_t ip)
{
    if (!f->addrs || (f->naddrs + 1) * 2 > f->addr_mask + 1) {
        size_t old = f->addrs ? f->addr_mask + 1 : 0;
        size_t size = old ? old * 2 : 1024;
        struct address_slot *was = f->addrs;
        f->addrs = xcalloc(size, sizeof *f->addrs);
        f->addr_mask = size - 1;
        for (size_t i = 0; i < old; i++) {
            if (was[i].first) {
                f->addrs[address_index(f, was[i].module, was[i].ip)] = was[i];
            }
        }
        free(was);
    }
    return &f->addrs[address_index(f, module, ip)];
}

/* Looks the node up once; the slot then points into a chunk, shared by the nodes of the same
 * (module, address). */
static void resolve(struct frames *f, uint32_t node)
{
    struct node_slot *s = &f->slots[node];
    s->done = 1;
    if (node == 0) {
        return;
    }
    const struct model_node *n = &f->m->nodes[node];
    struct address_slot *a = address_slot(f, n->module, n->ip);
    if (a->first) {
        s->first = a->first;
        s->count = a->count;
        return;
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
    s->first = c->frames + c->used;
    s->count = (uint16_t)k;
    c->used += (size_t)k;
    a->ip = n->ip;
    a->module = n->module;
    a->first = s->first;
    a->count = s->count;
    f->naddrs++;
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
