// SPDX-License-Identifier: MIT
/* Unit tests of memrec's merge (recorder/merge/merge.c): events of several
 * threads arrive out of order and leave in sequence order; a free that
 * arrives before its allocation is still written after it; addresses
 * become slots; per-thread trace ids become one tree. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "check.h"
#include "wirebatch.h"
#include "memwire.h"
#include "merge.h"

static void hello(struct batch *b, uint64_t tid)
{
    b->b[b->n++] = MEMFMT_W_HELLO;
    put(b, tid);
    put(b, 0); /* born: unknown */
}

static void node(struct batch *b, uint64_t parent, uint64_t ip)
{
    b->b[b->n++] = MEMFMT_W_NODE;
    put(b, parent);
    put(b, ip);
}

static void w_alloc(struct batch *b, uint64_t s, uint64_t size, uint64_t addr, uint64_t trace)
{
    b->b[b->n++] = MEMFMT_W_ALLOC;
    seq(b, s);
    put(b, MEMFMT_K_MALLOC);
    put(b, size);
    put(b, addr);
    put(b, trace);
}

static void w_free(struct batch *b, uint64_t s, uint64_t addr)
{
    b->b[b->n++] = MEMFMT_W_FREE;
    seq(b, s);
    put(b, MEMFMT_K_FREE);
    put(b, addr);
}

static void w_sync(struct batch *b, uint64_t s)
{
    b->b[b->n++] = MEMFMT_W_SYNC;
    seq(b, s);
    put(b, 1000);
    put(b, 0);
}

static void w_realloc(struct batch *b, uint64_t s, uint64_t old, uint64_t addr, uint64_t size, uint64_t trace)
{
    b->b[b->n++] = MEMFMT_W_REALLOC;
    seq(b, s);
    seq(b, s + 1);
    put(b, MEMFMT_K_REALLOC);
    put(b, old);
    put(b, addr);
    put(b, size);
    put(b, trace);
}

/* A MODULE record with one segment [lo, hi) at bias 0, sent in order. */
static void w_module(struct batch *b, uint64_t s, uint32_t id, uint64_t lo, uint64_t hi, uint32_t flags)
{
    struct memfmt_record r;
    memset(&r, 0, sizeof r);
    r.tag = MEMFMT_REC_MODULE;
    r.u.module.id = id;
    r.u.module.path = "m";
    r.u.module.path_len = 1;
    r.u.module.nsegments = 1;
    r.u.module.segments[0] = (struct memfmt_segment){lo, hi - lo, 5};
    r.u.module.flags = flags;
    uint8_t rec[128];
    int n = memfmt_encode(&r, rec, sizeof rec);
    CHECK(n > 0);
    b->b[b->n++] = MEMFMT_W_RECORD;
    seq(b, s);
    put(b, (uint64_t)n);
    memcpy(b->b + b->n, rec, (size_t)n);
    b->n += (size_t)n;
}

/* A merger writing into an in-memory file, with its accounting. */
struct fixture {
    int fd;
    memfmt_writer *w;
    struct accounting *acct;
    struct merge *m;
};

static void fixture_open(struct fixture *f, const char *name)
{
    struct memfmt_header h = {MEMFMT_VERSION, 8, 1, 0};
    int rc;
    f->fd = memfd_create(name, 0);
    f->w = memfmt_writer_new(f->fd, &h, 1, &rc);
    f->acct = accounting_new(0);
    f->m = merge_new(f->w, f->acct, 0);
}

/* What the merger wrote, read back: sizes of allocations in file order (0
 * for a free), their traces, and the node and thread records. */
struct readback {
    unsigned order[8];
    uint32_t trace[8];
    int n;
    int nodes;
    int threads;
};

