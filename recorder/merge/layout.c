// SPDX-License-Identifier: MIT
/* The layout of glibc's main heap as memrec sees it from the addresses of
 * the live blocks (LAYOUT records, docs/format.md "Heap layout"): which
 * live block sits at the top of the heap, how many free whole pages lie
 * below each live block down to the one below it, and which pages hold
 * only one stack's live blocks. Only memrec knows the addresses (the file
 * names none), so only it can say this. Runs in memrec, at the recorder's
 * heap samples (HEAPINFO records, which carry the heap's range), bounded
 * in time and memory: see LAYOUT_* below. */
#include <time.h>

#include "merge.h"
#include "merge_internal.h"

/* The figures count pages of 4 KiB, the unit in which the kernel takes
 * memory back (madvise, brk). */
#define LAYOUT_PAGE 4096u
/* glibc's chunk: a 16-byte header before the user's bytes (prev_size and
 * size), sizes rounded up to 16 with the 8 bytes of the next chunk's
 * prev_size field used by the block, at least 32 bytes. */
#define CHUNK_HEAD 16u
#define CHUNK_MIN 32u
/* At most one layout every LAYOUT_MIN_NS, and no sooner than
 * LAYOUT_BUDGET times the time the last one took after it: memrec spends
 * at most 2% of its time on layouts. */
#define LAYOUT_MIN_NS 100000000ull
#define LAYOUT_BUDGET 50
/* Beyond this many live blocks in the heap no layout is made: its sort
 * array (16 bytes a block) would cost memrec more than the address map
 * itself. */
#define LAYOUT_MAX_BLOCKS (1u << 23)

struct lblock {
    uint64_t addr;
    uint32_t info;
    uint32_t unused;
};

