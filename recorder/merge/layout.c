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
/* Beyond this many live blocks in the heap, or this many pages of it (16
 * GiB: 24 bytes a page, 96 MiB), no layout is made: a layout takes about
 * 37 ns a block (1,722,912 blocks of the tree benchmark: 63 ms), and the
 * merge, which reads the program's pipes, waits for it; 2^21 blocks stay
 * under the 100 ms that memrec --pid lets a program wait by default. */
#define LAYOUT_MAX_BLOCKS (1u << 21)
#define LAYOUT_MAX_PAGES (1u << 22)

/* What a layout keeps per page of the heap: which stacks' blocks touch it
 * (one, or several: mixed) and the lowest block that starts on it. */
struct lpage {
    uint64_t low_addr; /* chunk start of the lowest block starting on the page; 0: none */
    uint32_t owner; /* stack index + 1 of the blocks touching it; 0: no live block */
    uint32_t low_k; /* stack index of that lowest block */
    uint32_t mixed; /* blocks of more than one stack touch it */
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
static uint32_t stack_of(struct u64map *ix, struct lstack **st, size_t *n, size_t *cap, uint32_t trace)
{
    int existed;
    struct u64map_cell *c = u64map_claim(ix, trace, &existed);
    if (!existed) {
        xgrow((void **)st, cap, *n + 1, sizeof **st);
        (*st)[*n] = (struct lstack){trace, 0, 0, 0};
        c->val = (*n)++;
    }
    return (uint32_t)c->val;
}

static void touch(struct lpage *pg, uint32_t k)
{
    if (!pg->owner) {
        pg->owner = k + 1;
    } else if (pg->owner != k + 1) {
        pg->mixed = 1;
    }
}

/* The layout of the heap [start, end) from the live blocks of the address
 * map, in one pass over the map and one over the heap's pages, no sort:
 * the free whole pages below a block, down to the live block below it,
 * are the untouched pages just below the page it starts on, when it is
 * the lowest block starting there (a block starting lower on that page
 * has them instead; a block reaching into the page from below would have
 * touched them). Pages count from the first whole page of the heap.
 * Returns 0 with *r filled in, -1 when the heap or its blocks are too many. */
static int compute(struct merge *m, uint64_t start, uint64_t end, struct memfmt_record *r)
{
    uint64_t base = (start + LAYOUT_PAGE - 1) / LAYOUT_PAGE, top_page = end / LAYOUT_PAGE;
    uint64_t npages = top_page > base ? top_page - base : 0;
    if (npages > LAYOUT_MAX_PAGES || m->addr_block.count > (size_t)LAYOUT_MAX_BLOCKS * 4) {
        return -1;
    }
    struct lpage *pages = xcalloc(npages ? npages : 1, sizeof *pages);
    *r = (struct memfmt_record){.tag = MEMFMT_REC_LAYOUT};
    struct memfmt_record *out = r;
    out->u.layout.page = LAYOUT_PAGE;
    out->u.layout.heap_bytes = end - start;
    struct u64map ix = {0};
    struct lstack *st = NULL;
    size_t nst = 0, stcap = 0;
    uint64_t top_addr = 0, top_cstart = 0, top_end = 0;
    for (size_t i = 0; i < m->addr_block.cap; i++) {
        const struct u64map_cell *c = &m->addr_block.cells[i];
        /* Blocks set apart as start-up have no size kept: left out. */
        if (c->key < start || c->key >= end || c->val == BLOCK_SET_APART) {
            continue;
        }
        if (out->u.layout.live_blocks == LAYOUT_MAX_BLOCKS) {
            free(pages);
            free(st);
            u64map_release(&ix);
            return -1;
        }
        const struct pair_info *pi = &m->infos[block_info(c->val)];
        uint64_t cstart = c->key - CHUNK_HEAD < start ? start : c->key - CHUNK_HEAD;
        uint64_t csize = (pi->size + 8 + 15) & ~(uint64_t)15;
        uint64_t cend = c->key - CHUNK_HEAD + (csize < CHUNK_MIN ? CHUNK_MIN : csize);
        uint32_t k = stack_of(&ix, &st, &nst, &stcap, pi->trace);
        out->u.layout.live_bytes += pi->size;
        out->u.layout.live_blocks++;
        if (c->key >= top_addr) {
            top_addr = c->key;
            top_cstart = cstart;
            top_end = cend;
            out->u.layout.top_trace = pi->trace;
            out->u.layout.top_size = pi->size;
        }
        uint64_t pa = cstart / LAYOUT_PAGE, pb = (cend - 1) / LAYOUT_PAGE;
        for (uint64_t p = pa < base ? base : pa; p <= pb && p - base < npages; p++) {
            struct lpage *pg = &pages[p - base];
            touch(pg, k);
            if (p == pa && (!pg->low_addr || cstart < pg->low_addr)) {
                pg->low_addr = cstart;
                pg->low_k = k;
            }
        }
    }
    uint64_t run = 0; /* untouched pages since the last touched one */
    uint64_t last = top_end > base * LAYOUT_PAGE ? (top_end - 1) / LAYOUT_PAGE - base : 0;
    for (uint64_t p = 0; out->u.layout.live_blocks && p < npages && p <= last; p++) {
        const struct lpage *pg = &pages[p];
        if (!pg->owner) {
            run++;
            continue;
        }
        if (run && pg->low_addr) {
            st[pg->low_k].held_pages += run;
            st[pg->low_k].blocks++;
            out->u.layout.free_pages += run;
            if (pg->low_addr == top_cstart) {
                out->u.layout.top_held_pages = run;
            }
        }
        run = 0;
        if (!pg->mixed) {
            st[pg->owner - 1].pages_alone++;
        }
    }
    if (out->u.layout.live_blocks) {
        out->u.layout.top_end = top_end - start;
    }
    free(pages);
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
