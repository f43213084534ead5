// SPDX-License-Identifier: MIT
/* Unit tests of the pool block table (recorder/merge/poolmap.c) and of memrec's
 * merge of pool events (wire tags POOL_ALLOC/FREE/RESET): blocks are known
 * by (pool, address), a reset frees a pool's blocks newest first, frees
 * memrec cannot match are ignored without counting as unmatched. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "wirebatch.h"
#include "memwire.h"
#include "merge.h"
#include "poolmap.h"

/* ---- poolmap alone ---- */

static void test_table(void)
{
    struct poolmap *pm = poolmap_new();
    uint32_t p1 = poolmap_pool(pm, 0x1000), p2 = poolmap_pool(pm, 0x2000), p0 = poolmap_pool(pm, 0);
    CHECK_EQ(p1, 1);
    CHECK_EQ(p2, 2);
    CHECK_EQ(p0, 3);
    CHECK_EQ(poolmap_pool(pm, 0x1000), 1);
    /* 3000 blocks over three pools at the same addresses, enough to grow
     * the table twice: each (pool, addr) keeps its own block. */
    for (uint32_t i = 0; i < 1000; i++) {
        poolmap_add(pm, p1, 0x10000 + 16 * (uint64_t)i, i);
        poolmap_add(pm, p2, 0x10000 + 16 * (uint64_t)i, 10000 + i);
        poolmap_add(pm, p0, 0x10000 + 16 * (uint64_t)i, 20000 + i);
    }
    CHECK_EQ(poolmap_count(pm), 3000);
    uint64_t a = 0, b = 0;
    int ok = 1;
    for (uint32_t i = 0; i < 1000; i += 2) {
        ok &= poolmap_del(pm, p2, 0x10000 + 16 * (uint64_t)i, &b) && b == 10000 + i;
    }
    CHECK(ok);
    CHECK_EQ(poolmap_count(pm), 2500);
    CHECK(!poolmap_del(pm, p2, 0x10000, &b)); /* already gone */
    CHECK(!poolmap_del(pm, p1, 0x9, &b)); /* never there */
    CHECK(poolmap_del(pm, p1, 0x10000, &b) && b == 0); /* still there in the other pool */
    /* A reset of p2: the 500 odd ones, newest first. */
    uint32_t expect = 10999, popped = 0;
    ok = 1;
    while (poolmap_pop(pm, p2, &a, &b)) {
        ok &= b == expect && a == 0x10000 + 16 * (uint64_t)(expect - 10000);
        expect -= 2;
        popped++;
    }
    CHECK(ok);
    CHECK_EQ(popped, 500);
    CHECK(!poolmap_pop(pm, p2, &a, &b));
    CHECK(!poolmap_pop(pm, 77, &a, &b)); /* an id never given */
    /* Entries freed are reused; lists stay right. */
    poolmap_add(pm, p2, 0x10, 5);
    poolmap_add(pm, p2, 0x20, 6);
    CHECK(poolmap_del(pm, p2, 0x10, &b) && b == 5);
    CHECK(poolmap_pop(pm, p2, &a, &b) && b == 6);
    CHECK(!poolmap_pop(pm, p2, &a, &b));
    CHECK_EQ(poolmap_count(pm), 1999);
    uint32_t n1 = 0, n0 = 0;
    while (poolmap_pop(pm, p1, &a, &b)) {
        n1++;
    }
    while (poolmap_pop(pm, p0, &a, &b)) {
        n0++;
    }
    CHECK_EQ(n1, 999);
    CHECK_EQ(n0, 1000);
    CHECK_EQ(poolmap_count(pm), 0);
    poolmap_free(pm);
    poolmap_free(NULL);
}

/* ---- through the merge ---- */

static void w_tag(struct batch *b, unsigned tag, uint64_t s)
{
    b->b[b->n++] = (uint8_t)tag;
    seq(b, s);
}