static void read_back(struct fixture *f, struct readback *rb)
{
    int rc = 0;
    memset(rb, 0, sizeof *rb);
    lseek(f->fd, 0, SEEK_SET);
    memfmt_reader *r = memfmt_reader_open_fd(f->fd, &rc);
    CHECK(r != NULL);
    if (!r) {
        return;
    }
    struct memfmt_record rec;
    while ((rc = memfmt_read(r, &rec)) > 0) {
        if (rec.tag == MEMFMT_REC_NODE) {
            rb->nodes++;
        } else if (rec.tag == MEMFMT_REC_THREAD) {
            rb->threads++;
        } else if ((rec.tag == MEMFMT_REC_ALLOC || rec.tag == MEMFMT_REC_FREE) && rb->n < 8) {
            int alloc = rec.tag == MEMFMT_REC_ALLOC;
            rb->order[rb->n] = alloc ? (unsigned)rec.u.alloc.size : 0;
            rb->trace[rb->n] = alloc ? rec.u.alloc.trace : 0;
            rb->n++;
        }
    }
    CHECK_EQ(rc, 0);
    memfmt_reader_free(r);
}

/* 1 when LeakSanitizer finds unreachable blocks now (sanitized build);
 * 0 otherwise, and always 0 in a plain build. */
static int leaks_now(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return __lsan_do_recoverable_leak_check() != 0;
#else
    return 0;
#endif
}

static void fixture_close(struct fixture *f)
{
    merge_free(f->m);
    accounting_free(f->acct);
    memfmt_writer_free(f->w);
    close(f->fd);
}

/* A merger released with three events still queued (no SYNC came). */
static void release_with_queued_events(void)
{
    struct fixture fx;
    struct batch t1;
    fixture_open(&fx, "merge-left");
    start(&t1, 1);
    hello(&t1, 101);
    node(&t1, 0, 0x20);
    w_alloc(&t1, 3, 10, 0x1000, 1);
    t1.b[t1.n++] = MEMFMT_W_RECORD;
    seq(&t1, 4);
    put(&t1, 3);
    t1.b[t1.n++] = MEMFMT_REC_TIME;
    t1.b[t1.n++] = 1;
    t1.b[t1.n++] = 5;
    w_free(&t1, 5, 0x1000);
    CHECK(merge_batch(fx.m, t1.b, t1.n) == 0);
    fixture_close(&fx);
}

/* A HEAPINFO record of the recorder (the service thread's), with the main
 * heap's range. */
static void w_heapinfo(struct batch *b, uint64_t s, uint64_t brk_start, uint64_t brk_end)
{
    struct memfmt_record r;
    memset(&r, 0, sizeof r);
    r.tag = MEMFMT_REC_HEAPINFO;
    r.u.heapinfo.arena = brk_end - brk_start;
    r.u.heapinfo.brk_start = brk_start;
    r.u.heapinfo.brk_end = brk_end;
    uint8_t rec[160];
    int n = memfmt_encode(&r, rec, sizeof rec);
    CHECK(n > 0);
    b->b[b->n++] = MEMFMT_W_RECORD;
    seq(b, s);
    put(b, (uint64_t)n);
    memcpy(b->b + b->n, rec, (size_t)n);
    b->n += (size_t)n;
}

/* The main heap's layout (layout.c) from blocks at known addresses in a
 * heap [S, S + 1 MiB), chunks 16 bytes before the blocks:
 *   A1 at S+0x10, 100 bytes: chunk [S, S+0x70)          trace A (node 1)
 *   B2 at S+0x100, 20 bytes: chunk [S+0xf0, S+0x110)    trace B (node 2): page 0 is shared
 *   B1 at S+0x3010, 5000 bytes: chunk [S+0x3000, S+0x4390): pages 1-2 free below it
 *   A2 at S+0xa010, 10 bytes: chunk [S+0xa000, S+0xa020): the top, pages 5-9 free below it
 * and one block outside the heap (an mmapped chunk), left out. */
