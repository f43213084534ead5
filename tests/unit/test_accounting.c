// SPDX-License-Identifier: MIT
/* Unit tests of the definitions (analyzer/accounting.c): calls,
 * temporaries per thread, the peak and who holds it, leaks, slots. */
#include "accounting.h"

#include <string.h>

#include "check.h"

static struct memfmt_record alloc(uint64_t size, uint32_t trace)
{
    struct memfmt_record r = {.tag = MEMFMT_REC_ALLOC};
    r.u.alloc.thread = 1;
    r.u.alloc.size = size;
    r.u.alloc.trace = trace;
    return r;
}

static struct memfmt_record realloc_rec(uint64_t old_size, uint32_t old_trace, int temporary, uint64_t size,
                                        uint32_t trace)
{
    struct memfmt_record r = alloc(size, trace);
    r.tag = MEMFMT_REC_REALLOC;
    r.u.alloc.kind = MEMFMT_K_REALLOC;
    r.u.alloc.old_size = old_size;
    r.u.alloc.old_trace = old_trace;
    r.u.alloc.old_temporary = temporary;
    return r;
}

static struct memfmt_record free_rec(uint64_t size, uint32_t trace, int temporary)
{
    struct memfmt_record r = {.tag = MEMFMT_REC_FREE};
    r.u.free.thread = 1;
    r.u.free.size = size;
    r.u.free.trace = trace;
    r.u.free.temporary = temporary;
    return r;
}

static void feed(struct accounting *a, struct memfmt_record r)
{
    CHECK(accounting_feed(a, &r) == 0);
}

static struct memfmt_record map_rec(uint32_t trace, int64_t delta, uint32_t call)
{
    struct memfmt_record r = {.tag = MEMFMT_REC_MAP};
    r.u.map.thread = 1;
    r.u.map.kind = delta > 0 ? MEMFMT_MK_MMAP : MEMFMT_MK_MUNMAP;
    r.u.map.trace = trace;
    r.u.map.delta = delta;
    r.u.map.call = call;
    return r;
}

/* Mapped memory has its own peak and snapshots: heap events between
 * mapping changes move neither, and the heap figures never see a mapping. */
static void test_mapped(void)
{
    struct accounting *a = accounting_new(1);
    struct memfmt_record r = map_rec(1, 4096, 1);
    CHECK(accounting_feed(a, &r) == 0);
    feed(a, alloc(500, 2)); /* heap peak 500, trace 2 */
    r = map_rec(2, 8192, 1); /* mapped peak 12288: trace 1 4096, trace 2 8192 */
    CHECK(accounting_feed(a, &r) == 0);
    r = map_rec(2, -8192, 0);
    CHECK(accounting_feed(a, &r) == 0);
    r = map_rec(1, 4096, 0); /* an mremap growing trace 1: not a call, below the peak */
    CHECK(accounting_feed(a, &r) == 0);
    r = map_rec(1, -9000, 0); /* more than trace 1 has: refused, nothing changes */
    CHECK(accounting_feed(a, &r) == MEMFMT_E_CORRUPT);
    const struct acct_totals *t = accounting_totals(a);
    CHECK_EQ(t->mapped_peak, 12288);
    CHECK_EQ(t->mapped_bytes, 8192);
    CHECK_EQ(t->mapping_calls, 2);
    CHECK_EQ(accounting_mapped_at_peak(a, 1), 4096);
    CHECK_EQ(accounting_mapped_at_peak(a, 2), 8192);
    CHECK_EQ(accounting_cost(a, 1)->mapped, 8192);
    CHECK_EQ(accounting_cost(a, 2)->mapped, 0);
    CHECK_EQ(accounting_cost(a, 2)->mapping_calls, 1);
    CHECK_EQ(t->peak_bytes, 500);
    CHECK_EQ(t->allocations, 1);
    CHECK_EQ(accounting_at_peak(a, 2), 500);
    CHECK_EQ(accounting_at_peak(a, 1), 0);
    accounting_free(a);
}

/* A batch of events (accounting_feed_events) gives what the same events
 * as records give, one by one: totals, costs, the peak and who held it,
 * refused frees, and allocations of traces not defined yet, which go to
 * trace 0 as model.c charges records. Sampled or not. */
