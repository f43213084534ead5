// SPDX-License-Identifier: MIT
/* Reading a function's DWARF call-frame information (.eh_frame) down to the
 * one rule a frame-by-frame walk needs. Runs inside the target: never
 * allocates, takes no lock of its own (_dl_find_object is lock-free). */
#ifndef EHFRAME_H
#define EHFRAME_H

#include "hidden.h"

#include <stdint.h>

enum rule_flags {
    RULE_VALID = 1 << 0, /* a usable rule */
    RULE_END = 1 << 1, /* the return address is undefined: outermost frame */
    RULE_RBP_SAVED = 1 << 2,
    RULE_CFA_RBP = 1 << 7,
};

/* How to find the caller's frame from a pc: the CFA is rsp or rbp plus
 * cfa_off; the return address and (if saved) rbp are at CFA offsets.
 * 16 bytes, so the per-thread cache stays within the L1 data cache. */
struct cfi_rule {
    uint64_t pc; /* the key; 0 = empty */
    int32_t cfa_off;
    int16_t rbp_off;
    int8_t ra_off;
    uint8_t flags; /* enum rule_flags; bit 7: CFA is rbp-based */
};

/** The rule for the function containing `pc` (a lookup address: a return
 * address minus one), from the .eh_frame of the object mapped there, found
 * through _dl_find_object and its .eh_frame_hdr search table. 0 with *out
 * set (flags RULE_VALID and the rest); -1 when there is none or it does not
 * fit a rule (CFA expressions, signal frames, registers saved in
 * registers, offsets too large), and the caller gives up on the stack.
 * Async-signal-safe; reads only the loaded object's own tables. */
HIDDEN int ehframe_rule(uint64_t pc, struct cfi_rule *out);

#endif