static void test_layout(void)
{
    const uint64_t S = 0x100000;
    struct fixture fx;
    fixture_open(&fx, "merge-layout");
    struct batch t1, svc;
    start(&t1, 1);
    hello(&t1, 101);
    node(&t1, 0, 0x20);
    node(&t1, 1, 0x30);
    w_alloc(&t1, 1, 100, S + 0x10, 1);
    w_alloc(&t1, 2, 20, S + 0x100, 2);
    w_alloc(&t1, 3, 5000, S + 0x3010, 2);
    w_alloc(&t1, 4, 10, S + 0xa010, 1);
    w_alloc(&t1, 5, 64, 0x7f0000001010, 2);
    w_alloc(&t1, 6, 7, S + 0xc010, 1);
    CHECK(merge_batch(fx.m, t1.b, t1.n) == 0);
    start(&svc, 0);
    w_heapinfo(&svc, 7, S, S + 0x100000);
    w_sync(&svc, 8);
    CHECK(merge_batch(fx.m, svc.b, svc.n) == 0);
    /* The block above A2 goes: A2 is the top at the end. */
    start(&t1, 1);
    w_free(&t1, 9, S + 0xc010);
    CHECK(merge_batch(fx.m, t1.b, t1.n) == 0);
    CHECK(merge_drain(fx.m) == 0);
    CHECK(merge_end(fx.m, MEMFMT_END_EXITED, 0, 1000) == 0);
    CHECK(memfmt_writer_finish(fx.w) == 0);

    int rc = 0;
    lseek(fx.fd, 0, SEEK_SET);
    memfmt_reader *r = memfmt_reader_open_fd(fx.fd, &rc);
    CHECK(r != NULL);
    struct memfmt_record rec, first, last;
    memset(&first, 0, sizeof first);
    memset(&last, 0, sizeof last);
    struct memfmt_record arena;
    memset(&arena, 0, sizeof arena);
    int arenas = 0;
    int layouts = 0;
    while (r && (rc = memfmt_read(r, &rec)) > 0) {
        if (rec.tag == MEMFMT_REC_LAYOUT && rec.u.layout.heap == MEMFMT_HEAP_ARENAS) {
            arenas++;
            arena = rec;
        } else if (rec.tag == MEMFMT_REC_LAYOUT) {
            if (!layouts++) {
                first = rec;
            }
            last = rec;
        }
    }
    CHECK_EQ(rc, 0);
    memfmt_reader_free(r);
    CHECK_EQ(layouts, 2); /* after the sample, and at the end */
    /* The 64-byte block at 0x7f0000001010 is no mapped chunk (too small):
     * a thread arena's heap of one block, on the heap's first page after
     * its header page: nothing below it. The sample said 0 mapped chunks. */
    CHECK_EQ(arenas, 2);
    CHECK_EQ(arena.u.layout.heaps, 1);
    CHECK_EQ(arena.u.layout.live_blocks, 1);
    CHECK_EQ(arena.u.layout.live_bytes, 64);
    CHECK_EQ(arena.u.layout.top_size, 64);
    CHECK_EQ(arena.u.layout.top_trace, 2);
    CHECK_EQ(arena.u.layout.top_end, 0x1050); /* from the heap's start */
    CHECK_EQ(arena.u.layout.free_pages, 0);
    CHECK_EQ(arena.u.layout.n, 1);
    CHECK_EQ(arena.u.layout.e[0].pages_alone, 1);
    CHECK_EQ(arena.u.layout.ntops, 1);
    CHECK_EQ(arena.u.layout.tops[0].trace, 2);
    CHECK_EQ(arena.u.layout.tops[0].size, 64);
    CHECK_EQ(arena.u.layout.tops[0].live_blocks, 1);
    CHECK_EQ(last.u.layout.ntops, 0);
    CHECK_EQ(last.u.layout.heap, MEMFMT_HEAP_MAIN);
    CHECK_EQ(last.u.layout.heaps, 1);
    if (layouts != 2) {
        fixture_close(&fx);
        return;
    }
    /* At the sample: the 7-byte block is the top, one free page below it. */
    CHECK_EQ(first.u.layout.live_blocks, 5);
    CHECK_EQ(first.u.layout.top_size, 7);
    CHECK_EQ(first.u.layout.top_held_pages, 1);
    CHECK_EQ(first.u.layout.free_pages, 8);
    /* At the end. */
    const struct memfmt_record *l = &last;
    CHECK_EQ(l->u.layout.page, 4096);
    CHECK_EQ(l->u.layout.heap_bytes, 0x100000);
    CHECK_EQ(l->u.layout.live_bytes, 5130);
    CHECK_EQ(l->u.layout.live_blocks, 4);
    CHECK_EQ(l->u.layout.free_pages, 7);
    CHECK_EQ(l->u.layout.top_end, 0xa020);
    CHECK_EQ(l->u.layout.top_trace, 1);
    CHECK_EQ(l->u.layout.top_size, 10);
    CHECK_EQ(l->u.layout.top_held_pages, 5);
    CHECK_EQ(l->u.layout.ntraces, 2);
    CHECK_EQ(l->u.layout.n, 2);
    /* A: 5 pages held below A2, alone on page 10 (page 0 it shares with B). */
    CHECK_EQ(l->u.layout.e[0].trace, 1);
    CHECK_EQ(l->u.layout.e[0].held_pages, 5);
    CHECK_EQ(l->u.layout.e[0].blocks, 1);
    CHECK_EQ(l->u.layout.e[0].pages_alone, 1);
    /* B: 2 pages below B1, alone on pages 3 and 4. */
    CHECK_EQ(l->u.layout.e[1].trace, 2);
    CHECK_EQ(l->u.layout.e[1].held_pages, 2);
    CHECK_EQ(l->u.layout.e[1].blocks, 1);
    CHECK_EQ(l->u.layout.e[1].pages_alone, 2);
    fixture_close(&fx);
}

