// SPDX-License-Identifier: MIT
/* The fast walker's caches (recorder/preload/cfi.c) on fake stacks: an array
 * of cells stands for a thread's stack, and a fake ehframe_rule() gives the
 * rule of each fake pc, so every walk is deterministic. Checked: the
 * addresses and hash of a walk; a repeated stack served from its slot; a
 * changed return-address cell noticed; two stacks with the same first frame
 * both remembered; the clock hand's replacement; a saved rbp compared only
 * where the rest of the walk reads it; the rule cache asking once per pc. */
#include "cfi.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

/* Fake code addresses; the page says which rule applies. */
#define PC_PLAIN 0x1000 /* CFA = rsp + 16, return address at CFA - 8 */
#define PC_SAVES_RBP 0x2000 /* the same, and rbp saved at CFA - 16 (no frame pointer) */
#define PC_RBP_CFA 0x3000 /* CFA = rbp + 16 (a frame-pointer frame), rbp saved at CFA - 16 */

static int rule_asks;

int ehframe_rule(uint64_t pc, struct cfi_rule *out)
{
    rule_asks++;
    memset(out, 0, sizeof *out);
    out->flags = RULE_VALID;
    out->cfa_off = 16;
    out->ra_off = -8;
    switch (pc & ~(uint64_t)0xfff) {
    case PC_PLAIN: return 0;
    case PC_SAVES_RBP:
        out->flags |= RULE_RBP_SAVED;
        out->rbp_off = -16;
        return 0;
    case PC_RBP_CFA:
        out->flags |= RULE_RBP_SAVED | RULE_CFA_RBP;
        out->rbp_off = -16;
        return 0;
    default: return -1;
    }
}

static int no_skip(uint64_t ip)
{
    (void)ip;
    return 0;
}

#define CELLS 4096
static uint64_t stack[CELLS];
static struct cfi_cache *cache;

static uint64_t cell(int i)
{
    return (uint64_t)(uintptr_t)&stack[i];
}

/* Walk from the frame whose rsp is cell `at`, as the recorder does from a hook. */
static int walk_at(int at, uint64_t rip, uint64_t rbp, uint64_t *ips, uint64_t *hash)
{
    return cfi_backtrace(cache, rip, cell(at), rbp, (uintptr_t)(stack + CELLS), 1, no_skip, ips, 64, hash);
}

static uint64_t hash_of(const uint64_t *ips, int n)
{
    uint64_t h = STACK_HASH_SEED;
    for (int i = n; i-- > 0;) {
        h = stack_hash_step(h, ips[i]);
    }
    return h;
}

/* A served walk moves neither the clock hand nor the spare walk; a new
 * walk (of fewer than 32 frames) moves both. */
struct snap {
    uint8_t hand, spare;
};

static struct snap snap(void)
{
    struct snap s = {cache->hand, cache->spare};
    return s;
}

static int was_served(struct snap before)
{
    return cache->hand == before.hand && cache->spare == before.spare;
}

/* Lay out a stack of plain frames at cell `at`: rip's frame, then the
 * return addresses ras[0..n), then the end (a zero return address). */
static void lay_plain(int at, const uint64_t *ras, int n)
{
    for (int k = 0; k < n; k++) {
        stack[at + 2 * k + 1] = ras[k];
    }
    stack[at + 2 * n + 1] = 0;
}