static void test_merge(void)
{
    struct memfmt_header h = {MEMFMT_VERSION, 8, 1, 0};
    int rc;
    int fd = memfd_create("poolmap-test", 0);
    memfmt_writer *w = memfmt_writer_new(fd, &h, 1, &rc);
    struct accounting *acct = accounting_new(0);
    struct merge *m = merge_new(w, acct, 0);

    struct batch t;
    start(&t, 1);
    t.b[t.n++] = MEMFMT_W_HELLO;
    put(&t, 101);
    put(&t, 0); /* born: unknown */
    t.b[t.n++] = MEMFMT_W_NODE;
    put(&t, 0);
    put(&t, 0x20);
    /* 1: malloc(100) at 0x1000, the chunk of pool 0x1000 */
    w_tag(&t, MEMFMT_W_ALLOC, 1);
    put(&t, MEMFMT_K_MALLOC);
    put(&t, 100);
    put(&t, 0x1000);
    put(&t, 1);
    /* 2, 3: pool 0x1000 blocks of 10 (at the chunk's address) and 20 */
    w_tag(&t, MEMFMT_W_POOL_ALLOC, 2);
    put(&t, 0x1000);
    put(&t, 0x1000);
    put(&t, 10);
    put(&t, 1);
    w_tag(&t, MEMFMT_W_POOL_ALLOC, 3);
    put(&t, 0x1000);
    put(&t, 0x1010);
    put(&t, 20);
    put(&t, 1);
    /* 4: pool 0x5000, a block of 40 at 0x1000 too: live 170, the peak */
    w_tag(&t, MEMFMT_W_POOL_ALLOC, 4);
    put(&t, 0x5000);
    put(&t, 0x1000);
    put(&t, 40);
    put(&t, 1);
    /* 5: free of 0x1010 "from pool 0x5000": not its block, ignored */
    w_tag(&t, MEMFMT_W_POOL_FREE, 5);
    put(&t, 0x5000);
    put(&t, 0x1010);
    /* 6: reset of pool 0x1000: frees 20, then 10 */
    w_tag(&t, MEMFMT_W_POOL_RESET, 6);
    put(&t, 0x1000);
    /* 7: free(0x1000), the chunk: pool 0x5000's block there stays */
    w_tag(&t, MEMFMT_W_FREE, 7);
    put(&t, MEMFMT_K_FREE);
    put(&t, 0x1000);
    /* 8: 0x1000 of pool 0x5000 reported again: the 40 ends, a 50 begins */
    w_tag(&t, MEMFMT_W_POOL_ALLOC, 8);
    put(&t, 0x5000);
    put(&t, 0x1000);
    put(&t, 50);
    put(&t, 1);
    /* 9: its free, the thread's next event: a temporary */
    w_tag(&t, MEMFMT_W_POOL_FREE, 9);
    put(&t, 0x5000);
    put(&t, 0x1000);
    /* 10: a reset of a pool never seen */
    w_tag(&t, MEMFMT_W_POOL_RESET, 10);
    put(&t, 0x7000);
    CHECK(merge_batch(m, t.b, t.n) == 0);
    CHECK(merge_drain(m) == 0);
    CHECK(merge_end(m, MEMFMT_END_EXITED, 0, 1) == 0);
    CHECK(memfmt_writer_finish(w) == 0);

    const struct acct_totals *tot = accounting_totals(acct);
    CHECK_EQ(tot->allocations, 5);
    CHECK_EQ(tot->frees, 5);
    CHECK_EQ(tot->temporary, 1);
    CHECK_EQ(tot->peak_bytes, 170);
    CHECK_EQ(tot->live_bytes, 0);
    CHECK_EQ(merge_stats(m)->unmatched_frees, 0);

    /* Read back: sizes and kinds in order (frees as minus the size). */
    lseek(fd, 0, SEEK_SET);
    memfmt_reader *r = memfmt_reader_open_fd(fd, &rc);
    CHECK(r != NULL);
    static const long want_size[] = {100, 10, 20, 40, -20, -10, -100, -40, 50, -50};
    static const unsigned want_kind[] = {0, 14, 14, 14, 15, 15, 11, 15, 14, 15};
    struct memfmt_record rec;
    int n = 0, ok = 1;
    while (r && (rc = memfmt_read(r, &rec)) > 0) {
        if (rec.tag != MEMFMT_REC_ALLOC && rec.tag != MEMFMT_REC_FREE) {
            continue;
        }
        long size = rec.tag == MEMFMT_REC_ALLOC ? (long)rec.u.alloc.size : -(long)rec.u.free.size;
        unsigned kind = rec.tag == MEMFMT_REC_ALLOC ? rec.u.alloc.kind : rec.u.free.kind;
        ok &= n < 10 && size == want_size[n] && kind == want_kind[n];
        n++;
    }
    CHECK_EQ(rc, 0);
    CHECK_EQ(n, 10);
    CHECK(ok);
    memfmt_reader_free(r);
    merge_free(m);
    accounting_free(acct);
    memfmt_writer_free(w);
    close(fd);
}

int main(void)
{
    test_table();
    test_merge();
    return check_summary("test_poolmap");
}
