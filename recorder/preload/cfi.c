// SPDX-License-Identifier: MIT
/* A fast x86-64 stack walker for the recorder's hot path. ehframe.c reduces
 * each function's DWARF call-frame information to the three rules that
 * matter here (where the CFA is, where the return address and the caller's
 * rbp were saved); this file caches that rule per instruction pointer in
 * the thread's own table, so a frame costs one table probe and two loads,
 * and remembers whole walks, so a repeated stack costs a check of the cells
 * it read instead of a walk. Anything unusual (no rule, a read outside the
 * stack) makes it give up, and the caller falls back to libunwind. Runs
 * inside the target: never allocates, takes no lock. */
#define _GNU_SOURCE
#include "cfi.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ehframe.h"

/* ---- the rule of each pc, cached per thread ---- */

static const struct cfi_rule *rule_for(struct cfi_cache *cache, uint64_t pc)
{
    uint32_t i = (uint32_t)((pc * 0x9E3779B97F4A7C15ull) >> (64 - CFI_CACHE_BITS));
    struct cfi_rule *e = &cache->rules[i];
    if (e->pc == pc) {
        return e;
    }
    struct cfi_rule fresh = {0};
    if (ehframe_rule(pc, &fresh) < 0) {
        fresh.flags = 0;
    }
    fresh.pc = pc;
    *e = fresh;
    return e;
}

/* ---- walks, reusing the previous one ---- */

static int walk(struct cfi_cache *cache, uint64_t rip, uint64_t rsp, uint64_t rbp, uintptr_t stack_hi,
                int rip_is_return, int (*skip)(uint64_t), uint64_t *ips, int max);

/* A remembered walk: its array from where it starts. */
static inline struct walk_frame *walk_of(struct cfi_cache *c, int w)
{
    return c->walk[w] + c->walk_off[w];
}

static inline struct walk_check *check_of(struct cfi_cache *c, int w)
{
    return c->check[w] + c->walk_off[w];
}

/* The cell a frame that read none is checked against: always 0, like the
 * value remembered for it, so the check needs no test for "no cell". */
static const uint64_t no_cell = 0;

/* The packed checks of frames [from, to) of a walk of n complete frames.
 * A saved rbp matters only when the walk from the next frame on depends on
 * the rbp it receives: in code built without frame pointers rbp is an
 * ordinary register whose saved value changes from call to call, and
 * comparing it would make every such stack look new. */
static void make_checks(const struct walk_frame *f, struct walk_check *chk, int from, int to, int n)
{
    for (int k = from; k < to; k++) {
        int rbp = f[k].rbp_at && k + 1 < n && f[k + 1].needs_rbp;
        chk[k].at = (f[k].ra_at ? f[k].ra_at : (uint64_t)(uintptr_t)&no_cell) | (uint64_t)rbp;
        chk[k].val = f[k].ra_at ? f[k].ra : 0;
    }
}

/* Fill in hash, needs_rbp and outer_ips of the frames inside `known`, from the ones
 * outside it, which are complete. */
static void complete_frames(struct walk_frame *cur, int cn, int known)
{
    uint64_t h = known < cn ? cur[known].hash : STACK_HASH_SEED;
    int needs = known < cn ? cur[known].needs_rbp : 0;
    int ips = known < cn ? cur[known].outer_ips : 0;
    for (int k = known; k-- > 0;) {
        struct walk_frame *f = &cur[k];
        if (f->ip) {
            h = stack_hash_step(h, f->ip);
            ips++;
        }
        f->hash = h;
        f->outer_ips = (uint16_t)ips;
        /* The incoming rbp matters if this frame's CFA uses it, or if it
         * reaches the next frame unchanged and matters there. */
        needs = f->cfa_rbp || (!f->rbp_at && needs);
        f->needs_rbp = (uint8_t)needs;
    }
}

/* One byte of a hash of a walk's first-frame registers: the slots' tags
 * (0: empty) sort candidates before their registers are compared. */
static inline uint8_t key_tag(uint64_t rsp, uint64_t pc)
{
    uint8_t t = (uint8_t)((rsp ^ (pc * 0x9E3779B97F4A7C15ull)) >> 56);
    return t ? t : 1;
}

/* Slot s now holds a walk whose first frame is f0. */
static void set_slot(struct cfi_cache *c, int s, const struct walk_frame *f0)
{
    c->slot_tag[s] = key_tag(f0->rsp, f0->pc);
    c->slot_rsp[s] = f0->rsp;
    c->slot_pc[s] = f0->pc;
    c->slot_rbp[s] = f0->rbp;
    c->slot_needs_rbp[s] = f0->needs_rbp;
    c->slot_ref[s] = 1;
}