static int same_ips(const uint64_t *a, const uint64_t *b, int n)
{
    return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

static void test_walk_and_repeat(void)
{
    uint64_t ras[3] = {PC_PLAIN + 0x11, PC_PLAIN + 0x22, PC_PLAIN + 0x33};
    lay_plain(0, ras, 3);
    uint64_t ips[64], hash;
    uint64_t want[4] = {PC_PLAIN + 0x01, ras[0], ras[1], ras[2]};

    struct snap s = snap();
    int asks = rule_asks;
    CHECK_EQ(walk_at(0, want[0], 0, ips, &hash), 4);
    CHECK(same_ips(ips, want, 4));
    CHECK_EQ(hash, hash_of(want, 4));
    CHECK(!was_served(s));
    CHECK_EQ(rule_asks - asks, 4); /* one rule per new pc */

    /* The same stack again: served from its slot, no rule asked. */
    s = snap();
    asks = rule_asks;
    memset(ips, 0, sizeof ips);
    CHECK_EQ(walk_at(0, want[0], 0, ips, &hash), 4);
    CHECK(same_ips(ips, want, 4));
    CHECK_EQ(hash, hash_of(want, 4));
    CHECK(was_served(s));
    CHECK_EQ(rule_asks, asks);

    /* Counting only: the addresses come from cfi_last_ips(). */
    s = snap();
    CHECK_EQ(walk_at(0, want[0], 0, NULL, &hash), 4);
    CHECK(was_served(s));
    memset(ips, 0, sizeof ips);
    CHECK_EQ(cfi_last_ips(cache, ips, 64), 4);
    CHECK(same_ips(ips, want, 4));
    CHECK_EQ(cfi_last_ips(cache, ips, 2), 2);

    /* Deeper than the limit: -2, for the caller to walk it all. */
    CHECK_EQ(cfi_backtrace(cache, want[0], cell(0), 0, (uintptr_t)(stack + CELLS), 1, no_skip, ips, 3, &hash), -2);

    /* A return address changed on the stack (another caller, same first
     * frame): the remembered walk is not taken, the new caller is found. */
    stack[3] = PC_PLAIN + 0x44;
    want[2] = PC_PLAIN + 0x44;
    s = snap();
    CHECK_EQ(walk_at(0, want[0], 0, ips, &hash), 4);
    CHECK(same_ips(ips, want, 4));
    CHECK_EQ(hash, hash_of(want, 4));
    CHECK(!was_served(s));

    /* Both stacks are remembered, each in a slot of its own: switching
     * between them is served every time. */
    for (int round = 0; round < 3; round++) {
        uint64_t ra = round % 2 ? PC_PLAIN + 0x44 : PC_PLAIN + 0x22;
        stack[3] = ra;
        want[2] = ra;
        s = snap();
        CHECK_EQ(walk_at(0, want[0], 0, ips, &hash), 4);
        CHECK(same_ips(ips, want, 4));
        CHECK(was_served(s));
    }
}

/* Stack i of the replacement test: first frame at cell 64 * (i + 1). */
static int walk_nth(int i, uint64_t *ips)
{
    uint64_t hash;
    return walk_at(64 * (i + 1), PC_PLAIN + 0x100 + (uint64_t)i, 0, ips, &hash);
}

static void test_replacement(void)
{
    memset(cache, 0, sizeof *cache);
    cfi_cache_init(cache);
    uint64_t ips[64];
    /* CFI_WALKS + 1 stacks with different first frames. */
    for (int i = 0; i <= CFI_WALKS; i++) {
        uint64_t ras[2] = {PC_PLAIN + 0x500 + (uint64_t)i, PC_PLAIN + 0x600};
        lay_plain(64 * (i + 1), ras, 2);
    }
    for (int i = 0; i < CFI_WALKS; i++) {
        CHECK_EQ(walk_nth(i, ips), 3);
    }
    int served = 0;
    for (int i = 0; i < CFI_WALKS; i++) {
        struct snap s = snap();
        CHECK_EQ(walk_nth(i, ips), 3);
        CHECK_EQ(ips[1], PC_PLAIN + 0x500 + (uint64_t)i);
        served += was_served(s);
    }
    CHECK_EQ(served, CFI_WALKS); /* every slot holds one of them */

    /* One more: every slot served since the hand passed, so the hand goes
     * round once, clearing them, and takes the slot it started at (stack 0's). */
    CHECK_EQ(cache->hand, 0);
    CHECK_EQ(walk_nth(CFI_WALKS, ips), 3);
    CHECK_EQ(cache->hand, 1);
    struct snap s = snap();
    CHECK_EQ(walk_nth(1, ips), 3);
    CHECK(was_served(s)); /* stack 1 serves again: its slot is marked */
    s = snap();
    CHECK_EQ(walk_nth(0, ips), 3);
    CHECK(!was_served(s)); /* stack 0 was replaced; it now replaces stack 2, */
    CHECK_EQ(cache->hand, 3); /* passing over stack 1's marked slot */
    s = snap();
    CHECK_EQ(walk_nth(1, ips), 3);
    CHECK(was_served(s));
    s = snap();
    CHECK_EQ(walk_nth(2, ips), 3);
    CHECK(!was_served(s));
    s = snap();
    CHECK_EQ(walk_nth(CFI_WALKS, ips), 3);
    CHECK(was_served(s));
}

static void test_saved_rbp(void)
{
    memset(cache, 0, sizeof *cache);
    cfi_cache_init(cache);
    uint64_t ips[64], hash;
    int at = 2048;

    /* A frame that saves rbp as an ordinary register, with only plain
     * frames further out: nobody reads the saved value, so a different
     * value (it changes on every call in such code) still serves. */
    uint64_t rip = PC_SAVES_RBP + 0x01;
    uint64_t ras[2] = {PC_PLAIN + 0x700, PC_PLAIN + 0x701};
    lay_plain(at, ras, 2);
    stack[at] = 0x1111;
    CHECK_EQ(walk_at(at, rip, 0, ips, &hash), 3);
    stack[at] = 0x2222;
    struct snap s = snap();
    CHECK_EQ(walk_at(at, rip, 0, ips, &hash), 3);
    CHECK(was_served(s));
    CHECK_EQ(ips[2], ras[1]);

    /* The same frame with a frame-pointer frame further out: its CFA is
     * the saved rbp + 16, so a changed saved rbp is another stack. */
    at = 3072;
    rip = PC_SAVES_RBP + 0x02;
    stack[at] = cell(at + 4); /* saved rbp: the caller's frame pointer */
    stack[at + 1] = PC_RBP_CFA + 0x10; /* the caller keeps a frame pointer */
    stack[at + 4] = 0; /* its own saved rbp */
    stack[at + 5] = PC_PLAIN + 0x800; /* its return address */
    stack[at + 7] = 0; /* the end */
    /* Another frame the saved rbp may point to instead. */
    stack[at + 8] = 0;
    stack[at + 9] = PC_PLAIN + 0x900;
    stack[at + 11] = 0;
    uint64_t want_a[3] = {rip, PC_RBP_CFA + 0x10, PC_PLAIN + 0x800};
    uint64_t want_b[3] = {rip, PC_RBP_CFA + 0x10, PC_PLAIN + 0x900};
    CHECK_EQ(walk_at(at, rip, 0, ips, &hash), 3);
    CHECK(same_ips(ips, want_a, 3));
    CHECK_EQ(hash, hash_of(want_a, 3));
    stack[at] = cell(at + 8);
    s = snap();
    CHECK_EQ(walk_at(at, rip, 0, ips, &hash), 3);
    CHECK(same_ips(ips, want_b, 3));
    CHECK_EQ(hash, hash_of(want_b, 3));
    CHECK(!was_served(s));
    /* Both are remembered and told apart by that cell. */
    stack[at] = cell(at + 4);
    s = snap();
    CHECK_EQ(walk_at(at, rip, 0, ips, &hash), 3);
    CHECK(same_ips(ips, want_a, 3));
    CHECK(was_served(s));

    /* A first frame whose CFA is rbp-based: the incoming rbp is part of its
     * key, so the same rsp and pc with another rbp is another stack. */
    at = 3584;
    rip = PC_RBP_CFA + 0x20;
    stack[at + 0] = 0;
    stack[at + 1] = PC_PLAIN + 0xa00;
    stack[at + 3] = 0;
    stack[at + 4] = 0;
    stack[at + 5] = PC_PLAIN + 0xb00;
    stack[at + 7] = 0;
    CHECK_EQ(walk_at(at, rip, cell(at), ips, &hash), 2);
    CHECK_EQ(ips[1], PC_PLAIN + 0xa00);
    s = snap();
    CHECK_EQ(walk_at(at, rip, cell(at + 4), ips, &hash), 2);
    CHECK_EQ(ips[1], PC_PLAIN + 0xb00);
    CHECK(!was_served(s));
    s = snap();
    CHECK_EQ(walk_at(at, rip, cell(at), ips, &hash), 2);
    CHECK_EQ(ips[1], PC_PLAIN + 0xa00);
    CHECK(was_served(s));
}

static void test_no_rule(void)
{
    uint64_t ips[64], hash;
    uint64_t ras[1] = {0x9000}; /* no rule for that page: give up */
    lay_plain(1024, ras, 1);
    stack[1024 + 3] = PC_PLAIN + 0x10;
    CHECK_EQ(walk_at(1024, PC_PLAIN + 0xc00, 0, ips, &hash), -1);
}

int main(void)
{
    cache = calloc(1, sizeof *cache);
    if (!cache) {
        return 1;
    }
    cfi_cache_init(cache);
    test_walk_and_repeat();
    test_replacement();
    test_saved_rbp();
    test_no_rule();
    free(cache);
    return check_summary("test_cfi");
}
