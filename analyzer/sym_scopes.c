// SPDX-License-Identifier: MIT
/* Which DWARF scopes contain an address, for the symbolizer: the CU (through
 * libdwfl, else an own index of every CU's ranges), the concrete function
 * (an index per CU, built on its first lookup) and the inlined subroutines
 * and blocks inside it. Recursion is bounded for corrupt or hostile DWARF. */
#include "symbolize_internal.h"

#include <stdlib.h>
#include <string.h>

#include <dwarf.h>

#include "util.h"

/* Bounds the recursion on corrupt or hostile DWARF; real nesting is far shallower. */
#define MAX_SCOPE_DEPTH 256

static void range_table_add(struct range_table *t, Dwarf_Addr lo, Dwarf_Addr hi, const Dwarf_Die *die)
{
    if (t->nr == t->alloc) {
        size_t alloc = t->alloc ? t->alloc * 2 : 16;
        t->v = xrealloc(t->v, alloc * sizeof(*t->v));
        t->alloc = alloc;
    }
    struct addr_range *r = &t->v[t->nr++];
    r->lo = lo;
    r->hi = hi;
    r->max_hi = hi;
    r->die = *die;
}

/* Add every address range of `die`; ranges the linker discarded (left at 0 or at a tombstone
 * past hi) are dropped. */
static void range_table_add_die(struct range_table *t, Dwarf_Die *die)
{
    Dwarf_Addr base = 0;
    Dwarf_Addr lo = 0;
    Dwarf_Addr hi = 0;
    ptrdiff_t off = 0;
    while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
        if (lo == 0 || hi <= lo) {
            continue;
        }
        range_table_add(t, lo, hi, die);
    }
}

static int addr_range_cmp(const void *a, const void *b)
{
    const struct addr_range *x = a;
    const struct addr_range *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void range_table_sort(struct range_table *t)
{
    if (t->nr == 0) {
        return;
    }
    qsort(t->v, t->nr, sizeof(*t->v), addr_range_cmp);
    Dwarf_Addr max_hi = 0;
    for (size_t i = 0; i < t->nr; i++) {
        if (t->v[i].hi > max_hi) {
            max_hi = t->v[i].hi;
        }
        t->v[i].max_hi = max_hi;
    }
}

/* The DIE of a range containing addr, or NULL. */
static Dwarf_Die *range_table_find(const struct range_table *t, Dwarf_Addr addr)
{
    /* Last range starting at or below addr, then back while an earlier one may still reach. */
    size_t lo = 0;
    size_t hi = t->nr;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->v[mid].lo <= addr) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    for (size_t i = lo; i-- > 0 && t->v[i].max_hi > addr;) {
        if (addr < t->v[i].hi) {
            return &t->v[i].die;
        }
    }
    return NULL;
}

/*
 * libdwfl finds a CU through .debug_aranges, which clang does not emit and which, when some
 * objects (crt files, assembly) have it, hides every CU that lacks it. So the first time it
 * fails in a module, collect the ranges of all its CUs into a sorted table.
 */
static void build_cu_index(struct module *m, Dwarf *dw)
{
    m->cu_index_built = true;
    Dwarf_CU *cu = NULL;
    Dwarf_Half version = 0;
    uint8_t unit_type = 0;
    Dwarf_Die cudie;
    while (dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, NULL) == 0) {
        if (unit_type == DW_UT_type || unit_type == DW_UT_split_type) {
            continue;
        }
        range_table_add_die(&m->cus, &cudie);
    }
    range_table_sort(&m->cus);
}

int sym_find_cu(struct module *m, uint64_t ip, Dwarf_Die *cu, Dwarf_Addr *dwbias)
{
    Dwarf_Die *found = dwfl_module_addrdie(m->dwmod, ip, dwbias);
    /* libdwfl answers with the CU of the nearest arange *below* ip without checking where that
     * arange ends, so code without DWARF (crt files) would take the previous CU's lines. */
    if (found && (dwarf_haspc(found, ip - *dwbias) == 1 ||
                  (!dwarf_hasattr(found, DW_AT_low_pc) && !dwarf_hasattr(found, DW_AT_ranges)))) {
        *cu = *found;
        return 1;
    }
    Dwarf *dw = dwfl_module_getdwarf(m->dwmod, dwbias);
    if (!dw) {
        return 0;
    }
    if (!m->cu_index_built) {
        build_cu_index(m, dw);
    }
    found = range_table_find(&m->cus, ip - *dwbias);
    if (!found) {
        return 0;
    }
    *cu = *found;
    return 1;
}

