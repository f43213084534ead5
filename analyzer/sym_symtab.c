// SPDX-License-Identifier: MIT
/* A module's ELF symbols sorted by address, for the symbolizer: built once
 * per module from libdwfl's symbol table, then each lookup is a binary
 * search and a look at the few symbols that contain the address, instead
 * of libdwfl's walk of the whole table per address. It must answer exactly
 * as dwfl_module_addrinfo() does, so that every output keeps its names:
 * the rules below (which symbol wins among aliases, nested and sizeless
 * ones) are libdwfl's, derived case by case in the comments. */
#include "symbolize_internal.h"

#include <stdlib.h>
#include <string.h>

#include <gelf.h>

#include "util.h"

struct symtab_entry {
    uint64_t value; /* the symbol's address in the process */
    uint64_t size;
    const char *name; /* libelf's string data: lives as long as the module */
    /* Where libdwfl's search meets it: the global symbols in table order first, then the local
     * ones (searched only when no global fits), also in table order. */
    uint32_t order;
    uint8_t binding; /* libdwfl's preference: global 3, weak 2, local 1, anything else 0 */
    bool local;
    bool special_section; /* SHN_ABS, SHN_COMMON...: a sizeless one only matches exactly */
};

/* An allocated section, as libdwfl keeps them to tell which section an address is in. */
struct symtab_section {
    uint64_t start;
    uint64_t end;
    uint32_t ndx;
};

struct sym_symtab {
    struct symtab_entry *v; /* sorted by value, then order */
    size_t nr;
    /* stab_end[i]: the largest end (value + size, saturated) of v[0..i], to stop the walk back
     * for symbols containing an address; label_end[i]: the largest value + size as libdwfl
     * computes it (wrapping), which hides sizeless symbols below it. */
    uint64_t *stab_end;
    uint64_t *label_end;
    struct symtab_section *sections; /* sorted by start, then section order */
    size_t nr_sections;
    struct symtab_entry **scratch; /* the symbols containing the address of one lookup */
    size_t scratch_alloc;
};

static int binding_value(unsigned char info)
{
    switch (GELF_ST_BIND(info)) {
    case STB_GLOBAL: return 3;
    case STB_WEAK: return 2;
    case STB_LOCAL: return 1;
    default: return 0;
    }
}

static int entry_cmp(const void *a, const void *b)
{
    const struct symtab_entry *x = a;
    const struct symtab_entry *y = b;
    if (x->value != y->value) {
        return x->value < y->value ? -1 : 1;
    }
    return x->order < y->order ? -1 : x->order > y->order;
}

static int section_cmp(const void *a, const void *b)
{
    const struct symtab_section *x = a;
    const struct symtab_section *y = b;
    if (x->start != y->start) {
        return x->start < y->start ? -1 : 1;
    }
    /* libdwfl sorts with a stable qsort from section order. */
    return x->ndx < y->ndx ? -1 : x->ndx > y->ndx;
}

/* The allocated sections of the module's main file, at their addresses in the process. */
static void read_sections(struct sym_symtab *t, Dwfl_Module *mod)
{
    GElf_Addr bias = 0;
    Elf *elf = dwfl_module_getelf(mod, &bias);
    size_t count = 0;
    size_t shstrndx = 0;
    /* Where libdwfl cannot read the section headers or their names, it knows no section at
     * all: every address is then in "none", SHN_UNDEF. */
    if (!elf || elf_getshdrnum(elf, &count) != 0 || count == 0 || elf_getshdrstrndx(elf, &shstrndx) != 0) {
        return;
    }
    t->sections = xmalloc(count * sizeof(*t->sections));
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL && t->nr_sections < count) {
        GElf_Shdr shdr_mem;
        GElf_Shdr *shdr = gelf_getshdr(scn, &shdr_mem);
        if (!shdr) {
            t->nr_sections = 0;
            return;
        }
        if (shdr->sh_flags & SHF_ALLOC) {
            if (!elf_strptr(elf, shstrndx, shdr->sh_name)) {
                t->nr_sections = 0;
                return;
            }
            struct symtab_section *s = &t->sections[t->nr_sections++];
            s->start = shdr->sh_addr + bias;
            s->end = s->start + shdr->sh_size;
            s->ndx = (uint32_t)elf_ndxscn(scn);
        }
    }
    if (t->nr_sections > 1) {
        qsort(t->sections, t->nr_sections, sizeof(*t->sections), section_cmp);
    }
}

