// SPDX-License-Identifier: MIT
/* The layout of glibc's main heap, and of its thread arenas' heaps, as
 * memrec sees it from the addresses of the live blocks (LAYOUT records,
 * docs/format.md "Heap layout"): which live block sits at the top of a
 * heap, how many free whole pages lie
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
/* glibc's HEAP_MAX_SIZE on 64-bit systems: a thread arena's heap is
 * reserved at this size and alignment. */
#define ARENA_HEAP ((uint64_t)64 << 20)
/* At most this many 64 MiB windows of blocks outside the main heap. */
#define LAYOUT_MAX_WINDOWS 4096u
/* glibc's default mmap threshold (M_MMAP_THRESHOLD): smaller chunks come
 * from a heap. */
#define MMAP_MIN ((uint64_t)128 << 10)

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

/* The stacks of a layout, over every heap it lays out. */
struct lstacks {
    struct u64map ix; /* trace -> index in st */
    struct lstack *st;
    size_t n, cap;
};

/* One heap being laid out: [start, end), its pages from the first whole
 * one at or after `first` (a thread heap's first page holds glibc's
 * headers: never free), and what its blocks add up to. */
struct lheap {
    struct lpage *pages;
    uint64_t start, base, npages;
    uint64_t top_addr, top_cstart, top_end, top_size;
    uint32_t top_trace, top_k;
    uint64_t live_bytes, live_blocks;
    uint64_t free_pages, top_held_pages;
};

static void heap_init(struct lheap *h, struct lpage *pages, uint64_t start, uint64_t first, uint64_t end)
{
    uint64_t base = (first + LAYOUT_PAGE - 1) / LAYOUT_PAGE, top_page = end / LAYOUT_PAGE;
    *h = (struct lheap){.pages = pages, .start = start, .base = base};
    h->npages = top_page > base ? top_page - base : 0;
}

/* Block `addr` of pair `pi`, in the heap, as its glibc chunk. */
static void heap_add(struct lheap *h, struct lstacks *S, const struct pair_info *pi, uint64_t addr)
{
    uint64_t cstart = addr - CHUNK_HEAD < h->start ? h->start : addr - CHUNK_HEAD;
    uint64_t csize = (pi->size + 8 + 15) & ~(uint64_t)15;
    uint64_t cend = addr - CHUNK_HEAD + (csize < CHUNK_MIN ? CHUNK_MIN : csize);
    uint32_t k = stack_of(&S->ix, &S->st, &S->n, &S->cap, pi->trace);
    h->live_bytes += pi->size;
    h->live_blocks++;
    if (addr >= h->top_addr) {
        h->top_addr = addr;
        h->top_cstart = cstart;
        h->top_end = cend;
        h->top_trace = pi->trace;
        h->top_size = pi->size;
        h->top_k = k;
    }
    uint64_t pa = cstart / LAYOUT_PAGE, pb = (cend - 1) / LAYOUT_PAGE;
    for (uint64_t p = pa < h->base ? h->base : pa; p <= pb && p - h->base < h->npages; p++) {
        struct lpage *pg = &h->pages[p - h->base];
        touch(pg, k);
        if (p == pa && (!pg->low_addr || cstart < pg->low_addr)) {
            pg->low_addr = cstart;
            pg->low_k = k;
        }
    }
}

/* The heap's pages up to its top block: runs of free pages to the lowest
 * block starting above them, pages alone to their one stack. */
static void heap_walk(struct lheap *h, struct lstacks *S)
{
    uint64_t run = 0; /* untouched pages since the last touched one */
    uint64_t last = h->top_end > h->base * LAYOUT_PAGE ? (h->top_end - 1) / LAYOUT_PAGE - h->base : 0;
    for (uint64_t p = 0; h->live_blocks && p < h->npages && p <= last; p++) {
        const struct lpage *pg = &h->pages[p];
        if (!pg->owner) {
            run++;
            continue;
        }
        if (run && pg->low_addr) {
            S->st[pg->low_k].held_pages += run;
            S->st[pg->low_k].blocks++;
            h->free_pages += run;
            if (pg->low_addr == h->top_cstart) {
                h->top_held_pages = run;
            }
        }
        run = 0;
        if (!pg->mixed) {
            S->st[pg->owner - 1].pages_alone++;
        }
    }
}