/* Complete a walk of cn frames whose frames from `known` outwards are
 * already complete (hash, needs_rbp): fill in the inner ones, remember the
 * walk for the next one, and give the stack hash. */
static int finish_walk(struct cfi_cache *c, struct walk_frame *cur, int cn, int known, int n)
{
    complete_frames(cur, cn, known);
    make_checks(cur, check_of(c, c->cur), 0, cn, cn);
    /* Remember it in its slot; what the slot held becomes the spare. */
    c->walk_n[c->cur] = cn;
    c->last_hash = cn ? cur[0].hash : STACK_HASH_SEED;
    uint8_t old = c->slot_walk[c->cur_slot];
    c->slot_walk[c->cur_slot] = c->cur;
    c->walk_slot[c->cur] = c->cur_slot;
    c->walk_slot[old] = CFI_WALKS;
    if (cn) {
        set_slot(c, c->cur_slot, &cur[0]);
    } else {
        c->slot_tag[c->cur_slot] = 0;
    }
    c->spare = old;
    c->last = c->cur;
    return n;
}

void cfi_cache_init(struct cfi_cache *c)
{
    for (int i = 0; i < CFI_WALKS; i++) {
        c->slot_walk[i] = (uint8_t)i;
        c->walk_slot[i] = (uint8_t)i;
    }
    c->walk_slot[CFI_WALKS] = CFI_WALKS;
    c->spare = CFI_WALKS;
    c->last = 0;
}

/* Whether a cell that remembered frame k's walk read holds another value
 * now: its return address, or the saved rbp that the walk from the next
 * frame on depends on (make_checks()). */
static inline uint64_t cell_now(const struct walk_check *c)
{
    uint64_t v;
    memcpy(&v, (const void *)(uintptr_t)(c->at & ~(uint64_t)1), 8);
    return v;
}

static inline int frame_changed(const struct walk_frame *f, const struct walk_check *chk, int k)
{
    uint64_t v;
    if (cell_now(&chk[k]) != chk[k].val) {
        return 1;
    }
    if (chk[k].at & 1) {
        memcpy(&v, (const void *)(uintptr_t)f[k].rbp_at, 8);
        if (v != f[k].rbp_val) {
            return 1;
        }
    }
    return 0;
}

/* Nonzero when the return-address cell changed, or the frame has a saved
 * rbp to check as well (frame_changed() then looks closer). */
static inline uint64_t cell_differs(const struct walk_check *c)
{
    return (cell_now(c) ^ c->val) | (c->at & 1);
}

/* -1 when every cell that frames [from, to) of a remembered walk read still
 * holds what it read then, else a frame whose cell changed. Frame `hint`
 * is checked first: candidates for one stack that share their first frame
 * mostly part at the same frame (the caller that differs), so the frame
 * where the last candidate failed rules out the next one with one
 * comparison instead of a walk up to it. */
static int first_changed(const struct walk_frame *f, const struct walk_check *chk, int from, int to, int hint)
{
    if (hint >= from && hint < to && frame_changed(f, chk, hint)) {
        return hint;
    }
    /* Four frames at a time, with one branch: a long unchanged stack (deep
     * recursion) is checked at the speed of its loads. A group with a
     * changed cell, or with a saved rbp to check, is looked at frame by
     * frame. */
    int k = from;
    while (k < to) {
        if (k + 4 <= to && !(cell_differs(&chk[k]) | cell_differs(&chk[k + 1]) | cell_differs(&chk[k + 2]) |
                             cell_differs(&chk[k + 3]))) {
            k += 4;
            continue;
        }
        int end = k + 4 < to ? k + 4 : to;
        for (; k < end; k++) {
            if (frame_changed(f, chk, k)) {
                return k;
            }
        }
    }
    return -1;
}

/* Shared parts at least this long are reused where they lie, not copied. */
#define REUSE_IN_PLACE 32

/* Consecutive stacks of a thread mostly share their outer part. A walk
 * reaching a frame whose registers equal those the previous walk had at
 * that frame, with every stack cell that walk read beyond it unchanged,
 * would read the same cells and find the same frames: the previous result
 * is taken instead of walking on. The check is a few loads per frame. */