/* The index of the section holding addr, SHN_UNDEF for none: libdwfl's search step by step,
 * with its rule that a section's end belongs to it unless the next one starts there. With
 * overlapping sections the answer depends on the path of the search, so the path is the same. */
static uint32_t section_of(const struct sym_symtab *t, uint64_t addr)
{
    size_t lo = 0;
    size_t hi = t->nr_sections;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const struct symtab_section *s = &t->sections[mid];
        if (addr < s->start) {
            hi = mid;
        } else if (addr > s->end) {
            lo = mid + 1;
        } else {
            if (addr == s->end && mid + 1 < t->nr_sections && addr == t->sections[mid + 1].start) {
                mid++;
            }
            return t->sections[mid].ndx;
        }
    }
    return SHN_UNDEF;
}

static void add_symbol(struct sym_symtab *t, size_t *alloc, Dwfl_Module *mod, int i, bool local, uint32_t order)
{
    GElf_Sym sym;
    GElf_Addr value = 0;
    GElf_Word shndx = SHN_UNDEF;
    const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, &shndx, NULL, NULL);
    /* The symbols libdwfl's search considers at all. */
    if (!name || name[0] == '\0' || sym.st_shndx == SHN_UNDEF || GELF_ST_TYPE(sym.st_info) == STT_SECTION ||
        GELF_ST_TYPE(sym.st_info) == STT_FILE || GELF_ST_TYPE(sym.st_info) == STT_TLS) {
        return;
    }
    if (t->nr == *alloc) {
        *alloc = *alloc ? *alloc * 2 : 256;
        t->v = xrealloc(t->v, *alloc * sizeof(*t->v));
    }
    t->v[t->nr++] = (struct symtab_entry){
        .value = value,
        .size = sym.st_size,
        .name = name,
        .order = order,
        .binding = (uint8_t)binding_value(sym.st_info),
        .local = local,
        .special_section = shndx >= SHN_LORESERVE,
    };
}

struct sym_symtab *sym_symtab_build(Dwfl_Module *mod)
{
    GElf_Addr bias = 0;
    Elf *elf = dwfl_module_getelf(mod, &bias);
    GElf_Ehdr ehdr_mem;
    GElf_Ehdr *ehdr = elf ? gelf_getehdr(elf, &ehdr_mem) : NULL;
    /* On ppc64 (ELFv1) a function symbol names a descriptor, which libdwfl resolves and tries
     * at both addresses; such modules keep libdwfl's own search. */
    if (!ehdr || ehdr->e_machine == EM_PPC64) {
        return NULL;
    }
    struct sym_symtab *t = xcalloc(1, sizeof(*t));
    int count = dwfl_module_getsymtab(mod);
    int first_global = count > 0 ? dwfl_module_getsymtab_first_global(mod) : -1;
    if (count <= 0 || first_global < 0) {
        /* No table: libdwfl names nothing, nor does an empty index. */
        return t;
    }
    size_t alloc = 0;
    /* Entry 0 is the null symbol, never searched. The global pass covers [first_global, count),
     * the local pass [1, first_global). */
    int global_start = first_global == 0 ? 1 : first_global;
    uint32_t order = 0;
    for (int i = global_start; i < count; i++) {
        add_symbol(t, &alloc, mod, i, false, order++);
    }
    for (int i = 1; i < first_global; i++) {
        add_symbol(t, &alloc, mod, i, true, order++);
    }
    if (t->nr > 0) {
        qsort(t->v, t->nr, sizeof(*t->v), entry_cmp);
        t->stab_end = xmalloc(t->nr * sizeof(*t->stab_end));
        t->label_end = xmalloc(t->nr * sizeof(*t->label_end));
        uint64_t stab = 0;
        uint64_t label = 0;
        for (size_t i = 0; i < t->nr; i++) {
            const struct symtab_entry *e = &t->v[i];
            uint64_t end = e->value + e->size;
            uint64_t saturated = end < e->value ? UINT64_MAX : end;
            stab = saturated > stab ? saturated : stab;
            label = end > label ? end : label;
            t->stab_end[i] = stab;
            t->label_end[i] = label;
        }
    }
    read_sections(t, mod);
    return t;
}