/* Allocator start-up: traces whose outermost frames are ld.so's and whose
 * next frame is a preload-only module's are set apart with their frees;
 * everything else is written as usual. */
static void test_startup(void)
{
    struct fixture fx;
    fixture_open(&fx, "merge-startup");
    struct batch t1, svc;
    start(&t1, 1);
    hello(&t1, 101);
    w_module(&t1, 1, 1, 0x1000, 0x2000, MEMFMT_MODF_LOADER); /* ld.so */
    w_module(&t1, 2, 2, 0x3000, 0x4000, MEMFMT_MODF_PRELOAD_ONLY);
    node(&t1, 0, 0x1100); /* 1: ld.so, outermost */
    node(&t1, 1, 0x3100); /* 2: a preloaded library's initializer: start-up */
    node(&t1, 2, 0x5100); /* 3: what it calls in another module: start-up */
    node(&t1, 1, 0x5100); /* 4: another library's initializer: the program's */
    node(&t1, 0, 0x3100); /* 5: preloaded code not called by ld.so: the program's */
    w_alloc(&t1, 3, 100, 0xa000, 2); /* set apart */
    w_alloc(&t1, 4, 200, 0xb000, 3); /* set apart */
    w_alloc(&t1, 5, 300, 0xc000, 4);
    w_alloc(&t1, 6, 400, 0xd000, 5); /* leaked */
    w_free(&t1, 7, 0xa000); /* dropped */
    w_realloc(&t1, 8, 0xb000, 0xe000, 250, 2); /* set apart again, not unmatched */
    w_free(&t1, 10, 0xc000);
    w_realloc(&t1, 11, 0xe000, 0xf000, 50, 4); /* an allocation of the program */
    w_free(&t1, 13, 0xf000); /* a temporary */
    w_alloc(&t1, 14, 60, 0x11000, 4);
    w_alloc(&t1, 15, 70, 0x12000, 2); /* set apart: unseen between 0x11000 and its free */
    w_free(&t1, 16, 0x11000); /* a temporary */
    w_free(&t1, 17, 0x12000); /* dropped */
    CHECK(merge_batch(fx.m, t1.b, t1.n) == 0);
    start(&svc, 0);
    w_sync(&svc, 100);
    CHECK(merge_batch(fx.m, svc.b, svc.n) == 0);
    CHECK(merge_end(fx.m, MEMFMT_END_EXITED, 0, 1000) == 0);
    CHECK(memfmt_writer_finish(fx.w) == 0);
    const struct acct_totals *t = accounting_totals(fx.acct);
    CHECK_EQ(t->allocations, 4); /* 300, 400, 50, 60 */
    CHECK_EQ(t->allocated_bytes, 810);
    CHECK_EQ(t->frees, 3);
    CHECK_EQ(t->temporary, 2);
    CHECK_EQ(t->live_bytes, 400);
    CHECK_EQ(t->live_blocks, 1);
    CHECK_EQ(t->peak_bytes, 700);
    CHECK_EQ(merge_stats(fx.m)->unmatched_frees, 0);
    /* The counts set apart reach the file's STATS record. */
    lseek(fx.fd, 0, SEEK_SET);
    int rc;
    memfmt_reader *r = memfmt_reader_open_fd(fx.fd, &rc);
    CHECK(r != NULL);
    struct memfmt_record rec;
    uint64_t calls = 0, bytes = 0, flags = 0;
    while (r && (rc = memfmt_read(r, &rec)) > 0) {
        if (rec.tag == MEMFMT_REC_STATS) {
            calls = rec.u.stats.startup_calls;
            bytes = rec.u.stats.startup_bytes;
        } else if (rec.tag == MEMFMT_REC_MODULE) {
            flags |= rec.u.module.flags << (4 * (rec.u.module.id - 1));
        }
    }
    CHECK_EQ(calls, 4); /* 100, 200, 250, 70 */
    CHECK_EQ(bytes, 620);
    CHECK_EQ(flags, MEMFMT_MODF_LOADER | (MEMFMT_MODF_PRELOAD_ONLY << 4));
    memfmt_reader_free(r);
    fixture_close(&fx);
}

