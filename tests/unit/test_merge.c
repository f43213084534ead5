// SPDX-License-Identifier: MIT
/* Unit tests of memrec's merge (recorder/merge.c): events of several
 * threads arrive out of order and leave in sequence order; a free that
 * arrives before its allocation is still written after it; addresses
 * become slots; per-thread trace ids become one tree. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "memfmt_internal.h"
#include "merge.h"

struct batch {
    uint8_t b[512];
    size_t n;
    uint64_t prev;
};

static void start(struct batch *b, uint32_t stream)
{
    memcpy(b->b, &stream, 4);
    b->n = 4;
    b->prev = 0;
}

static void put(struct batch *b, uint64_t v)
{
    b->n += memfmt_put_varint(b->b + b->n, v);
}

static void seq(struct batch *b, uint64_t s)
{
    put(b, s - b->prev);
    b->prev = s;
}

static void hello(struct batch *b, uint64_t tid)
{
    b->b[b->n++] = MEMFMT_W_HELLO;
    put(b, tid);
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

static void fixture_close(struct fixture *f)
{
    merge_free(f->m);
    accounting_free(f->acct);
    memfmt_writer_free(f->w);
    close(f->fd);
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

int main(void)
{
    test_mappings();
    struct fixture fx;
    fixture_open(&fx, "merge-test");
    int rc;

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
    lseek(fx.fd, 0, SEEK_SET);
    memfmt_reader *r = memfmt_reader_open_fd(fx.fd, &rc);
    CHECK(r != NULL);
    struct memfmt_record rec;
    unsigned order[8];
    int n = 0, nodes = 0, threads = 0;
    while ((rc = memfmt_read(r, &rec)) > 0) {
        if (rec.tag == MEMFMT_REC_NODE) {
            nodes++;
        } else if (rec.tag == MEMFMT_REC_THREAD) {
            threads++;
        } else if ((rec.tag == MEMFMT_REC_ALLOC || rec.tag == MEMFMT_REC_FREE) && n < 8) {
            order[n++] = rec.tag == MEMFMT_REC_ALLOC ? (unsigned)rec.u.alloc.size : 0;
            if (rec.tag == MEMFMT_REC_ALLOC) {
                CHECK_EQ(rec.u.alloc.trace, 2);
            }
        }
    }
    CHECK_EQ(rc, 0);
    CHECK_EQ(nodes, 2);
    CHECK_EQ(threads, 2);
    CHECK_EQ(n, 4);
    CHECK(n == 4 && order[0] == 10 && order[1] == 20 && order[2] == 0 && order[3] == 30);
    memfmt_reader_free(r);
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
    fixture_close(&fx);
    /* Released with events still queued (memrec stopping on an error):
     * every queued record copy is freed, nothing else. */
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
    fixture_close(&fx); /* no SYNC came: three events still queued */
    return check_summary("test_merge");
}
