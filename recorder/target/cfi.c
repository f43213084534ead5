// SPDX-License-Identifier: MIT
/* A fast x86-64 stack walker for the recorder's hot path. It reads each
 * function's DWARF call-frame information (.eh_frame, found through
 * _dl_find_object and the .eh_frame_hdr search table) once, reduces it to
 * the three rules that matter here (where the CFA is, where the return
 * address and the caller's rbp were saved), and caches that per
 * instruction pointer in the thread's own table. A frame then costs one
 * table probe and two loads. Anything unusual (expressions, signal frames,
 * registers saved in registers, a read outside the stack) makes it give up,
 * and the caller falls back to libunwind. Runs inside the target: never
 * allocates, takes no lock. */
#define _GNU_SOURCE
#include "recorder_internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <dlfcn.h>
#include <string.h>

#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16

enum rule_flags {
    RULE_VALID = 1 << 0, /* a usable rule */
    RULE_END = 1 << 1, /* the return address is undefined: outermost frame */
    RULE_RBP_SAVED = 1 << 2,
    RULE_CFA_RBP = 1 << 7,
};

/* ---- reading DWARF encodings from memory ---- */

struct reader {
    const uint8_t *p, *end;
    int bad;
};

static uint64_t uleb(struct reader *r)
{
    uint64_t v = 0;
    unsigned shift = 0;
    while (r->p < r->end) {
        uint8_t b = *r->p++;
        if (shift < 64) {
            v |= (uint64_t)(b & 0x7f) << shift;
        }
        shift += 7;
        if (!(b & 0x80)) {
            return v;
        }
    }
    r->bad = 1;
    return 0;
}

static int64_t sleb(struct reader *r)
{
    int64_t v = 0;
    unsigned shift = 0;
    uint8_t b = 0;
    while (r->p < r->end) {
        b = *r->p++;
        if (shift < 64) {
            v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
        }
        shift += 7;
        if (!(b & 0x80)) {
            if (shift < 64 && (b & 0x40)) {
                v |= -((int64_t)1 << shift);
            }
            return v;
        }
    }
    r->bad = 1;
    return 0;
}

