// SPDX-License-Identifier: MIT
/* Unit tests of the definitions (analyzer/accounting.c): calls,
 * temporaries per thread, the peak and who holds it, leaks, slots. */
#include "accounting.h"
#include "check.h"

static struct memfmt_record alloc(uint32_t thread, uint64_t size, uint32_t trace, uint64_t slot)
{
    struct memfmt_record r = {.tag = MEMFMT_REC_ALLOC};
    r.u.alloc.thread = thread;
    r.u.alloc.size = size;
    r.u.alloc.trace = trace;
    r.u.alloc.slot = slot;
    return r;
}

static struct memfmt_record realloc_rec(uint32_t thread, uint64_t old_slot, uint64_t size, uint32_t trace)
{
    /* By the slot rule a realloc gets its old slot back. */
    struct memfmt_record r = alloc(thread, size, trace, old_slot);
    r.tag = MEMFMT_REC_REALLOC;
    r.u.alloc.kind = MEMFMT_K_REALLOC;
    r.u.alloc.old_slot = old_slot;
    return r;
}

static struct memfmt_record free_rec(uint32_t thread, uint64_t slot)
{
    struct memfmt_record r = {.tag = MEMFMT_REC_FREE};
    r.u.free.thread = thread;
    r.u.free.slot = slot;
    return r;
}

static void feed(struct accounting *a, struct memfmt_record r)
{
    CHECK(accounting_feed(a, &r) == 0);
}

int main(void)
{
    struct accounting *a = accounting_new(1);
    /* slot 0: A (trace 1, 100 B); slot 1: B (trace 2, 50 B); B freed at once: temporary. */
    feed(a, alloc(1, 100, 1, 0));
    feed(a, alloc(1, 50, 2, 1));
    feed(a, free_rec(1, 1));
    /* slot 1 again (most recently freed): C (trace 2, 1000 B) -> peak 1100 */
    feed(a, alloc(1, 1000, 2, 1));
    /* another thread's event in between does not count for thread 1 */
    feed(a, alloc(2, 7, 3, 2));
    feed(a, free_rec(1, 1));          /* C freed by thread 1's next event: temporary */
    /* realloc chain: D (trace 1) 10 -> 20 -> 30 bytes, each block freed by the next call */
    feed(a, alloc(1, 10, 1, 1));
    feed(a, realloc_rec(1, 1, 20, 1));
    feed(a, realloc_rec(1, 1, 30, 1));
    feed(a, free_rec(2, 2));          /* thread 2's next event frees its block: temporary */

    const struct acct_totals *t = accounting_totals(a);
    CHECK_EQ(t->allocations, 7);
    /* temporaries: B; C (thread 1's next event after allocating C was its free: thread 2's
     * event does not count); 10 B and 20 B (realloc'd by the next call); thread 2's 7 B. */
    CHECK_EQ(t->temporary, 5);
    CHECK_EQ(t->peak_bytes, 1107);
    CHECK_EQ(t->live_bytes, 130);
    CHECK_EQ(t->live_blocks, 2);
    CHECK_EQ(t->allocated_bytes, 100 + 50 + 1000 + 7 + 10 + 20 + 30);
    /* at the peak (after the 7-byte block): trace 1 held 100, trace 2 1000, trace 3 7 */
    CHECK_EQ(accounting_at_peak(a, 1), 100);
    CHECK_EQ(accounting_at_peak(a, 2), 1000);
    CHECK_EQ(accounting_at_peak(a, 3), 7);
    CHECK_EQ(accounting_cost(a, 1)->live, 130);
    CHECK_EQ(accounting_cost(a, 2)->temporary, 2);
    CHECK_EQ(accounting_cost(a, 1)->calls, 4);

    /* A free of a slot that is not live is reported, and changes nothing. */
    struct memfmt_record bad = free_rec(1, 99);
    CHECK(accounting_feed(a, &bad) == MEMFMT_E_CORRUPT);
    CHECK_EQ(t->live_bytes, 130);
    accounting_free(a);

    /* A later, higher peak replaces the earlier snapshot. */
    a = accounting_new(1);
    feed(a, alloc(1, 500, 1, 0));
    feed(a, free_rec(1, 0));
    feed(a, alloc(1, 300, 2, 0));
    feed(a, alloc(1, 300, 2, 1)); /* peak 600, trace 1 holds 0 */
    CHECK_EQ(accounting_totals(a)->peak_bytes, 600);
    CHECK_EQ(accounting_at_peak(a, 1), 0);
    CHECK_EQ(accounting_at_peak(a, 2), 600);
    accounting_free(a);
    return check_summary("test_accounting");
}