/* ---- direct mappings ---- */

static void w_map(struct batch *b, uint64_t s, uint64_t addr, uint64_t len, uint64_t trace)
{
    b->b[b->n++] = MEMFMT_W_MAP;
    seq(b, s);
    put(b, addr);
    put(b, len);
    put(b, trace);
}

static void w_unmap(struct batch *b, uint64_t s, uint64_t addr, uint64_t len)
{
    b->b[b->n++] = MEMFMT_W_UNMAP;
    seq(b, s);
    put(b, MEMFMT_MK_MUNMAP);
    put(b, addr);
    put(b, len);
}

static void w_mremap(struct batch *b, uint64_t s1, uint64_t s2, uint64_t old, uint64_t old_len, uint64_t addr,
                     uint64_t len)
{
    b->b[b->n++] = MEMFMT_W_MREMAP;
    seq(b, s1);
    seq(b, s2);
    put(b, old);
    put(b, old_len);
    put(b, addr);
    put(b, len);
}

static void w_brk(struct batch *b, uint64_t s, uint64_t old, uint64_t now, uint64_t trace)
{
    b->b[b->n++] = MEMFMT_W_BRK;
    seq(b, s);
    put(b, old);
    put(b, now);
    put(b, trace);
}

/* Thread 1 maps 64 KiB; thread 2 moves it with mremap to 192 KiB, and
 * between the call's two numbers maps 32 KiB at the old address (which
 * the move had freed): that range must survive the move. Then thread 1
 * unmaps across the start of the moved range and an unknown area, and
 * moves the break up 16 KiB and down 12 KiB. */
