// SPDX-License-Identifier: MIT
/* The fast stack walker (cfi.c): rules per pc cached per thread, and the
 * remembered walks that make a repeated stack one check instead of a walk.
 * Everything here runs inside the target; the cache is one per thread and
 * never shared. */
#ifndef CFI_H
#define CFI_H

#include "ehframe.h"
#include "hidden.h"

#include <stdint.h>

/* The deepest stack a capture keeps (MEMREC_MAX_DEPTH's upper bound); the
 * walker's arrays are sized from it. */
#define UNWIND_MAX_DEPTH 1024

#define CFI_CACHE_BITS 11

#define CFI_CACHE_BITS 11

/* One frame of a walk, as the next walk checks it (see cfi.c). */
struct walk_frame {
    uint64_t rsp, rbp, pc; /* registers on reaching the frame; pc is the lookup address */
    uint64_t ra_at, ra; /* the cell read for the return address, and its value */
    uint64_t rbp_at, rbp_val; /* the cell read for the saved rbp (0: none) */
    uint64_t ip; /* the address recorded for the frame, 0 if skipped */
    uint64_t hash; /* stack hash of the recorded addresses from the outermost to here */
    uint8_t cfa_rbp; /* the frame's CFA rule reads rbp */
    uint8_t needs_rbp; /* the walk from here on depends on the incoming rbp */
    uint16_t outer_ips; /* recorded addresses from this frame outwards, itself included */
};

/* The hash of a stack, taken from the outermost frame inwards so that a
 * walk reusing an outer part reuses its hash too. 64 bits: two different
 * stacks with equal hashes are about as likely as a bit flipped by a cosmic
 * ray over a year of recording, and cheaper to accept than to rule out. */
#define STACK_HASH_SEED 0x9E3779B97F4A7C15ull

static inline uint64_t stack_hash_step(uint64_t h, uint64_t ip)
{
    h = (h ^ ip) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

/* What the check of a remembered frame reads, packed: the cell the walk
 * read the return address from (bit 0 set: the frame's saved rbp is
 * checked too, see its walk_frame) and the value it read there. Checks
 * run over every frame of a stack on nearly every allocation: 16 bytes a
 * frame keep them to a quarter of the cache lines whole frames would take. */
struct walk_check {
    uint64_t at;
    uint64_t val;
};

#define CFI_WALK_MAX (UNWIND_MAX_DEPTH + 64)
#define CFI_HEADROOM 256
#define CFI_WALKS 32 /* walks remembered, any slot for any stack */

struct cfi_cache {
    struct cfi_rule rules[1u << CFI_CACHE_BITS];
    /* One spare, for the walk being made. A walk starts CFI_HEADROOM
     * frames into its array, so that a later walk sharing its outer part
     * can put its own inner frames in front of it instead of copying. */
    struct walk_frame walk[CFI_WALKS + 1][CFI_HEADROOM + CFI_WALK_MAX];
    struct walk_check check[CFI_WALKS + 1][CFI_HEADROOM + CFI_WALK_MAX]; /* per frame of walk[][] */
    int walk_n[CFI_WALKS + 1];
    uint16_t walk_off[CFI_WALKS + 1]; /* where each walk starts in its array */
    uint8_t slot_walk[CFI_WALKS]; /* the walk remembered in each slot */
    uint8_t walk_slot[CFI_WALKS + 1]; /* the reverse: the slot of each walk, CFI_WALKS for the spare */
    /* One byte of each slot's key (0: empty), side by side, so that a
     * look-up compares all of them at once. */
    uint8_t slot_tag[CFI_WALKS] __attribute__((aligned(16)));
    /* Each slot's first frame, so that candidates are told apart without
     * touching their walks: rsp, pc, and rbp where the walk depends on it. */
    uint64_t slot_rsp[CFI_WALKS], slot_pc[CFI_WALKS], slot_rbp[CFI_WALKS];
    uint8_t slot_needs_rbp[CFI_WALKS];
    uint8_t slot_ref[CFI_WALKS]; /* served since the clock hand last passed */
    uint8_t hand; /* replacement: the next slot to consider */
    uint8_t spare; /* the walk no slot holds: the next one is written there */
    uint8_t last; /* the latest walk */
    uint8_t cur, cur_slot; /* the walk being made, and its slot */
    uint64_t last_hash; /* stack hash of the latest complete walk */
};

/** Set up a freshly mapped (zeroed) cache. */
HIDDEN void cfi_cache_init(struct cfi_cache *c);

/** Walk the stack from (rip, rsp, rbp), writing return addresses into ips,
 * frames for which skip() is true (the recorder's, anywhere) left out. Returns the count; -2
 * when more than `max` frames exist; -1 when this walker cannot do it (the
 * caller uses libunwind). Never reads outside [rsp, stack_hi). With ips
 * NULL, only counts: cfi_last_ips() gives the addresses afterwards. */
HIDDEN int cfi_backtrace(struct cfi_cache *cache, uint64_t rip, uint64_t rsp, uint64_t rbp, uintptr_t stack_hi,
                         int rip_is_return, int (*skip)(uint64_t), uint64_t *ips, int max, uint64_t *hash);

/** The return addresses of the latest successful cfi_backtrace(), at most
 * `max`; returns their count. */
HIDDEN int cfi_last_ips(struct cfi_cache *cache, uint64_t *ips, int max);

#endif