/* The ranked entries of the record, and the stacks released. */
static void take_entries(struct lstacks *S, struct memfmt_record *out)
{
    size_t kept = 0;
    for (size_t i = 0; i < S->n; i++) {
        if (S->st[i].held_pages || S->st[i].pages_alone) {
            S->st[kept++] = S->st[i];
        }
    }
    if (kept > 1) { /* no qsort() of the NULL of no stack */
        qsort(S->st, kept, sizeof *S->st, by_rank);
    }
    out->u.layout.ntraces = kept;
    out->u.layout.n = kept < MEMFMT_MAX_LAYOUT ? (uint32_t)kept : MEMFMT_MAX_LAYOUT;
    for (uint32_t i = 0; i < out->u.layout.n; i++) {
        const struct lstack *x = &S->st[i];
        out->u.layout.e[i] = (struct memfmt_layout_entry){x->trace, x->held_pages, x->blocks, x->pages_alone};
    }
    free(S->st);
    u64map_release(&S->ix);
}

static void new_record(struct memfmt_record *r, uint32_t heap)
{
    *r = (struct memfmt_record){.tag = MEMFMT_REC_LAYOUT};
    r->u.layout.page = LAYOUT_PAGE;
    r->u.layout.heap = heap;
}

/* The layout of the main heap [start, end) from the live blocks of the
 * address map, in one pass over the map and one over the heap's pages, no
 * sort: the free whole pages below a block, down to the live block below
 * it, are the untouched pages just below the page it starts on, when it is
 * the lowest block starting there (a block starting lower on that page
 * has them instead; a block reaching into the page from below would have
 * touched them). Pages count from the first whole page of the heap.
 * Returns 0 with *r filled in, -1 when the heap or its blocks are too many. */
static int compute(struct merge *m, uint64_t start, uint64_t end, struct memfmt_record *r)
{
    struct lheap h;
    heap_init(&h, NULL, start, start, end);
    if (h.npages > LAYOUT_MAX_PAGES || m->addr_block.count > (size_t)LAYOUT_MAX_BLOCKS * 4) {
        return -1;
    }
    h.pages = xcalloc(h.npages ? h.npages : 1, sizeof *h.pages);
    struct lstacks S = {0};
    for (size_t i = 0; i < m->addr_block.cap; i++) {
        const struct u64map_cell *c = &m->addr_block.cells[i];
        /* Blocks set apart as start-up have no size kept: left out. */
        if (c->key < start || c->key >= end || c->val == BLOCK_SET_APART) {
            continue;
        }
        if (h.live_blocks == LAYOUT_MAX_BLOCKS) {
            free(h.pages);
            free(S.st);
            u64map_release(&S.ix);
            return -1;
        }
        heap_add(&h, &S, &m->infos[block_info(c->val)], c->key);
    }
    heap_walk(&h, &S);
    free(h.pages);
    new_record(r, MEMFMT_HEAP_MAIN);
    r->u.layout.heap_bytes = end - start;
    r->u.layout.heaps = 1;
    r->u.layout.live_bytes = h.live_bytes;
    r->u.layout.live_blocks = h.live_blocks;
    r->u.layout.free_pages = h.free_pages;
    if (h.live_blocks) {
        r->u.layout.top_end = h.top_end - start;
        r->u.layout.top_trace = h.top_trace;
        r->u.layout.top_size = h.top_size;
        r->u.layout.top_held_pages = h.top_held_pages;
    }
    take_entries(&S, r);
    return 0;
}

/* Keep heap h's top among the record's (at most MEMFMT_MAX_LAYOUT, ranked
 * by held pages, then free pages): the weakest goes when it is full. */