static void test_mappings(void)
{
    struct fixture fx;
    fixture_open(&fx, "merge-maps");
    accounting_free(fx.acct);
    merge_free(fx.m);
    fx.acct = accounting_new(1);
    fx.m = merge_new(fx.w, fx.acct, 0);
    struct batch t1, t2, svc;
    start(&t2, 2);
    hello(&t2, 202);
    node(&t2, 0, 0x30); /* file node 1 */
    w_mremap(&t2, 2, 5, 0x100000, 0x10000, 0x200000, 0x30000);
    w_map(&t2, 4, 0x100000, 0x8000, 1);
    CHECK(merge_batch(fx.m, t2.b, t2.n) == 0);
    start(&t1, 1);
    hello(&t1, 101);
    node(&t1, 0, 0x20); /* file node 2 */
    node(&t1, 1, 0x10); /* file node 3 */
    w_map(&t1, 1, 0x100000, 0x10000, 2);
    w_unmap(&t1, 6, 0x1f0000, 0x20000);
    w_brk(&t1, 7, 0x500000, 0x504000, 2);
    w_brk(&t1, 8, 0x504000, 0x501000, 0);
    CHECK(merge_batch(fx.m, t1.b, t1.n) == 0);
    start(&svc, 0);
    w_sync(&svc, 100);
    CHECK(merge_batch(fx.m, svc.b, svc.n) == 0);
    CHECK(merge_drain(fx.m) == 0);

    const struct acct_totals *t = accounting_totals(fx.acct);
    CHECK_EQ(t->mapping_calls, 3);
    CHECK_EQ(t->mapped_peak, 0x38000); /* after the move: 192 + 32 KiB */
    CHECK_EQ(t->mapped_bytes, 0x30000 - 0x10000 + 0x1000 + 0x8000);
    CHECK_EQ(t->allocations, 0); /* nothing in the heap figures */
    CHECK_EQ(t->peak_bytes, 0);
    CHECK_EQ(accounting_cost(fx.acct, 3)->mapped, 0x21000);
    CHECK_EQ(accounting_cost(fx.acct, 3)->mapping_calls, 2);
    CHECK_EQ(accounting_mapped_at_peak(fx.acct, 3), 0x30000);
    CHECK_EQ(accounting_cost(fx.acct, 1)->mapped, 0x8000);
    CHECK_EQ(accounting_mapped_at_peak(fx.acct, 1), 0x8000);
    fixture_close(&fx);
}

/* memrec --time: timed wire events become events with ns (ticks times
 * the clock's ns per tick); a realloc's time is the whole call's; a thread
 * that said its times as it ended gets them in THREAD_TIMES, one still
 * alive at the end its span since its birth; END has the CPU time. */
