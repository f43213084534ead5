// SPDX-License-Identifier: MIT
/* The frames of a packed recording (packframes.h): a string table and a hash
 * of (module, address) -> a run of frames. Nothing here trusts a number
 * from the file: string ids are checked against the strings defined
 * before, and the tables grow with records read, never with a count. */
#include "packframes.h"

#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "util.h"

struct packed_addr {
    uint32_t module;
    uint64_t offset;
    uint32_t first; /* into frames */
    uint32_t count;
};

/* A frame as held: string ids, resolved when handed out (the arena of
 * strings moves as it grows). */
struct held_frame {
    uint32_t function, file, line;
    int inlined;
};

struct packed {
    /* Strings one after the other, each NUL-terminated, in one arena: no
     * allocation per string, memory = the bytes the file holds. */
    char *arena;
    size_t arena_len, arena_cap;
    uint32_t *offsets; /* [id] into arena; [0] unused: id 0 is "unknown" */
    uint32_t nstrings; /* ids 1..nstrings are defined */
    size_t offsets_cap;
    struct packed_addr *addrs;
    uint32_t naddrs;
    size_t addrs_cap;
    struct held_frame *frames;
    size_t nframes;
    size_t frames_cap;
    struct idmap by_addr;
};

struct packed *packed_new(void)
{
    struct packed *p = xcalloc(1, sizeof *p);
    p->by_addr = (struct idmap)IDMAP_INIT;
    return p;
}

void packed_free(struct packed *p)
{
    if (!p) {
        return;
    }
    free(p->arena);
    free(p->offsets);
    free(p->addrs);
    free(p->frames);
    idmap_release(&p->by_addr);
    free(p);
}

int packed_add_string(struct packed *p, const char *str, uint32_t len, uint32_t nodes)
{
    const char *nul = memchr(str, 0, len);
    if (nul) {
        len = (uint32_t)(nul - str);
    }
    uint64_t max_strings = (uint64_t)PACKED_STRINGS_PER_NODE * nodes + PACKED_STRINGS_BASE;
    uint64_t max_bytes = (uint64_t)PACKED_BYTES_PER_NODE * nodes + PACKED_BYTES_BASE;
    if (p->nstrings >= max_strings || p->nstrings >= UINT32_MAX - 1 || p->arena_len + len + 1 > max_bytes ||
        p->arena_len + len + 1 > UINT32_MAX) {
        return -1;
    }
    xgrow((void **)&p->offsets, &p->offsets_cap, (size_t)p->nstrings + 2, sizeof *p->offsets);
    xgrow((void **)&p->arena, &p->arena_cap, p->arena_len + len + 1, 1);
    memcpy(p->arena + p->arena_len, str, len);
    p->arena[p->arena_len + len] = 0;
    p->offsets[++p->nstrings] = (uint32_t)p->arena_len;
    p->arena_len += (size_t)len + 1;
    return 0;
}

static uint64_t addr_hash(uint32_t module, uint64_t offset)
{
    return idmap_mix(offset ^ idmap_mix(module));
}

static uint64_t rehash(const void *ctx, uint32_t i)
{
    const struct packed *p = ctx;
    return addr_hash(p->addrs[i].module, p->addrs[i].offset);
}

struct addr_key {
    const struct packed *p;
    uint32_t module;
    uint64_t offset;
};

static int same_addr(const void *ctx, uint32_t i)
{
    const struct addr_key *k = ctx;
    return k->p->addrs[i].module == k->module && k->p->addrs[i].offset == k->offset;
}

/* String `id` (checked when its frame was added): NULL for 0, unknown. */
static const char *string_of(const struct packed *p, uint32_t id)
{
    return id ? p->arena + p->offsets[id] : NULL;
}

int packed_add_frames(struct packed *p, uint32_t module, const struct memfmt_record *rec, uint32_t max_addrs)
{
    uint32_t nf = rec->u.pack_frames.nframes;
    if (p->naddrs >= max_addrs || nf == 0 || nf > MEMFMT_MAX_PACK_FRAMES) {
        return -1;
    }
    struct held_frame f[MEMFMT_MAX_PACK_FRAMES];
    for (uint32_t i = 0; i < nf; i++) {
        const struct memfmt_pack_frame *pf = &rec->u.pack_frames.frames[i];
        if (pf->function > p->nstrings || pf->file > p->nstrings) {
            return -1; /* a string not defined before */
        }
        f[i].function = pf->function;
        f[i].file = pf->file;
        f[i].line = pf->line;
        f[i].inlined = (pf->flags & MEMFMT_PF_INLINED) != 0;
    }
    idmap_reserve(&p->by_addr, (size_t)p->naddrs + 1, rehash, p);
    struct addr_key key = {p, module, rec->u.pack_frames.offset};
    size_t slot;
    if (idmap_find(&p->by_addr, addr_hash(module, key.offset), same_addr, &key, &slot) != IDMAP_NONE) {
        return -1;
    }
    xgrow((void **)&p->addrs, &p->addrs_cap, (size_t)p->naddrs + 1, sizeof *p->addrs);
    xgrow((void **)&p->frames, &p->frames_cap, p->nframes + nf, sizeof *p->frames);
    memcpy(&p->frames[p->nframes], f, nf * sizeof *f);
    p->addrs[p->naddrs] = (struct packed_addr){module, key.offset, (uint32_t)p->nframes, nf};
    p->nframes += nf;
    idmap_put(&p->by_addr, slot, p->naddrs++);
    return 0;
}

int packed_find(const struct packed *p, uint32_t module, uint64_t offset, struct packed_frame *out, int max)
{
    struct addr_key key = {p, module, offset};
    size_t slot;
    uint32_t i = idmap_find(&p->by_addr, addr_hash(module, offset), same_addr, &key, &slot);
    if (i == IDMAP_NONE || max < 1) {
        return 0;
    }
    const struct packed_addr *a = &p->addrs[i];
    /* Innermost first: a longer chain keeps its innermost frames, as
     * symbolize_lookup() does. */
    int n = a->count < (uint32_t)max ? (int)a->count : max;
    for (int k = 0; k < n; k++) {
        const struct held_frame *h = &p->frames[a->first + (uint32_t)k];
        out[k] = (struct packed_frame){string_of(p, h->function), string_of(p, h->file), h->line, h->inlined};
    }
    return n;
}

uint32_t packed_addresses(const struct packed *p)
{
    return p->naddrs;
}