static int reuse_previous(struct cfi_cache *c, struct walk_frame *prev, int pn, int j, struct walk_frame *cur, int cn,
                          uint64_t *ips, int n, int max)
{
    if (first_changed(prev, check_of(c, c->last), j, pn, -1) >= 0) {
        return -1;
    }
    if (cn + (pn - j) > CFI_WALK_MAX) {
        return -1;
    }
    int first = cn;
    if (pn - j >= REUSE_IN_PLACE && cn <= c->walk_off[c->last] + j) {
        /* A long shared part (deep recursion): instead of copying it, put
         * the few new frames in front of it, in the previous walk's own
         * array. The previous walk is gone; its slot holds the new one. */
        int count = prev[j].outer_ips;
        if (n + count > max) {
            return -2;
        }
        if (ips) {
            for (int k = j; k < pn; k++) {
                if (prev[k].ip) {
                    ips[n++] = prev[k].ip;
                }
            }
        } else {
            n += count;
        }
        struct walk_frame *w = prev + (j - cn);
        memcpy(w, cur, (size_t)cn * sizeof *cur);
        c->walk_off[c->last] = (uint16_t)(c->walk_off[c->last] + (j - cn));
        c->walk_n[c->last] = cn + (pn - j);
        complete_frames(w, cn + (pn - j), cn);
        make_checks(w, check_of(c, c->last), 0, cn, cn + (pn - j));
        c->last_hash = w[0].hash;
        if (c->walk_slot[c->last] < CFI_WALKS) {
            set_slot(c, c->walk_slot[c->last], &w[0]);
        }
        return n;
    }
    for (int k = j; k < pn; k++) {
        if (prev[k].ip) {
            if (n == max) {
                return -2;
            }
            if (ips) {
                ips[n] = prev[k].ip;
            }
            n++;
        }
        cur[cn++] = prev[k];
    }
    return finish_walk(c, cur, cn, first, n);
}

int cfi_last_ips(struct cfi_cache *cache, uint64_t *ips, int max)
{
    const struct walk_frame *w = walk_of(cache, cache->last);
    int wn = cache->walk_n[cache->last];
    int n = 0;
    for (int k = 0; k < wn && n < max; k++) {
        if (w[k].ip) {
            ips[n++] = w[k].ip;
        }
    }
    return n;
}

int cfi_backtrace(struct cfi_cache *cache, uint64_t rip, uint64_t rsp, uint64_t rbp, uintptr_t stack_hi,
                  int rip_is_return, int (*skip)(uint64_t), uint64_t *ips, int max, uint64_t *hash)
{
    int n = walk(cache, rip, rsp, rbp, stack_hi, rip_is_return, skip, ips, max);
    *hash = cache->last_hash;
    return n;
}

/* The slots with this tag, as bits. */
static inline uint32_t slots_tagged(const struct cfi_cache *c, uint8_t tag)
{
#if defined(__SSE2__) && CFI_WALKS == 32
    __m128i t = _mm_set1_epi8((char)tag);
    __m128i lo = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)c->slot_tag), t);
    __m128i hi = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(c->slot_tag + 16)), t);
    return (uint32_t)_mm_movemask_epi8(lo) | (uint32_t)_mm_movemask_epi8(hi) << 16;
#else
    uint32_t m = 0;
    for (int s = 0; s < CFI_WALKS; s++) {
        m |= (uint32_t)(c->slot_tag[s] == tag) << s;
    }
    return m;
#endif
}