static void test_batch(uint64_t sample_rate)
{
    struct memfmt_event ev[] = {
        {100, 1, 0, 0, 0},
        {50, 2, 0, 0, 0},
        {50, 2, MEMFMT_EV_FREE | MEMFMT_EV_TEMPORARY, 0, 0},
        {1000, 2, 0, 0, 0},
        {7, 3, 0, 0, 0},
        {1000, 2, MEMFMT_EV_FREE, 0, 0},
        {10, 1, 0, 0, 0},
        {10, 1, MEMFMT_EV_FREE | MEMFMT_EV_TEMPORARY | MEMFMT_EV_REALLOC, 0, 0},
        {20, 1, 0, 0, 0},
        {20, 1, MEMFMT_EV_FREE | MEMFMT_EV_REALLOC, 0, 0},
        {5000, 9, 0, 0, 0}, /* trace 9 is not defined: trace 0, and counted */
        {5000, 3, MEMFMT_EV_FREE, 0, 0}, /* trace 3 holds no such block: refused */
        {64, 9, 0, 0, 0}, /* the same */
        {7, 3, MEMFMT_EV_FREE | MEMFMT_EV_TEMPORARY, 0, 0},
    };
    enum { N = sizeof ev / sizeof ev[0], NTRACES = 4 };
    struct accounting *one = accounting_new(1), *batch = accounting_new(1);
    accounting_set_sample_rate(one, sample_rate);
    accounting_set_sample_rate(batch, sample_rate);
    uint64_t bad = 0;
    for (size_t i = 0; i < N; i++) {
        struct memfmt_record r;
        if (ev[i].flags & MEMFMT_EV_REALLOC) {
            r = realloc_rec(ev[i].size, ev[i].trace, (ev[i].flags & MEMFMT_EV_TEMPORARY) != 0, ev[i + 1].size,
                            ev[i + 1].trace);
            i++;
        } else if (ev[i].flags & MEMFMT_EV_FREE) {
            r = free_rec(ev[i].size, ev[i].trace, (ev[i].flags & MEMFMT_EV_TEMPORARY) != 0);
        } else {
            r = alloc(ev[i].size, ev[i].trace);
        }
        int fixed = r.tag != MEMFMT_REC_FREE && r.u.alloc.trace >= NTRACES;
        if (fixed) {
            r.u.alloc.trace = 0;
        }
        bad += accounting_feed(one, &r) < 0 || fixed;
    }
    /* In two batches, split between the halves of no realloc. */
    CHECK_EQ(accounting_feed_events(batch, ev, 5, NTRACES) + accounting_feed_events(batch, ev + 5, N - 5, NTRACES),
             bad);
    CHECK_EQ(bad, 3);
    accounting_finish(one);
    accounting_finish(batch);
    CHECK(memcmp(accounting_totals(one), accounting_totals(batch), sizeof(struct acct_totals)) == 0);
    CHECK_EQ(accounting_ntraces(one), accounting_ntraces(batch));
    for (uint32_t t = 0; t < accounting_ntraces(one); t++) {
        CHECK(memcmp(accounting_cost(one, t), accounting_cost(batch, t), sizeof(struct acct_cost)) == 0);
        CHECK_EQ(accounting_at_peak(one, t), accounting_at_peak(batch, t));
    }
    accounting_free(one);
    accounting_free(batch);
}

/* Ids and sizes from a file cannot size anything (issue 11). */
static void test_hostile(void)
{
    struct accounting *a = accounting_new(1);
    feed(a, alloc(10001, 1));
    /* A free naming a trace no allocation was charged to: refused, and the
     * per-trace table does not grow to the id (2^32 - 1 asked 378 GB). */
    struct memfmt_record r = free_rec(10001, UINT32_MAX, 0);
    CHECK(accounting_feed(a, &r) == MEMFMT_E_CORRUPT);
    r = realloc_rec(10001, 1u << 26, 0, 5, 1);
    CHECK(accounting_feed(a, &r) == MEMFMT_E_CORRUPT);
    CHECK_EQ(accounting_ntraces(a), 2);
    /* An allocation above 128 TiB: refused and counted, no figure moves. */
    uint64_t before = accounting_totals(a)->allocated_bytes;
    r = alloc(UINT64_MAX, 1);
    CHECK(accounting_feed(a, &r) == MEMFMT_E_CORRUPT);
    CHECK_EQ(accounting_totals(a)->impossible, 1);
    CHECK_EQ(accounting_totals(a)->allocated_bytes, before);
    accounting_free(a);

    /* In a batch, an allocation and its free at an undefined trace are
     * both charged to trace 0, and both counted. */
    a = accounting_new(1);
    accounting_set_sample_rate(a, 4096);
    struct memfmt_event ev[] = {
        {10001, 1u << 24, 0, 0, 0},
        {10001, 1u << 24, MEMFMT_EV_FREE, 0, 0},
        {UINT64_MAX, 1, 0, 0, 0},
        {ACCT_MAX_SIZE, 1, 0, 0, 0},
    };
    CHECK_EQ(accounting_feed_events(a, ev, 4, 2), 3);
    accounting_finish(a);
    CHECK_EQ(accounting_ntraces(a), 2);
    CHECK_EQ(accounting_totals(a)->impossible, 1);
    CHECK(accounting_totals(a)->live_bytes >= ACCT_MAX_SIZE); /* the largest possible one counts */
    CHECK_EQ(accounting_cost(a, 0)->live, 0);
    accounting_free(a);
}

