// SPDX-License-Identifier: MIT
/* The frames of a packed recording (packed.h): a string table and a hash
 * of (module, address) -> a run of frames. Nothing here trusts a number
 * from the file: string ids are checked against the strings defined
 * before, and the tables grow with records read, never with a count. */
#include "packed.h"

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

struct packed {
    char **strings; /* [0] unused: id 0 is "unknown" */
    uint32_t nstrings; /* ids 1..nstrings are defined */
    size_t strings_cap;
    struct packed_addr *addrs;
    uint32_t naddrs;
    size_t addrs_cap;
    struct packed_frame *frames;
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
    for (uint32_t i = 1; i <= p->nstrings; i++) {
        free(p->strings[i]);
    }
    free(p->strings);
    free(p->addrs);
    free(p->frames);
    idmap_release(&p->by_addr);
    free(p);
}

int packed_add_string(struct packed *p, const char *str, uint32_t len)
{
    if (p->nstrings >= PACKED_MAX_STRINGS) {
        return -1;
    }
    xgrow((void **)&p->strings, &p->strings_cap, (size_t)p->nstrings + 2, sizeof *p->strings);
    char *s = xmalloc((size_t)len + 1);
    memcpy(s, str, len);
    s[len] = 0;
    p->strings[++p->nstrings] = s;
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

/* String `id` of the table: NULL for 0 (unknown); -1 in *bad when it was never defined. */
static const char *string_of(const struct packed *p, uint32_t id, int *bad)
{
    if (id > p->nstrings) {
        *bad = 1;
        return NULL;
    }
    return id ? p->strings[id] : NULL;
}

int packed_add_frames(struct packed *p, uint32_t module, const struct memfmt_record *rec, uint32_t max_addrs)
{
    uint32_t nf = rec->u.pack_frames.nframes;
    if (p->naddrs >= max_addrs || nf == 0 || nf > MEMFMT_MAX_PACK_FRAMES) {
        return -1;
    }
    struct packed_frame f[MEMFMT_MAX_PACK_FRAMES];
    int bad = 0;
    for (uint32_t i = 0; i < nf; i++) {
        const struct memfmt_pack_frame *pf = &rec->u.pack_frames.frames[i];
        f[i].function = string_of(p, pf->function, &bad);
        f[i].file = string_of(p, pf->file, &bad);
        f[i].line = pf->line;
        f[i].inlined = (pf->flags & MEMFMT_PF_INLINED) != 0;
    }
    if (bad) {
        return -1;
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

const struct packed_frame *packed_find(const struct packed *p, uint32_t module, uint64_t offset, uint32_t *n)
{
    struct addr_key key = {p, module, offset};
    size_t slot;
    uint32_t i = idmap_find(&p->by_addr, addr_hash(module, offset), same_addr, &key, &slot);
    if (i == IDMAP_NONE) {
        *n = 0;
        return NULL;
    }
    *n = p->addrs[i].count;
    return &p->frames[p->addrs[i].first];
}

uint32_t packed_addresses(const struct packed *p)
{
    return p->naddrs;
}

uint32_t packed_strings(const struct packed *p)
{
    return p->nstrings;
}