static void test_timed(void)
{
    struct fixture fx;
    struct memfmt_header h = {MEMFMT_VERSION, 8, 1, MEMFMT_HF_TIMED};
    int rc;
    fx.fd = memfd_create("merge-timed", 0);
    fx.w = memfmt_writer_new(fx.fd, &h, 1, &rc);
    fx.acct = accounting_new(0);
    fx.m = merge_new(fx.w, fx.acct, 0);
    merge_set_clock(fx.m, 0.5); /* a 2 GHz TSC */
    merge_set_cpu(fx.m, 7000, 3000);

    struct batch t1, t2, svc;
    start(&t1, 1);
    hello(&t1, 101);
    node(&t1, 0, 0x20);
    t1.b[t1.n++] = MEMFMT_W_ALLOC_T;
    seq(&t1, 1);
    put(&t1, MEMFMT_K_MALLOC);
    put(&t1, 100);
    put(&t1, 0x1000);
    put(&t1, 1);
    put(&t1, 80); /* 40 ns */
    t1.b[t1.n++] = MEMFMT_W_REALLOC_T;
    seq(&t1, 2);
    seq(&t1, 3);
    put(&t1, MEMFMT_K_REALLOC);
    put(&t1, 0x1000);
    put(&t1, 0x2000);
    put(&t1, 200);
    put(&t1, 1);
    put(&t1, 3001); /* 1500.5 ns: 1501 */
    t1.b[t1.n++] = MEMFMT_W_FREE_T;
    seq(&t1, 4);
    put(&t1, MEMFMT_K_FREE);
    put(&t1, 0x2000);
    put(&t1, 1ull << 63); /* a wrapped difference: 0 */
    t1.b[t1.n++] = MEMFMT_W_TIMES;
    put(&t1, 123456);
    put(&t1, 654);
    t1.b[t1.n++] = MEMFMT_W_BYE;
    CHECK(merge_batch(fx.m, t1.b, t1.n) == 0);
    start(&t2, 2);
    t2.b[t2.n++] = MEMFMT_W_HELLO;
    put(&t2, 202);
    put(&t2, 1000); /* born at 1 us of CLOCK_MONOTONIC: alive at the end */
    w_alloc(&t2, 5, 10, 0x3000, 0); /* untimed: 0 ns */
    CHECK(merge_batch(fx.m, t2.b, t2.n) == 0);
    start(&svc, 0);
    w_sync(&svc, 10);
    CHECK(merge_batch(fx.m, svc.b, svc.n) == 0);
    CHECK(merge_drain(fx.m) == 0);
    CHECK(merge_end(fx.m, MEMFMT_END_EXITED, 0, 10) == 0);
    CHECK(memfmt_writer_finish(fx.w) == 0);

    lseek(fx.fd, 0, SEEK_SET);
    memfmt_reader *r = memfmt_reader_open_fd(fx.fd, &rc);
    CHECK(r != NULL);
    uint64_t ns[5] = {0};
    int n = 0, ntimes = 0;
    struct memfmt_record rec;
    while (r && (rc = memfmt_read(r, &rec)) > 0) {
        if ((rec.tag == MEMFMT_REC_ALLOC || rec.tag == MEMFMT_REC_REALLOC) && n < 5) {
            ns[n++] = rec.u.alloc.ns;
        } else if (rec.tag == MEMFMT_REC_FREE && n < 5) {
            ns[n++] = rec.u.free.ns;
        } else if (rec.tag == MEMFMT_REC_THREAD_TIMES) {
            ntimes++;
            if (rec.u.thread_times.cpu_ns == 654) {
                CHECK_EQ(rec.u.thread_times.wall_ns, 123456);
            } else {
                CHECK(rec.u.thread_times.cpu_ns == 0 && rec.u.thread_times.wall_ns > 0);
            }
        } else if (rec.tag == MEMFMT_REC_END) {
            CHECK(rec.u.end.cpu_user_ns == 7000 && rec.u.end.cpu_sys_ns == 3000);
        }
    }
    CHECK_EQ(rc, 0);
    memfmt_reader_free(r);
    CHECK_EQ(n, 4);
    CHECK(ns[0] == 40 && ns[1] == 1501 && ns[2] == 0 && ns[3] == 0);
    CHECK_EQ(ntimes, 2);
    merge_free(fx.m);
    accounting_free(fx.acct);
    memfmt_writer_free(fx.w);
    close(fx.fd);
}