static int walk(struct cfi_cache *cache, uint64_t rip, uint64_t rsp, uint64_t rbp, uintptr_t stack_hi,
                int rip_is_return, int (*skip)(uint64_t), uint64_t *ips, int max)
{
    int n = 0;
    /* A return address is looked up at the call before it. */
    uint64_t pc = rip_is_return ? rip - 1 : rip;
    /* A stack seen before from the same first frame (same registers) whose
     * cells are unchanged is that stack again: no walk at all. Several
     * stacks often share their first frame (one function called on
     * different paths), so any slot may hold any stack: a byte of each
     * slot's first-frame registers (its tag) is compared for all slots at
     * once, then the registers of the tagged ones, and only slots whose
     * registers match are checked cell by cell. Slot memory a walk never reached is never
     * touched, so slots cost address space, not memory. */
    int hint = -1;
    for (uint32_t cand = slots_tagged(cache, key_tag(rsp, pc)); cand; cand &= cand - 1) {
        int slot = __builtin_ctz(cand);
        if (cache->slot_rsp[slot] != rsp || cache->slot_pc[slot] != pc ||
            (cache->slot_needs_rbp[slot] && cache->slot_rbp[slot] != rbp)) {
            continue;
        }
        const struct walk_frame *seen = walk_of(cache, cache->slot_walk[slot]);
        int sn = cache->walk_n[cache->slot_walk[slot]];
        if (sn <= 0) {
            continue;
        }
        int changed = first_changed(seen, check_of(cache, cache->slot_walk[slot]), 0, sn, hint);
        if (changed >= 0) {
            hint = changed;
            continue;
        }
        /* The addresses themselves are read only when asked for: the
         * caller mostly knows the stack by its hash. */
        if (seen[0].outer_ips > max) {
            return -2;
        }
        n = seen[0].outer_ips;
        for (int k = 0, i = 0; ips && k < sn; k++) {
            if (seen[k].ip) {
                ips[i++] = seen[k].ip;
            }
        }
        cache->slot_ref[slot] = 1;
        cache->last = cache->slot_walk[slot];
        cache->last_hash = seen[0].hash;
        return n;
    }
    /* The new walk replaces a slot that has not served since the clock hand
     * last passed it (an approximation of least recently used, in O(1)). */
    while (cache->slot_ref[cache->hand]) {
        cache->slot_ref[cache->hand] = 0;
        cache->hand = (uint8_t)((cache->hand + 1) % CFI_WALKS);
    }
    uint8_t slot = cache->hand;
    cache->hand = (uint8_t)((cache->hand + 1) % CFI_WALKS);
    /* Else walk, reusing the outer part of the latest walk where it can;
     * the new walk goes to the spare buffer. */
    struct walk_frame *prev = walk_of(cache, cache->last);
    int pn = cache->walk_n[cache->last];
    cache->cur = cache->spare;
    cache->cur_slot = slot;
    cache->walk_off[cache->cur] = CFI_HEADROOM;
    struct walk_frame *cur = walk_of(cache, cache->cur);
    int cn = 0;
    int j = 0;
    cache->walk_n[cache->cur] = 0;
    for (int guard = 0; guard < CFI_WALK_MAX; guard++) {
        /* Frames of the previous walk are ordered by rsp, like this one's. */
        while (j < pn && prev[j].rsp < rsp) {
            j++;
        }
        if (j < pn && prev[j].rsp == rsp && prev[j].pc == pc && (!prev[j].needs_rbp || prev[j].rbp == rbp)) {
            int r = reuse_previous(cache, prev, pn, j, cur, cn, ips, n, max);
            if (r != -1) {
                return r;
            }
            pn = 0; /* changed since: walk on */
        }
        struct walk_frame *f = &cur[cn++];
        f->rsp = rsp;
        f->rbp = rbp;
        f->pc = pc;
        f->ip = 0;
        f->ra_at = 0; /* the outermost frame reads no cell */
        f->rbp_at = 0;
        f->cfa_rbp = 0;
        if (skip(rip)) {
            /* The recorder's own frames: those of the hook, and any further
             * out (deepbind_dlopen() between the program's dlopen and the
             * loader, a hook a signal handler interrupted). */
        } else {
            if (n == max) {
                return -2; /* deeper than the limit: the caller walks it all */
            }
            if (ips) {
                ips[n] = rip;
            }
            n++;
            f->ip = rip;
        }
        const struct cfi_rule *rule = rule_for(cache, pc);
        if (!(rule->flags & RULE_VALID)) {
            return -1;
        }
        if (rule->flags & RULE_END) {
            break;
        }
        uint64_t cfa = ((rule->flags & RULE_CFA_RBP) ? rbp : rsp) + (uint64_t)(int64_t)rule->cfa_off;
        uint64_t ra_at = cfa + (uint64_t)(int64_t)rule->ra_off;
        if (cfa <= rsp || ra_at < rsp || ra_at + 8 > stack_hi) {
            return -1; /* would read outside this stack */
        }
        uint64_t ra;
        memcpy(&ra, (const void *)(uintptr_t)ra_at, 8);
        f->cfa_rbp = (rule->flags & RULE_CFA_RBP) != 0;
        f->ra_at = ra_at;
        f->ra = ra;
        if (rule->flags & RULE_RBP_SAVED) {
            uint64_t rbp_at = cfa + (uint64_t)(int64_t)rule->rbp_off;
            if (rbp_at < rsp || rbp_at + 8 > stack_hi) {
                return -1;
            }
            memcpy(&rbp, (const void *)(uintptr_t)rbp_at, 8);
            f->rbp_at = rbp_at;
            f->rbp_val = rbp;
        }
        rsp = cfa;
        if (ra == 0) {
            break;
        }
        rip = ra;
        pc = ra - 1;
        if (guard + 1 == CFI_WALK_MAX) {
            return -1;
        }
    }
    /* A complete walk: remembered for the next one. */
    return finish_walk(cache, cur, cn, cn, n);
}