static void add_top(struct memfmt_record *r, const struct lheap *h)
{
    struct memfmt_layout_top t = {h->top_trace, h->top_size, h->top_held_pages, h->free_pages, h->live_blocks};
    uint32_t n = r->u.layout.ntops;
    if (n == MEMFMT_MAX_LAYOUT) {
        const struct memfmt_layout_top *w = &r->u.layout.tops[n - 1];
        if (w->held_pages > t.held_pages || (w->held_pages == t.held_pages && w->free_pages >= t.free_pages)) {
            return;
        }
        n--;
    }
    while (n > 0 &&
           (r->u.layout.tops[n - 1].held_pages < t.held_pages || (r->u.layout.tops[n - 1].held_pages == t.held_pages &&
                                                                  r->u.layout.tops[n - 1].free_pages < t.free_pages))) {
        r->u.layout.tops[n] = r->u.layout.tops[n - 1];
        n--;
    }
    r->u.layout.tops[n] = t;
    if (r->u.layout.ntops < MEMFMT_MAX_LAYOUT) {
        r->u.layout.ntops++;
    }
}

/* A block glibc mapped on its own: a large one (at least the default mmap
 * threshold) whose chunk starts a page. */
static int looks_mapped(uint64_t addr, uint64_t size)
{
    return (addr & (LAYOUT_PAGE - 1)) == CHUNK_HEAD && size + 8 >= MMAP_MIN;
}

/* The thread arenas' heaps: glibc maps each heap of an arena other than
 * the main one at an address aligned to its largest size (64 MiB, glibc's
 * heap_for_ptr), its first page holding the heap's header and the arena's
 * state; a chunk mapped on its own is never inside one (the heap reserves
 * all 64 MiB). So the live blocks outside the main heap, grouped by their
 * 64 MiB window, are a heap's when one of them is not a mapped chunk's
 * (looks_mapped()), and the blocks of the other windows are the mapped
 * chunks: their count must be the allocator's (`hblks`, mallinfo2's count
 * of mapped chunks), else the layout would be a guess and none is made.
 * One record for all of them: their stacks summed, the top block of the
 * heap with the most free pages directly below its top. Returns 0 with *r
 * filled in (heaps 0: no thread heap), -1 when it cannot be made. */