/*
 * Collect the address ranges of the concrete functions of a CU. Most sit at CU level or inside
 * namespaces, but member functions of local classes (GCC puts a lambda's _FUN under the closure
 * type under the enclosing function) and GNU C nested functions sit inside functions and blocks.
 * Other DIEs (types, variables, inlined code) are not descended into: the scopes inside a
 * function are searched per lookup in sym_find_scopes.
 */
static void collect_functions(Dwarf_Die *parent, struct range_table *t, int depth)
{
    Dwarf_Die child;
    if (depth > MAX_SCOPE_DEPTH || dwarf_child(parent, &child) != 0) {
        return;
    }
    for (;;) {
        switch (dwarf_tag(&child)) {
        case DW_TAG_subprogram:
            range_table_add_die(t, &child);
            collect_functions(&child, t, depth + 1);
            break;
        case DW_TAG_namespace:
        case DW_TAG_module:
        case DW_TAG_class_type:
        case DW_TAG_structure_type:
        case DW_TAG_union_type:
        case DW_TAG_lexical_block: collect_functions(&child, t, depth + 1); break;
        default: break;
        }
        Dwarf_Die next;
        if (dwarf_siblingof(&child, &next) != 0) {
            return;
        }
        child = next;
    }
}

/*
 * Each CU is indexed once, on its first lookup, so a lookup costs two binary searches instead
 * of a walk of the whole CU (C++ CUs have 100k+ DIEs from headers).
 */
Dwarf_Die *sym_find_function(struct module *m, Dwarf_Die *root, Dwarf_Addr addr)
{
    uintptr_t key = (uintptr_t)root->addr;
    size_t lo = 0;
    size_t hi = m->nr_cu_funcs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->cu_funcs[mid].key < key) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == m->nr_cu_funcs || m->cu_funcs[lo].key != key) {
        if (m->nr_cu_funcs == m->alloc_cu_funcs) {
            size_t alloc = m->alloc_cu_funcs ? m->alloc_cu_funcs * 2 : 8;
            m->cu_funcs = xrealloc(m->cu_funcs, alloc * sizeof(*m->cu_funcs));
            m->alloc_cu_funcs = alloc;
        }
        struct range_table t = {0};
        collect_functions(root, &t, 0);
        range_table_sort(&t);
        memmove(&m->cu_funcs[lo + 1], &m->cu_funcs[lo], (m->nr_cu_funcs - lo) * sizeof(*m->cu_funcs));
        m->cu_funcs[lo].key = key;
        m->cu_funcs[lo].funcs = t;
        m->nr_cu_funcs++;
    }
    return range_table_find(&m->cu_funcs[lo].funcs, addr);
}

void sym_die_vec_push(struct die_vec *dv, const Dwarf_Die *die)
{
    if (dv->nr == dv->alloc) {
        size_t alloc = dv->alloc ? dv->alloc * 2 : 32;
        dv->v = xrealloc(dv->v, alloc * sizeof(*dv->v));
        dv->alloc = alloc;
    }
    dv->v[dv->nr++] = *die;
}

/*
 * This walks the concrete DIE tree itself instead of using dwarf_getscopes(), which past an
 * inlined subroutine continues in the *abstract* definition's scopes and gives up when that
 * definition is in another CU, as with GCC's LTO (DW_AT_abstract_origin into early debug).
 * A scope that contains addr is final: sibling code ranges do not overlap.
 */
static void find_scopes(Dwarf_Die *parent, Dwarf_Addr addr, struct die_vec *path, int depth)
{
    Dwarf_Die child;
    if (depth > MAX_SCOPE_DEPTH || dwarf_child(parent, &child) != 0) {
        return;
    }
    for (;;) {
        switch (dwarf_tag(&child)) {
        case DW_TAG_subprogram: /* GNU C nested function */
        case DW_TAG_inlined_subroutine:
        case DW_TAG_lexical_block:
        case DW_TAG_try_block:
        case DW_TAG_catch_block:
        case DW_TAG_with_stmt:
        case DW_TAG_entry_point:
            if (dwarf_haspc(&child, addr) == 1) {
                sym_die_vec_push(path, &child);
                find_scopes(&child, addr, path, depth + 1);
                return;
            }
            break;
        default: break;
        }
        Dwarf_Die next;
        if (dwarf_siblingof(&child, &next) != 0) {
            return;
        }
        child = next;
    }
}

void sym_find_scopes(Dwarf_Die *fn, Dwarf_Addr addr, struct die_vec *path)
{
    find_scopes(fn, addr, path, 0);
}

void sym_release_indexes(struct module *m)
{
    free(m->cus.v);
    for (size_t k = 0; k < m->nr_cu_funcs; k++) {
        free(m->cu_funcs[k].funcs.v);
    }
    free(m->cu_funcs);
}