int main(void)
{
    test_timed();
    test_layout();
    struct fixture fx;
    fixture_open(&fx, "merge-test");

    struct batch t1, t2, svc;
    /* Thread 2 frees 0x1000 (seq 3) and its batch arrives first; thread 1
     * allocated it at seq 2. Both threads share the stack (ip 0x10 <- 0x20). */
    start(&t2, 2);
    hello(&t2, 202);
    node(&t2, 0, 0x20);
    node(&t2, 1, 0x10);
    w_free(&t2, 3, 0x1000);
    w_alloc(&t2, 4, 30, 0x1000, 2); /* reuse of the address by thread 2 */
    CHECK(merge_batch(fx.m, t2.b, t2.n) == 0);
    start(&t1, 1);
    hello(&t1, 101);
    node(&t1, 0, 0x20);
    node(&t1, 1, 0x10);
    w_alloc(&t1, 1, 10, 0x2000, 2);
    w_alloc(&t1, 2, 20, 0x1000, 2);
    CHECK(merge_batch(fx.m, t1.b, t1.n) == 0);
    start(&svc, 0);
    w_sync(&svc, 5);
    CHECK(merge_batch(fx.m, svc.b, svc.n) == 0);
    /* A free of an address never allocated is counted and dropped. */
    start(&t1, 1);
    w_free(&t1, 6, 0x9999);
    CHECK(merge_batch(fx.m, t1.b, t1.n) == 0);
    CHECK(merge_drain(fx.m) == 0);
    CHECK(merge_end(fx.m, MEMFMT_END_EXITED, 0, 1000) == 0);
    CHECK(memfmt_writer_finish(fx.w) == 0);

    const struct acct_totals *t = accounting_totals(fx.acct);
    CHECK_EQ(t->allocations, 3);
    CHECK_EQ(t->frees, 1);
    CHECK_EQ(t->bad_frees, 0);
    CHECK_EQ(t->temporary, 0); /* freed by another thread */
    CHECK_EQ(t->live_bytes, 40);
    CHECK_EQ(t->peak_bytes, 40);
    CHECK_EQ(merge_stats(fx.m)->unmatched_frees, 1);

    /* Read back: order is alloc(10), alloc(20), free, alloc(30); the two
     * threads' identical stacks are one pair of nodes. */
    struct readback rb;
    read_back(&fx, &rb);
    CHECK_EQ(rb.nodes, 2);
    CHECK_EQ(rb.threads, 2);
    CHECK_EQ(rb.n, 4);
    CHECK(rb.n == 4 && rb.order[0] == 10 && rb.order[1] == 20 && rb.order[2] == 0 && rb.order[3] == 30);
    for (int i = 0; i < rb.n; i++) {
        CHECK(rb.order[i] == 0 || rb.trace[i] == 2);
    }
    fixture_close(&fx);
    /* Two threads' events with the same number (time stamps taken in the
     * same cycle) are concurrent: both are written, in either order. */
    fixture_open(&fx, "merge-ties");
    start(&t1, 1);
    hello(&t1, 101);
    node(&t1, 0, 0x20);
    w_alloc(&t1, 7, 10, 0x1000, 1);
    w_alloc(&t1, 9, 11, 0x3000, 1);
    CHECK(merge_batch(fx.m, t1.b, t1.n) == 0);
    start(&t2, 2);
    hello(&t2, 202);
    node(&t2, 0, 0x20);
    w_alloc(&t2, 7, 20, 0x2000, 1);
    CHECK(merge_batch(fx.m, t2.b, t2.n) == 0);
    start(&svc, 0);
    w_sync(&svc, 100);
    CHECK(merge_batch(fx.m, svc.b, svc.n) == 0);
    CHECK(merge_drain(fx.m) == 0);
    CHECK_EQ(accounting_totals(fx.acct)->allocations, 3);
    CHECK_EQ(accounting_totals(fx.acct)->live_bytes, 41);
    CHECK(memfmt_writer_finish(fx.w) == 0);
    read_back(&fx, &rb);
    /* Number 7 comes before number 9; the two 7s in either order. */
    CHECK_EQ(rb.n, 3);
    CHECK(rb.n == 3 && rb.order[2] == 11 && rb.order[0] + rb.order[1] == 30 &&
          (rb.order[0] == 10 || rb.order[0] == 20));
    fixture_close(&fx);
    /* Released with events still queued (memrec stopping on an error):
     * every queued record copy is freed. glibc's own counters cannot tell
     * (its per-thread cache counts freed blocks as in use), so the check is
     * LeakSanitizer's, asked right here in the sanitized build. */
    release_with_queued_events();
    CHECK_EQ(leaks_now(), 0);
    test_startup();
    test_mappings();
    return check_summary("test_merge");
}
