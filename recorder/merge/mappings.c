// SPDX-License-Identifier: MIT
/* The merge's direct mappings: mmap, munmap, mremap and brk events
 * applied to the set of anonymous ranges (mapranges.h) and written as MAP
 * records. */
#include "merge.h"

#include "merge_internal.h"

/* ---- direct mappings ---- */

/* What a removal from the set writes: one MAP record per piece, giving
 * the bytes back to the trace that mapped them. */
struct unmap_out {
    struct merge *m;
    uint32_t thread, kind;
    int rc;
};

static void write_unmapped(void *ctx, uint32_t trace, uint64_t bytes)
{
    struct unmap_out *u = ctx;
    struct memfmt_record r = {.tag = MEMFMT_REC_MAP};
    r.u.map.thread = u->thread;
    r.u.map.kind = u->kind;
    r.u.map.trace = trace;
    r.u.map.delta = -(int64_t)bytes;
    int rc = out(u->m, &r);
    if (rc < 0) {
        u->rc = rc;
    }
}

static int write_mapped(struct merge *m, uint32_t thread, uint32_t kind, uint32_t trace, int64_t delta, int call)
{
    struct memfmt_record r = {.tag = MEMFMT_REC_MAP};
    r.u.map.thread = thread;
    r.u.map.kind = kind;
    r.u.map.trace = trace;
    r.u.map.delta = delta;
    r.u.map.call = (uint32_t)call;
    return out(m, &r);
}

/* A new range replaces whatever the set held there (MAP_FIXED, or an unmap
 * the recorder could not see); mremap keeps the owner of the old range. */
int apply_map(struct merge *m, struct stream *s, struct qev *e)
{
    struct unmap_out u = {m, s->thread, MEMFMT_MK_MMAP, 0};
    switch (e->type) {
    case Q_MAP:
        mapranges_remove(&m->maps, e->addr, e->size, write_unmapped, &u);
        mapranges_add(&m->maps, e->addr, e->size, e->trace);
        return u.rc < 0 ? u.rc : write_mapped(m, s->thread, MEMFMT_MK_MMAP, e->trace, (int64_t)e->size, 1);
    case Q_UNMAP:
        u.kind = e->kind;
        mapranges_remove(&m->maps, e->addr, e->size, write_unmapped, &u);
        return u.rc;
    case Q_MREMAP_OLD: {
        /* Silent: the next event of this stream, Q_MREMAP_NEW, writes the
         * change as one delta. Only the old range's owner is kept (mremap
         * works on one mapping). */
        s->remap_trace = mapranges_owner(&m->maps, e->addr, e->size);
        s->remap_bytes = mapranges_remove(&m->maps, e->addr, e->size, NULL, NULL);
        return 0;
    }
    case Q_MREMAP_NEW:
        u.kind = MEMFMT_MK_MREMAP;
        mapranges_remove(&m->maps, e->addr, e->size, write_unmapped, &u);
        if (u.rc < 0 || s->remap_bytes == 0) {
            return u.rc; /* not a range of ours: the allocator's, or a file */
        }
        mapranges_add(&m->maps, e->addr, e->size, s->remap_trace);
        int64_t delta = (int64_t)e->size - (int64_t)s->remap_bytes;
        s->remap_bytes = 0;
        return delta ? write_mapped(m, s->thread, MEMFMT_MK_MREMAP, s->remap_trace, delta, 0) : 0;
    default: /* Q_BRK: addr = old break, size = new break */
        u.kind = MEMFMT_MK_BRK;
        if (e->size < e->addr) {
            mapranges_remove(&m->maps, e->size, e->addr - e->size, write_unmapped, &u);
            return u.rc;
        }
        mapranges_remove(&m->maps, e->addr, e->size - e->addr, write_unmapped, &u);
        mapranges_add(&m->maps, e->addr, e->size - e->addr, e->trace);
        return u.rc < 0 ? u.rc : write_mapped(m, s->thread, MEMFMT_MK_BRK, e->trace, (int64_t)(e->size - e->addr), 1);
    }
}