int main(void)
{
    test_hostile();
    test_mapped();
    test_batch(0);
    test_batch(4096);
    /* Which frees are temporaries is decided by the writer (it sees the
     * addresses and threads); accounting counts what the events say. */
    struct accounting *a = accounting_new(1);
    feed(a, alloc(100, 1));
    feed(a, alloc(50, 2));
    feed(a, free_rec(50, 2, 1));
    feed(a, alloc(1000, 2));
    feed(a, alloc(7, 3)); /* peak: 1107 */
    feed(a, free_rec(1000, 2, 1));
    feed(a, alloc(10, 1));
    feed(a, realloc_rec(10, 1, 1, 20, 1));
    feed(a, realloc_rec(20, 1, 1, 30, 1));
    feed(a, free_rec(7, 3, 1));

    const struct acct_totals *t = accounting_totals(a);
    CHECK_EQ(t->allocations, 7);
    CHECK_EQ(t->temporary, 5);
    CHECK_EQ(t->frees, 5);
    CHECK_EQ(t->peak_bytes, 1107);
    CHECK_EQ(t->live_bytes, 130);
    CHECK_EQ(t->live_blocks, 2);
    CHECK_EQ(t->allocated_bytes, 100 + 50 + 1000 + 7 + 10 + 20 + 30);
    /* at the peak (after the 7-byte block): trace 1 held 100, trace 2 1000, trace 3 7 */
    CHECK_EQ(accounting_at_peak(a, 1), 100);
    CHECK_EQ(accounting_at_peak(a, 2), 1000);
    CHECK_EQ(accounting_at_peak(a, 3), 7);
    /* and blocks: trace 1 one, trace 2 one (the 50 was freed), trace 3 one */
    CHECK_EQ(accounting_blocks_at_peak(a, 1), 1);
    CHECK_EQ(accounting_blocks_at_peak(a, 2), 1);
    CHECK_EQ(accounting_blocks_at_peak(a, 3), 1);
    CHECK_EQ(accounting_cost(a, 1)->live_blocks, 2);
    CHECK_EQ(accounting_cost(a, 3)->live_blocks, 0);
    CHECK_EQ(accounting_cost(a, 1)->live, 130);
    CHECK_EQ(accounting_cost(a, 2)->temporary, 2);
    CHECK_EQ(accounting_cost(a, 1)->calls, 4);

    /* A free of a block no trace holds is reported, and changes nothing. */
    struct memfmt_record bad = free_rec(5000, 3, 0);
    CHECK(accounting_feed(a, &bad) == MEMFMT_E_CORRUPT);
    CHECK_EQ(t->live_bytes, 130);
    CHECK_EQ(t->bad_frees, 1);
    accounting_free(a);

    /* A later, higher peak replaces the earlier snapshot. */
    a = accounting_new(1);
    feed(a, alloc(500, 1));
    feed(a, free_rec(500, 1, 1));
    feed(a, alloc(300, 2));
    feed(a, alloc(300, 2)); /* peak 600, trace 1 holds 0 */
    CHECK_EQ(accounting_totals(a)->peak_bytes, 600);
    CHECK_EQ(accounting_at_peak(a, 1), 0);
    CHECK_EQ(accounting_at_peak(a, 2), 600);
    CHECK_EQ(accounting_blocks_at_peak(a, 1), 0);
    CHECK_EQ(accounting_blocks_at_peak(a, 2), 2);
    feed(a, free_rec(300, 2, 0)); /* after the peak: the snapshot keeps 2 */
    CHECK_EQ(accounting_blocks_at_peak(a, 2), 2);
    CHECK_EQ(accounting_cost(a, 2)->live_blocks, 1);
    accounting_free(a);
    return check_summary("test_accounting");
}