void sym_symtab_free(struct sym_symtab *t)
{
    if (!t) {
        return;
    }
    free(t->v);
    free(t->stab_end);
    free(t->label_end);
    free(t->sections);
    free(t->scratch);
    free(t);
}

/* Number of entries with value <= addr. */
static size_t count_at_or_below(const struct sym_symtab *t, uint64_t addr)
{
    size_t lo = 0;
    size_t hi = t->nr;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->v[mid].value <= addr) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static int order_cmp(const void *a, const void *b)
{
    const struct symtab_entry *x = *(const struct symtab_entry *const *)a;
    const struct symtab_entry *y = *(const struct symtab_entry *const *)b;
    return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * libdwfl's choice among the sized symbols that contain the address, met in table order: a
 * symbol replaces the one kept when it starts later (closer) or binds more strongly; at the same
 * start, when it is smaller and binds at least as strongly. Otherwise the first one met stays.
 */
static const struct symtab_entry *closest(struct symtab_entry *const *c, size_t n)
{
    const struct symtab_entry *best = NULL;
    for (size_t i = 0; i < n; i++) {
        const struct symtab_entry *e = c[i];
        if (!best || best->value < e->value || best->binding < e->binding) {
            best = e;
        } else if (best->value == e->value && ((best->size > e->size && best->binding <= e->binding) ||
                                               (best->size >= e->size && best->binding < e->binding))) {
            best = e;
        }
    }
    return best;
}

/*
 * What libdwfl's search gives, without its walk:
 * 1. A global sized symbol containing addr wins (the local ones are then not searched).
 * 2. Else a global sizeless symbol exactly at addr wins: libdwfl skips the locals then, and the
 *    last such in table order is the one it keeps.
 * 3. Else a local sized symbol containing addr.
 * 4. Else a sizeless symbol (an assembly label) at M, the largest end (value + size) of all
 *    symbols at or below addr, so that no sized symbol reaches past it, and in addr's section
 *    (a special-section one only at addr itself): libdwfl keeps the last one it meets there.
 *    Any sizeless symbol below M is hidden by one that reaches M; there is none above it.
 */
const char *sym_symtab_lookup(struct sym_symtab *t, uint64_t addr)
{
    size_t k = count_at_or_below(t, addr);
    if (k == 0) {
        return NULL;
    }
    /* The sized symbols containing addr: walk back while an earlier one may still reach it. */
    size_t n = 0;
    for (size_t i = k; i-- > 0 && t->stab_end[i] > addr;) {
        struct symtab_entry *e = &t->v[i];
        if (e->size != 0 && addr - e->value < e->size) {
            if (n == t->scratch_alloc) {
                t->scratch_alloc = t->scratch_alloc ? t->scratch_alloc * 2 : 16;
                t->scratch = xrealloc(t->scratch, t->scratch_alloc * sizeof(*t->scratch));
            }
            t->scratch[n++] = e;
        }
    }
    if (n > 1) { /* qsort() may not be given the NULL of an empty scratch */
        qsort(t->scratch, n, sizeof(*t->scratch), order_cmp);
    }
    size_t globals = 0;
    while (globals < n && !t->scratch[globals]->local) {
        globals++;
    }
    if (globals > 0) {
        return closest(t->scratch, globals)->name;
    }
    const struct symtab_entry *exact = NULL;
    for (size_t i = k; i-- > 0 && t->v[i].value == addr;) {
        const struct symtab_entry *e = &t->v[i];
        if (!e->local && e->size == 0 && (!exact || e->order > exact->order)) {
            exact = e;
        }
    }
    if (exact) {
        return exact->name;
    }
    if (n > 0) {
        return closest(t->scratch, n)->name;
    }
    uint64_t label = t->label_end[k - 1];
    size_t first = count_at_or_below(t, label - 1);
    if (label == 0) {
        first = 0;
    }
    uint32_t addr_section = section_of(t, addr);
    const struct symtab_entry *found = NULL;
    for (size_t i = first; i < k && t->v[i].value == label; i++) {
        const struct symtab_entry *e = &t->v[i];
        if (e->size != 0) {
            continue;
        }
        bool same = e->special_section ? e->value == addr : section_of(t, e->value) == addr_section;
        if (same && (!found || e->order > found->order)) {
            found = e;
        }
    }
    return found ? found->name : NULL;
}