static uint64_t fixed(struct reader *r, unsigned n)
{
    if ((size_t)(r->end - r->p) < n) {
        r->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    memcpy(&v, r->p, n); /* x86-64 is little-endian */
    r->p += n;
    return v;
}

/* A pointer in DW_EH_PE encoding `enc`; `dbase` serves datarel. */
static uint64_t encoded(struct reader *r, uint8_t enc, uint64_t dbase)
{
    if (enc == 0xff) {
        return 0; /* omitted */
    }
    uint64_t at = (uint64_t)(uintptr_t)r->p;
    uint64_t v;
    switch (enc & 0x0f) {
    case 0x00: v = fixed(r, 8); break;
    case 0x01: v = uleb(r); break;
    case 0x02: v = fixed(r, 2); break;
    case 0x03: v = fixed(r, 4); break;
    case 0x04: v = fixed(r, 8); break;
    case 0x09: v = (uint64_t)sleb(r); break;
    case 0x0a: v = (uint64_t)(int64_t)(int16_t)fixed(r, 2); break;
    case 0x0b: v = (uint64_t)(int64_t)(int32_t)fixed(r, 4); break;
    case 0x0c: v = fixed(r, 8); break;
    default: r->bad = 1; return 0;
    }
    switch (enc & 0x70) {
    case 0x00: break;
    case 0x10: v += at; break;
    case 0x30: v += dbase; break;
    default: r->bad = 1; return 0;
    }
    if (enc & 0x80) {
        r->bad = 1; /* indirect: never used for code addresses we need */
    }
    return v;
}

/* ---- the CFA program ---- */

struct state {
    int cfa_reg;
    int64_t cfa_off;
    int rbp_saved;
    int64_t rbp_off;
    int ra_undefined;
    int64_t ra_off;
};

struct cie {
    uint64_t code_align;
    int64_t data_align;
    uint8_t fde_enc;
    int signal_frame;
    int has_aug_data; /* 'z': FDEs carry an augmentation length */
    const uint8_t *insns, *insns_end;
};

/* DW_CFA_offset and its variants: `reg` was saved at CFA + off. */
static void saved_at(struct state *st, uint64_t reg, int64_t off)
{
    if (reg == REG_RBP) {
        st->rbp_saved = 1;
        st->rbp_off = off;
    } else if (reg == REG_RA) {
        st->ra_off = off;
    }
}

/* Run CFA instructions from `r` until the location passes `pc`. Returns 0,
 * or -1 for an instruction this walker does not model. `init` is the state
 * after the CIE's initial instructions (for DW_CFA_restore). */
static int run_cfa(struct reader *r, const struct cie *c, uint64_t loc, uint64_t pc, struct state *st,
                   const struct state *init)
{
    struct state saved[8];
    int nsaved = 0;
    while (r->p < r->end && !r->bad) {
        uint8_t op = *r->p++;
        uint64_t reg, delta = 0;
        int64_t off;
        switch (op >> 6) {
        case 1: delta = (uint64_t)(op & 0x3f) * c->code_align; break;
        case 2:
            reg = op & 0x3f;
            saved_at(st, reg, (int64_t)uleb(r) * c->data_align);
            continue;
        case 3:
            reg = op & 0x3f;
            if (reg == REG_RBP && init) {
                st->rbp_saved = init->rbp_saved;
                st->rbp_off = init->rbp_off;
            }
            continue;
        default: break;
        }
        if (op >> 6 == 0) {
            switch (op) {
            case 0x00: /* nop */ continue;
            case 0x01: /* set_loc */
                loc = encoded(r, c->fde_enc, 0);
                if (loc > pc) {
                    return 0;
                }
                continue;
            case 0x02: delta = fixed(r, 1) * c->code_align; break;
            case 0x03: delta = fixed(r, 2) * c->code_align; break;
            case 0x04: delta = fixed(r, 4) * c->code_align; break;
            case 0x05: /* offset_extended */
            case 0x11: /* offset_extended_sf */
                reg = uleb(r);
                off = op == 0x05 ? (int64_t)uleb(r) * c->data_align : sleb(r) * c->data_align;
                saved_at(st, reg, off);
                continue;
            case 0x06: /* restore_extended */
                reg = uleb(r);
                if (reg == REG_RBP && init) {
                    st->rbp_saved = init->rbp_saved;
                    st->rbp_off = init->rbp_off;
                }
                continue;
            case 0x07: /* undefined */
                reg = uleb(r);
                if (reg == REG_RA) {
                    st->ra_undefined = 1;
                }
                continue;
            case 0x08: /* same_value */
                reg = uleb(r);
                if (reg == REG_RBP) {
                    st->rbp_saved = 0;
                }
                continue;
            case 0x0a: /* remember_state */
                if (nsaved == 8) {
                    return -1;
                }
                saved[nsaved++] = *st;
                continue;
            case 0x0b: /* restore_state */
                if (nsaved == 0) {
                    return -1;
                }
                *st = saved[--nsaved];
                continue;
            case 0x0c: /* def_cfa */
                st->cfa_reg = (int)uleb(r);
                st->cfa_off = (int64_t)uleb(r);
                continue;
            case 0x0d: /* def_cfa_register */ st->cfa_reg = (int)uleb(r); continue;
            case 0x0e: /* def_cfa_offset */ st->cfa_off = (int64_t)uleb(r); continue;
            case 0x12: /* def_cfa_sf */
                st->cfa_reg = (int)uleb(r);
                st->cfa_off = sleb(r) * c->data_align;
                continue;
            case 0x13: /* def_cfa_offset_sf */ st->cfa_off = sleb(r) * c->data_align; continue;
            case 0x10: /* expression */
            case 0x16: /* val_expression */
                reg = uleb(r);
                r->p += uleb(r);
                if (reg == REG_RBP || reg == REG_RA) {
                    return -1;
                }
                continue;
            case 0x09: /* register: a copy in another register */
            case 0x14: /* val_offset */
            case 0x15: /* val_offset_sf */
                reg = uleb(r);
                uleb(r); /* the operand, signed or not: only skipped */
                if (reg == REG_RBP || reg == REG_RA) {
                    return -1; /* a rule this walker does not model */
                }
                continue;
            case 0x2e: /* GNU_args_size */ uleb(r); continue;
            default: /* def_cfa_expression and anything else */ return -1;
            }
        }
        loc += delta;
        if (loc > pc) {
            return 0;
        }
    }
    return r->bad ? -1 : 0;
}

static int parse_cie(const uint8_t *p, struct cie *c)
{
    struct reader r = {p, p + 12, 0};
    uint64_t len = fixed(&r, 4);
    if (len == 0 || len == 0xffffffffu) {
        return -1;
    }
    r.end = p + 4 + len;
    if (fixed(&r, 4) != 0) {
        return -1; /* not a CIE */
    }
    uint8_t version = (uint8_t)fixed(&r, 1);
    const char *aug = (const char *)r.p;
    size_t alen = strnlen(aug, (size_t)(r.end - r.p));
    r.p += alen + 1;
    if (strstr(aug, "eh")) {
        return -1;
    }
    c->code_align = uleb(&r);
    c->data_align = sleb(&r);
    if (version == 1) {
        fixed(&r, 1);
    } else {
        uleb(&r);
    }
    c->fde_enc = 0;
    c->signal_frame = 0;
    c->has_aug_data = aug[0] == 'z';
    if (aug[0] == 'z') {
        uint64_t n = uleb(&r);
        const uint8_t *data_end = r.p + n;
        for (const char *a = aug + 1; *a && !r.bad; a++) {
            if (*a == 'R') {
                c->fde_enc = (uint8_t)fixed(&r, 1);
            } else if (*a == 'P') {
                uint8_t enc = (uint8_t)fixed(&r, 1);
                encoded(&r, enc & 0x7f, 0);
            } else if (*a == 'L') {
                fixed(&r, 1);
            } else if (*a == 'S') {
                c->signal_frame = 1;
            } else {
                break;
            }
        }
        r.p = data_end;
    }
    c->insns = r.p;
    c->insns_end = r.end;
    return r.bad || r.p > r.end ? -1 : 0;
}

/* Find the FDE covering pc through the .eh_frame_hdr binary search table. */
static const uint8_t *find_fde(const uint8_t *hdr, uint64_t pc)
{
    if (hdr[0] != 1) {
        return NULL;
    }
    uint8_t ptr_enc = hdr[1], count_enc = hdr[2], table_enc = hdr[3];
    struct reader r = {hdr + 4, hdr + 4 + 16, 0};
    uint64_t dbase = (uint64_t)(uintptr_t)hdr;
    encoded(&r, ptr_enc, dbase);
    uint64_t count = encoded(&r, count_enc, dbase);
    if (r.bad || table_enc != 0x3b || count == 0) {
        return NULL; /* the table is always datarel sdata4 in practice */
    }
    const int32_t *table = (const int32_t *)r.p;
    uint64_t lo = 0, hi = count;
    while (hi - lo > 1) {
        uint64_t mid = (lo + hi) / 2;
        if (dbase + (uint64_t)(int64_t)table[2 * mid] <= pc) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    if (dbase + (uint64_t)(int64_t)table[2 * lo] > pc) {
        return NULL;
    }
    return (const uint8_t *)(uintptr_t)(dbase + (uint64_t)(int64_t)table[2 * lo + 1]);
}

/* Compute the rule for pc from the object's CFI. */
static int compute_rule(uint64_t pc, struct cfi_rule *out)
{
    struct dl_find_object dlfo;
    if (_dl_find_object((void *)(uintptr_t)pc, &dlfo) != 0 || !dlfo.dlfo_eh_frame) {
        return -1;
    }
    const uint8_t *fde = find_fde(dlfo.dlfo_eh_frame, pc);
    if (!fde) {
        return -1;
    }
    struct reader r = {fde, fde + 8, 0};
    uint64_t len = fixed(&r, 4);
    if (len == 0 || len == 0xffffffffu) {
        return -1;
    }
    r.end = fde + 4 + len;
    const uint8_t *cie_ptr_at = r.p;
    uint32_t cie_off = (uint32_t)fixed(&r, 4);
    struct cie c;
    if (cie_off == 0 || parse_cie(cie_ptr_at - cie_off, &c) < 0 || c.signal_frame) {
        return -1;
    }
    uint64_t start = encoded(&r, c.fde_enc, 0);
    uint64_t range = encoded(&r, c.fde_enc & 0x0f, 0);
    if (r.bad || pc < start || pc >= start + range) {
        return -1;
    }
    if (c.has_aug_data) {
        uint64_t alen = uleb(&r);
        r.p += alen;
    }

    struct state st = {REG_RSP, 8, 0, 0, 0, -8};
    struct reader ci = {c.insns, c.insns_end, 0};
    if (run_cfa(&ci, &c, start, UINT64_MAX, &st, NULL) < 0) {
        return -1;
    }
    struct state init = st;
    if (run_cfa(&r, &c, start, pc, &st, &init) < 0) {
        return -1;
    }
    if (st.cfa_reg != REG_RSP && st.cfa_reg != REG_RBP) {
        return -1;
    }
    if (st.cfa_off != (int32_t)st.cfa_off || st.rbp_off != (int16_t)st.rbp_off || st.ra_off != (int8_t)st.ra_off) {
        return -1; /* does not fit the packed rule */
    }
    out->flags = RULE_VALID;
    if (st.ra_undefined) {
        out->flags |= RULE_END;
    }
    if (st.rbp_saved) {
        out->flags |= RULE_RBP_SAVED;
    }
    if (st.cfa_reg == REG_RBP) {
        out->flags |= RULE_CFA_RBP;
    }
    out->cfa_off = (int32_t)st.cfa_off;
    out->rbp_off = (int16_t)st.rbp_off;
    out->ra_off = (int8_t)st.ra_off;
    return 0;
}

static const struct cfi_rule *rule_for(struct cfi_cache *cache, uint64_t pc)
{
    uint32_t i = (uint32_t)((pc * 0x9E3779B97F4A7C15ull) >> (64 - CFI_CACHE_BITS));
    struct cfi_rule *e = &cache->rules[i];
    if (e->pc == pc) {
        return e;
    }
    struct cfi_rule fresh = {0};
    if (compute_rule(pc, &fresh) < 0) {
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
