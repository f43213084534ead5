// SPDX-License-Identifier: MIT
/* Reading .eh_frame for the fast stack walker (cfi.c): the DWARF encodings,
 * the CIE, the FDE found through the .eh_frame_hdr search table, and the CFA
 * program run up to a pc, reduced to the three rules that matter here
 * (where the CFA is, where the return address and the caller's rbp were
 * saved). Anything unusual (expressions, signal frames, registers saved in
 * registers) is refused. Runs inside the target: never allocates, takes no
 * lock. */
#define _GNU_SOURCE
#include "ehframe.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16

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
int ehframe_rule(uint64_t pc, struct cfi_rule *out)
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