struct lstack {
    uint32_t trace;
    uint64_t held_pages, blocks, pages_alone;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int by_addr(const void *a, const void *b)
{
    uint64_t x = ((const struct lblock *)a)->addr, y = ((const struct lblock *)b)->addr;
    return x < y ? -1 : x > y;
}

static int by_rank(const void *a, const void *b)
{
    const struct lstack *x = a, *y = b;
    if (x->held_pages != y->held_pages) {
        return x->held_pages > y->held_pages ? -1 : 1;
    }
    if (x->pages_alone != y->pages_alone) {
        return x->pages_alone > y->pages_alone ? -1 : 1;
    }
    return x->trace < y->trace ? -1 : x->trace > y->trace;
}

/* The accumulator of a trace, made if new. */
static struct lstack *stack_of(struct u64map *ix, struct lstack **st, size_t *n, size_t *cap, uint32_t trace)
{
    int existed;
    struct u64map_cell *c = u64map_claim(ix, trace, &existed);
    if (!existed) {
        xgrow((void **)st, cap, *n + 1, sizeof **st);
        (*st)[*n] = (struct lstack){trace, 0, 0, 0};
        c->val = (*n)++;
    }
    return &(*st)[c->val];
}

/* Whole pages inside [lo, hi). */
static uint64_t whole_pages(uint64_t lo, uint64_t hi)
{
    uint64_t first = (lo + LAYOUT_PAGE - 1) / LAYOUT_PAGE, last = hi / LAYOUT_PAGE;
    return hi > lo && last > first ? last - first : 0;
}

/* The layout of the heap [start, end) from the live blocks of the address
 * map: 0 with *r filled in, -1 when there are too many blocks. */
static int compute(struct merge *m, uint64_t start, uint64_t end, struct memfmt_record *r)
{
    struct lblock *b = NULL;
    size_t nb = 0, bcap = 0;
    for (size_t i = 0; i < m->addr_block.cap; i++) {
        const struct u64map_cell *c = &m->addr_block.cells[i];
        /* Blocks set apart as start-up have no size kept: left out. */
        if (c->key < start || c->key >= end || c->val == BLOCK_SET_APART) {
            continue;
        }
        if (nb == LAYOUT_MAX_BLOCKS) {
            free(b);
            return -1;
        }
        xgrow((void **)&b, &bcap, nb + 1, sizeof *b);
        b[nb++] = (struct lblock){c->key, block_info(c->val), 0};
    }
    qsort(b, nb, sizeof *b, by_addr);
    *r = (struct memfmt_record){.tag = MEMFMT_REC_LAYOUT};
    struct memfmt_record *out = r;
    out->u.layout.page = LAYOUT_PAGE;
    out->u.layout.heap_bytes = end - start;
    struct u64map ix = {0};
    struct lstack *st = NULL;
    size_t nst = 0, stcap = 0;
    uint64_t prev_end = start;
    uint64_t page = UINT64_MAX; /* the page the latest block ends in */
    size_t owner = 0;
    int mixed = 0;
    for (size_t i = 0; i < nb; i++) {
        const struct pair_info *pi = &m->infos[b[i].info];
        uint64_t cstart = b[i].addr - CHUNK_HEAD < start ? start : b[i].addr - CHUNK_HEAD;
        uint64_t csize = (pi->size + 8 + 15) & ~(uint64_t)15;
        uint64_t cend = b[i].addr - CHUNK_HEAD + (csize < CHUNK_MIN ? CHUNK_MIN : csize);
        size_t k = (size_t)(stack_of(&ix, &st, &nst, &stcap, pi->trace) - st);
        uint64_t held = whole_pages(prev_end, cstart);
        if (held) {
            st[k].held_pages += held;
            st[k].blocks++;
            out->u.layout.free_pages += held;
        }
        out->u.layout.live_bytes += pi->size;
        out->u.layout.live_blocks++;
        /* Pages alone: those the block touches, walked in address order. */
        uint64_t pa = cstart / LAYOUT_PAGE, pb = (cend - 1) / LAYOUT_PAGE;
        if (pa == page) {
            mixed |= owner != k;
        } else {
            if (page != UINT64_MAX && !mixed) {
                st[owner].pages_alone++;
            }
            page = pa;
            owner = k;
            mixed = 0;
        }
        if (pb > page) {
            if (!mixed) {
                st[owner].pages_alone++;
            }
            st[k].pages_alone += pb - pa - 1;
            page = pb;
            owner = k;
            mixed = 0;
        }
        if (cend > prev_end) {
            prev_end = cend;
        }
        if (i + 1 == nb) {
            out->u.layout.top_end = cend - start;
            out->u.layout.top_trace = pi->trace;
            out->u.layout.top_size = pi->size;
            out->u.layout.top_held_pages = held;
        }
    }
    if (page != UINT64_MAX && !mixed) {
        st[owner].pages_alone++;
    }
    free(b);
    size_t kept = 0;
    for (size_t i = 0; i < nst; i++) {
        if (st[i].held_pages || st[i].pages_alone) {
            st[kept++] = st[i];
        }
    }
    qsort(st, kept, sizeof *st, by_rank);
    out->u.layout.ntraces = kept;
    out->u.layout.n = kept < MEMFMT_MAX_LAYOUT ? (uint32_t)kept : MEMFMT_MAX_LAYOUT;
    for (uint32_t i = 0; i < out->u.layout.n; i++) {
        out->u.layout.e[i] =
            (struct memfmt_layout_entry){st[i].trace, st[i].held_pages, st[i].blocks, st[i].pages_alone};
    }
    free(st);
    u64map_release(&ix);
    return 0;
}

static int write_layout(struct merge *m)
{
    struct memfmt_record r;
    uint64_t t0 = now_ns();
    if (compute(m, m->heap_start, m->heap_end, &r) < 0) {
        m->layout_next_ns = t0 + LAYOUT_MIN_NS;
        return 0;
    }
    uint64_t took = now_ns() - t0;
    r.u.layout.cost_ns = took;
    m->layout_next_ns = t0 + (took * LAYOUT_BUDGET > LAYOUT_MIN_NS ? took * LAYOUT_BUDGET : LAYOUT_MIN_NS);
    m->layouts++;
    return out(m, &r);
}

void layout_note_record(struct merge *m, const struct memfmt_record *r)
{
    if (r->tag == MEMFMT_REC_PROCESS) {
        /* A sampled recording knows the addresses of its sampled blocks only. */
        m->layout_sampled = r->u.process.sample_rate != 0;
    }
}

int layout_after_heapinfo(struct merge *m, const struct memfmt_record *r)
{
    /* The recorder samples only glibc's allocator (mallinfo2 of the malloc
     * in use): another allocator's heap has no such layout. */
    if (m->layout_sampled || !r->u.heapinfo.brk_start || r->u.heapinfo.brk_end < r->u.heapinfo.brk_start) {
        return 0;
    }
    m->heap_start = r->u.heapinfo.brk_start;
    m->heap_end = r->u.heapinfo.brk_end;
    return now_ns() < m->layout_next_ns ? 0 : write_layout(m);
}

int layout_final(struct merge *m)
{
    if (!m->heap_start || m->layout_sampled) {
        return 0;
    }
    return write_layout(m);
}
