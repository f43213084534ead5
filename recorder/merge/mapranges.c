// SPDX-License-Identifier: MIT
/* The set of directly mapped anonymous ranges (mapranges.h): a sorted
 * array of disjoint ranges, cut and spliced as munmap, mremap and brk
 * change the address space. */
#include "mapranges.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

void mapranges_release(struct mapranges *m)
{
    free(m->v);
    m->v = NULL;
    m->n = m->cap = 0;
}

/* Index of the first range whose end lies above `addr`. */
static size_t first_ending_after(const struct mapranges *m, uint64_t addr)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->v[mid].end <= addr) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static void insert_at(struct mapranges *m, size_t i, struct maprange r)
{
    xgrow((void **)&m->v, &m->cap, m->n + 1, sizeof *m->v);
    memmove(m->v + i + 1, m->v + i, (m->n - i) * sizeof *m->v);
    m->v[i] = r;
    m->n++;
}

uint64_t mapranges_remove(struct mapranges *m, uint64_t start, uint64_t len, mapranges_fn fn, void *ctx)
{
    /* An end past the top of the address space is clamped, not wrapped. */
    uint64_t end = len > UINT64_MAX - start ? UINT64_MAX : start + len;
    uint64_t removed = 0;
    size_t i = first_ending_after(m, start);
    while (i < m->n && m->v[i].start < end) {
        struct maprange *r = &m->v[i];
        uint64_t lo = r->start > start ? r->start : start;
        uint64_t hi = r->end < end ? r->end : end;
        removed += hi - lo;
        if (fn) {
            fn(ctx, r->trace, hi - lo);
        }
        if (r->start < lo && r->end > hi) {
            /* A hole in the middle: the range becomes two. */
            struct maprange upper = {hi, r->end, r->trace};
            r->end = lo;
            insert_at(m, i + 1, upper);
            return removed;
        }
        if (r->start < lo) {
            r->end = lo; /* keep the part below */
            i++;
        } else if (r->end > hi) {
            r->start = hi; /* keep the part above; nothing further can overlap */
            return removed;
        } else {
            memmove(m->v + i, m->v + i + 1, (m->n - i - 1) * sizeof *m->v);
            m->n--;
        }
    }
    return removed;
}

void mapranges_add(struct mapranges *m, uint64_t start, uint64_t len, uint32_t trace)
{
    if (len == 0 || len > UINT64_MAX - start) {
        return;
    }
    mapranges_remove(m, start, len, NULL, NULL);
    insert_at(m, first_ending_after(m, start), (struct maprange){start, start + len, trace});
}

uint32_t mapranges_owner(const struct mapranges *m, uint64_t start, uint64_t len)
{
    size_t i = first_ending_after(m, start);
    if (i < m->n && len && (m->v[i].start <= start || m->v[i].start - start < len)) {
        return m->v[i].trace;
    }
    return 0;
}

uint64_t mapranges_bytes(const struct mapranges *m)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < m->n; i++) {
        sum += m->v[i].end - m->v[i].start;
    }
    return sum;
}