static int compute_arenas(struct merge *m, uint64_t hblks, struct memfmt_record *r)
{
    struct u64map win = {0}; /* window -> its index + 1 */
    uint64_t *wstart = NULL; /* per window: its address */
    uint32_t *wcount = NULL, *wheap = NULL; /* per window: its blocks; 1 when it is a heap */
    size_t nw = 0, wcap = 0, wcap2 = 0, wcap3 = 0, nb = 0;
    int rc = -1;
    for (size_t i = 0; i < m->addr_block.cap; i++) {
        const struct u64map_cell *c = &m->addr_block.cells[i];
        if (!c->key || (c->key >= m->heap_start && c->key < m->heap_end) || c->val == BLOCK_SET_APART) {
            continue;
        }
        int existed;
        struct u64map_cell *w = u64map_claim(&win, c->key & ~(ARENA_HEAP - 1), &existed);
        if (!existed) {
            if (nw == LAYOUT_MAX_WINDOWS) {
                goto out;
            }
            xgrow((void **)&wstart, &wcap, nw + 1, sizeof *wstart);
            xgrow((void **)&wcount, &wcap2, nw + 1, sizeof *wcount);
            xgrow((void **)&wheap, &wcap3, nw + 1, sizeof *wheap);
            wstart[nw] = c->key & ~(ARENA_HEAP - 1);
            wcount[nw] = 0;
            wheap[nw] = 0;
            w->val = ++nw;
        }
        if (++nb > LAYOUT_MAX_BLOCKS) {
            goto out;
        }
        wcount[w->val - 1]++;
        if (!looks_mapped(c->key, m->infos[block_info(c->val)].size)) {
            wheap[w->val - 1] = 1;
        }
    }
    uint64_t mapped = 0;
    for (size_t w = 0; w < nw; w++) {
        mapped += wheap[w] ? 0 : wcount[w];
    }
    if (mapped != hblks) {
        goto out;
    }
    /* The heaps' blocks, grouped by window (a counting sort). */
    uint64_t *slot = xcalloc(nw ? nw : 1, sizeof *slot);
    struct lblock {
        uint64_t addr;
        uint32_t info;
    } *blk = xmalloc((nb ? nb : 1) * sizeof *blk);
    uint64_t at = 0;
    for (size_t w = 0; w < nw; w++) {
        slot[w] = at;
        at += wheap[w] ? wcount[w] : 0;
    }
    for (size_t i = 0; i < m->addr_block.cap; i++) {
        const struct u64map_cell *c = &m->addr_block.cells[i];
        uint64_t w;
        if (!c->key || c->val == BLOCK_SET_APART || !u64map_get(&win, c->key & ~(ARENA_HEAP - 1), &w) ||
            (c->key >= m->heap_start && c->key < m->heap_end) || !wheap[w - 1]) {
            continue;
        }
        blk[slot[w - 1]++] = (struct lblock){c->key, block_info(c->val)};
    }
    struct lpage *pages = xmalloc((ARENA_HEAP / LAYOUT_PAGE) * sizeof *pages);
    struct lstacks S = {0};
    new_record(r, MEMFMT_HEAP_ARENAS);
    uint64_t first = 0;
    for (size_t w = 0; w < nw; w++) {
        if (!wheap[w]) {
            continue;
        }
        struct lheap h;
        /* The first page holds the heap's header and the arena's state. */
        heap_init(&h, pages, wstart[w], wstart[w] + LAYOUT_PAGE, wstart[w] + ARENA_HEAP);
        memset(pages, 0, h.npages * sizeof *pages);
        for (uint64_t k = first; k < first + wcount[w]; k++) {
            heap_add(&h, &S, &m->infos[blk[k].info], blk[k].addr);
        }
        first += wcount[w];
        heap_walk(&h, &S);
        r->u.layout.heaps++;
        r->u.layout.heap_bytes += h.top_end - h.start;
        r->u.layout.live_bytes += h.live_bytes;
        r->u.layout.live_blocks += h.live_blocks;
        r->u.layout.free_pages += h.free_pages;
        add_top(r, &h);
        if (r->u.layout.heaps == 1 || h.top_held_pages > r->u.layout.top_held_pages) {
            r->u.layout.top_end = h.top_end - h.start;
            r->u.layout.top_trace = h.top_trace;
            r->u.layout.top_size = h.top_size;
            r->u.layout.top_held_pages = h.top_held_pages;
        }
    }
    free(pages);
    free(blk);
    free(slot);
    take_entries(&S, r);
    rc = 0;
out:
    u64map_release(&win);
    free(wstart);
    free(wcount);
    free(wheap);
    return rc;
}

static int write_layout(struct merge *m, uint64_t hblks)
{
    struct memfmt_record r;
    uint64_t t0 = now_ns();
    if (compute(m, m->heap_start, m->heap_end, &r) < 0) {
        m->layout_next_ns = t0 + LAYOUT_MIN_NS;
        return 0;
    }
    uint64_t t1 = now_ns();
    r.u.layout.cost_ns = t1 - t0;
    int rc = out(m, &r);
    uint64_t t2 = t1;
    if (rc == 0) {
        int ok = compute_arenas(m, hblks, &r) == 0;
        t2 = now_ns();
        r.u.layout.cost_ns = t2 - t1;
        if (ok && r.u.layout.heaps) {
            rc = out(m, &r);
        }
    }
    uint64_t took = t2 - t0;
    m->layout_next_ns = t0 + (took * LAYOUT_BUDGET > LAYOUT_MIN_NS ? took * LAYOUT_BUDGET : LAYOUT_MIN_NS);
    m->layouts++;
    return rc;
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
    m->hblks = r->u.heapinfo.hblks;
    return now_ns() < m->layout_next_ns ? 0 : write_layout(m, r->u.heapinfo.hblks);
}

int layout_final(struct merge *m)
{
    if (!m->heap_start || m->layout_sampled) {
        return 0;
    }
    /* No sample says how many chunks are mapped at the end: the thread
     * heaps are laid out when the count of the latest sample still holds. */
    return write_layout(m, m->hblks);
}
