// SPDX-License-Identifier: MIT
// Symbolizer: resolves (module, ip) to inline chains, names and file:line with elfutils
// libdwfl/libdw, caching every result. Runs in the offline analyzer only; it never prints and
// must not crash on stripped, missing, foreign or garbage input.
#include "symbolize.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

/* The C entry point of the C++ runtime's demangler (libstdc++ / libc++abi). */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

#define MAX_BUILD_ID 64
#define DEFAULT_DEBUG_DIR "/usr/lib/debug"

/* ---- data ---- */

enum module_state {
    MODULE_UNOPENED,
    MODULE_OPEN,
    MODULE_OFFSET_ONLY,
};

/* Address ranges -> DIE, sorted by lo, for the CU and function indexes. */
struct addr_range {
    Dwarf_Addr lo;
    Dwarf_Addr hi;
    Dwarf_Addr max_hi; /* largest hi of this and all earlier entries, for overlapping ranges */
    Dwarf_Die die;
};

struct range_table {
    struct addr_range *v;
    size_t nr;
    size_t alloc;
};

/* The functions of one CU (keyed by the address of its root DIE's data, unique per file). */
struct cu_functions {
    uintptr_t key;
    struct range_table funcs;
};

struct module {
    char *path;
    uint64_t bias;
    uint8_t *build_id;
    size_t build_id_len;
    enum module_state state;
    Dwfl_Module *dwmod;
    uint64_t start; /* address range the ELF headers give at this bias */
    uint64_t end;
    /* Own CU index, built on the first miss of dwfl_module_addrdie() (see find_cu). */
    bool cu_index_built;
    struct range_table cus;
    /* Function indexes of the CUs looked into so far, sorted by key (see find_function). */
    struct cu_functions *cu_funcs;
    size_t nr_cu_funcs;
    size_t alloc_cu_funcs;
};

/* One cached lookup result: frames[first .. first + count) of the frame pool. */
struct cache_slot {
    uint64_t ip;
    uint32_t module1; /* module index + 1; 0 = empty slot, so calloc gives an empty table */
    uint32_t first;
    uint32_t count;
};

struct die_vec {
    Dwarf_Die *v;
    size_t nr;
    size_t alloc;
};

struct name_slot {
    const void *decl; /* Dwarf_Die.addr of the declaration; NULL = empty slot */
    const char *name; /* interned */
};

struct frame_vec {
    struct sym_frame *v;
    size_t nr;
    size_t alloc;
};

struct symbolizer {
    Dwfl *dwfl;
    /* libdwfl keeps a pointer to the callbacks and reads debuginfo_path through it on every
       debug-file search, so both live here for the whole session. */
    Dwfl_Callbacks callbacks;
    char *debuginfo_path;
    uint64_t nr_reports; /* for unique Dwfl module names */

    struct module *modules;
    size_t nr_modules;
    size_t alloc_modules;

    struct cache_slot *slots; /* open addressing, linear probing, power-of-two size */
    size_t slot_mask;
    size_t slots_used;

    struct frame_vec pool; /* frames of all cached results */
    struct frame_vec scratch; /* frames of the lookup being resolved */
    struct die_vec path; /* DWARF scopes containing the ip being resolved, outermost first */

    struct name_slot *names; /* qualified names by declaration DIE (open addressing) */
    size_t name_mask;
    size_t names_used;

    char **strings; /* interned strings (open addressing); NULL = empty */
    size_t string_mask;
    size_t strings_used;

    struct symbolize_stats stats;
};

/* ---- hashing, string interning, frame vectors ---- */

static uint64_t mix64(uint64_t x)
{
    /* A 64-bit finalizer: ips are aligned and clustered, so spread every input bit. */
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ULL;
    x ^= x >> 27;
    x *= 0x81dadef4bc2dd44dULL;
    x ^= x >> 33;
    return x;
}

static uint64_t hash_string(const char *str)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)str; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL;
    }
    return h;
}

static int grow_strings(struct symbolizer *s)
{
    size_t old_size = s->strings ? s->string_mask + 1 : 0;
    size_t new_size = old_size ? old_size * 2 : 256;
    char **table = calloc(new_size, sizeof(*table));
    if (!table) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < old_size; i++) {
        char *str = s->strings[i];
        if (!str) {
            continue;
        }
        size_t j = hash_string(str) & (new_size - 1);
        while (table[j]) {
            j = (j + 1) & (new_size - 1);
        }
        table[j] = str;
    }
    free(s->strings);
    s->strings = table;
    s->string_mask = new_size - 1;
    return 0;
}

/* Store one copy of `str` for the symbolizer's lifetime; *out = NULL for a NULL `str`. */
static int intern(struct symbolizer *s, const char *str, const char **out)
{
    *out = NULL;
    if (!str) {
        return 0;
    }
    if (!s->strings || (s->strings_used + 1) * 2 > s->string_mask + 1) {
        int rc = grow_strings(s);
        if (rc < 0) {
            return rc;
        }
    }
    size_t i = hash_string(str) & s->string_mask;
    while (s->strings[i]) {
        if (strcmp(s->strings[i], str) == 0) {
            *out = s->strings[i];
            return 0;
        }
        i = (i + 1) & s->string_mask;
    }
    char *copy = strdup(str);
    if (!copy) {
        return -ENOMEM;
    }
    s->strings[i] = copy;
    s->strings_used++;
    *out = copy;
    return 0;
}

static int frame_vec_push(struct frame_vec *fv, const struct sym_frame *f)
{
    if (fv->nr == fv->alloc) {
        size_t alloc = fv->alloc ? fv->alloc * 2 : 64;
        struct sym_frame *v = realloc(fv->v, alloc * sizeof(*v));
        if (!v) {
            return -ENOMEM;
        }
        fv->v = v;
        fv->alloc = alloc;
    }
    fv->v[fv->nr++] = *f;
    return 0;
}

/* ---- result cache ---- */

static size_t slot_index(const struct symbolizer *s, uint32_t module1, uint64_t ip)
{
    return mix64(ip ^ ((uint64_t)module1 << 48) ^ module1) & s->slot_mask;
}

static const struct cache_slot *cache_find(const struct symbolizer *s, int module, uint64_t ip)
{
    if (!s->slots) {
        return NULL;
    }
    uint32_t module1 = (uint32_t)module + 1;
    size_t i = slot_index(s, module1, ip);
    while (s->slots[i].module1 != 0) {
        if (s->slots[i].module1 == module1 && s->slots[i].ip == ip) {
            return &s->slots[i];
        }
        i = (i + 1) & s->slot_mask;
    }
    return NULL;
}

static int grow_cache(struct symbolizer *s)
{
    size_t old_size = s->slots ? s->slot_mask + 1 : 0;
    size_t new_size = old_size ? old_size * 2 : 1024;
    struct cache_slot *slots = calloc(new_size, sizeof(*slots));
    if (!slots) {
        return -ENOMEM;
    }
    struct cache_slot *old = s->slots;
    s->slots = slots;
    s->slot_mask = new_size - 1;
    for (size_t i = 0; i < old_size; i++) {
        if (old[i].module1 == 0) {
            continue;
        }
        size_t j = slot_index(s, old[i].module1, old[i].ip);
        while (slots[j].module1 != 0) {
            j = (j + 1) & s->slot_mask;
        }
        slots[j] = old[i];
    }
    free(old);
    return 0;
}

/* Move the scratch frames into the pool and remember them under (module, ip). */
static int cache_insert(struct symbolizer *s, int module, uint64_t ip, const struct cache_slot **out)
{
    if (s->pool.nr + s->scratch.nr > UINT32_MAX) {
        return -EOVERFLOW;
    }
    /* Keep the load factor at or below 1/2 so probe chains stay short. */
    if (!s->slots || (s->slots_used + 1) * 2 > s->slot_mask + 1) {
        int rc = grow_cache(s);
        if (rc < 0) {
            return rc;
        }
    }
    size_t first = s->pool.nr;
    for (size_t k = 0; k < s->scratch.nr; k++) {
        int rc = frame_vec_push(&s->pool, &s->scratch.v[k]);
        if (rc < 0) {
            s->pool.nr = first;
            return rc;
        }
    }
    uint32_t module1 = (uint32_t)module + 1;
    size_t i = slot_index(s, module1, ip);
    while (s->slots[i].module1 != 0) {
        i = (i + 1) & s->slot_mask;
    }
    s->slots[i].module1 = module1;
    s->slots[i].ip = ip;
    s->slots[i].first = (uint32_t)first;
    s->slots[i].count = (uint32_t)s->scratch.nr;
    s->slots_used++;
    *out = &s->slots[i];
    return 0;
}

/* ---- opening modules ---- */

static bool is_pseudo_path(const char *path)
{
    /* Kernel-provided mappings have no file behind them. */
    return path[0] == '\0' || path[0] == '[' || strncmp(path, "linux-vdso", 10) == 0 ||
           strncmp(path, "linux-gate", 10) == 0;
}

/* Report one ELF file to the shared Dwfl at the module's bias. */
static Dwfl_Module *report_file(struct symbolizer *s, const char *file, uint64_t bias)
{
    /* libdwfl merges reports that share a name and address range, and on a file mismatch marks
       the existing module for removal; modules of one recording may overlap (dlclose, then
       dlopen of another library at the same address), so every report gets a unique name. */
    char name[32];
    snprintf(name, sizeof(name), "memrec-%llu", (unsigned long long)s->nr_reports++);

    dwfl_report_begin_add(s->dwfl);
    /* add_p_vaddr = true: `bias` is dlpi_addr, the difference between run-time and link-time
       addresses, not the address of the first segment (they differ when p_vaddr != 0). */
    Dwfl_Module *mod = dwfl_report_elf(s->dwfl, name, file, -1, (GElf_Addr)bias, true);
    if (dwfl_report_end(s->dwfl, NULL, NULL) != 0) {
        return NULL;
    }
    if (!mod) {
        return NULL;
    }
    GElf_Addr elf_bias = 0;
    Elf *elf = dwfl_module_getelf(mod, &elf_bias);
    GElf_Ehdr ehdr_mem;
    GElf_Ehdr *ehdr = elf ? gelf_getehdr(elf, &ehdr_mem) : NULL;
    /* Only loadable objects have the addresses a stack holds; a relocatable object or a core
       file at this path would be laid out by libdwfl and give wrong answers. */
    if (!ehdr || (ehdr->e_type != ET_EXEC && ehdr->e_type != ET_DYN)) {
        return NULL;
    }
    return mod;
}

/* 1 if the file's build-id contradicts the recorded one, 0 if it matches or cannot be told. */
static int build_id_mismatch(const struct module *m, Dwfl_Module *mod)
{
    if (m->build_id_len == 0) {
        return 0;
    }
    const unsigned char *bits = NULL;
    GElf_Addr vaddr = 0;
    int len = dwfl_module_build_id(mod, &bits, &vaddr);
    if (len <= 0 || !bits) {
        return 0;
    }
    return (size_t)len != m->build_id_len || memcmp(bits, m->build_id, m->build_id_len) != 0;
}

/* Try DIR/.build-id/xx/rest.debug for every absolute DIR of the debuginfo path. */
static Dwfl_Module *report_by_build_id(struct symbolizer *s, const struct module *m)
{
    if (m->build_id_len < 2) {
        return NULL;
    }
    char hex[2 * MAX_BUILD_ID + 1];
    for (size_t i = 0; i < m->build_id_len; i++) {
        snprintf(hex + 2 * i, 3, "%02x", m->build_id[i]);
    }
    const char *list = s->debuginfo_path ? s->debuginfo_path : DEFAULT_DEBUG_DIR;
    /* libdwfl's syntax allows a leading '+' or '-' (CRC checking) before the list. */
    if (*list == '+' || *list == '-') {
        list++;
    }
    while (*list) {
        const char *colon = strchr(list, ':');
        size_t dir_len = colon ? (size_t)(colon - list) : strlen(list);
        if (dir_len > 0 && list[0] == '/' && dir_len < 4096) {
            size_t size = dir_len + sizeof("/.build-id/") + sizeof(hex) + sizeof(".debug");
            char *file = malloc(size);
            if (!file) {
                return NULL;
            }
            snprintf(file, size, "%.*s/.build-id/%.2s/%s.debug", (int)dir_len, list, hex, hex + 2);
            Dwfl_Module *mod = report_file(s, file, m->bias);
            free(file);
            if (mod && !build_id_mismatch(m, mod)) {
                return mod;
            }
        }
        if (!colon) {
            break;
        }
        list = colon + 1;
    }
    return NULL;
}

static void open_module(struct symbolizer *s, int index)
{
    struct module *m = &s->modules[index];
    Dwfl_Module *mod = NULL;

    if (!is_pseudo_path(m->path)) {
        mod = report_file(s, m->path, m->bias);
        if (mod && build_id_mismatch(m, mod)) {
            /* The file was replaced after recording: its symbols would be wrong. The module
               object stays inside the Dwfl, unused, because libdwfl cannot drop one module. */
            mod = NULL;
        }
        if (!mod) {
            mod = report_by_build_id(s, m);
        }
    }
    if (!mod) {
        m->state = MODULE_OFFSET_ONLY;
        s->stats.modules_failed++;
        return;
    }
    Dwarf_Addr start = 0;
    Dwarf_Addr end = 0;
    dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL, NULL);
    m->dwmod = mod;
    m->start = start;
    m->end = end;
    m->state = MODULE_OPEN;
    s->stats.modules_opened++;
}

/* ---- names and source locations ---- */

/* Malloc'd demangled form of an Itanium-mangled name, or NULL if `name` is not one. */
static char *demangle(const char *name)
{
    if (!name || strncmp(name, "_Z", 2) != 0) {
        return NULL;
    }
    int status = -1;
    char *out = __cxa_demangle(name, NULL, NULL, &status);
    if (status != 0) {
        free(out);
        return NULL;
    }
    return out;
}

/* Intern the demangled form of `mangled`; *out stays NULL if it does not demangle. */
static int intern_demangled(struct symbolizer *s, const char *mangled, const char **out)
{
    *out = NULL;
    char *plain = demangle(mangled);
    if (!plain) {
        return 0;
    }
    int rc = intern(s, plain, out);
    free(plain);
    return rc;
}

static const char *die_string(Dwarf_Die *die, unsigned attr_name)
{
    Dwarf_Attribute attr;
    /* _integrate follows DW_AT_abstract_origin (inlined and out-of-line instances) and
       DW_AT_specification (member functions defined outside their class). */
    return dwarf_formstring(dwarf_attr_integrate(die, attr_name, &attr));
}

static const char *die_linkage_name(Dwarf_Die *die)
{
    const char *name = die_string(die, DW_AT_linkage_name);
    if (!name) {
        name = die_string(die, DW_AT_MIPS_linkage_name);
    }
    return name;
}

static bool is_cxx(Dwarf_Die *die)
{
    Dwarf_Die cu;
    if (!dwarf_diecu(die, &cu, NULL, NULL)) {
        return false;
    }
    switch (dwarf_srclang(&cu)) {
    case DW_LANG_C_plus_plus:
    case DW_LANG_C_plus_plus_03:
    case DW_LANG_C_plus_plus_11:
    case DW_LANG_C_plus_plus_14: return true;
    default: return false;
    }
}

/* Follow DW_AT_abstract_origin / DW_AT_specification to the DIE that declares the function,
   which is the one nested in its namespaces and classes. */
static void declaration(Dwarf_Die *die, Dwarf_Die *decl)
{
    *decl = *die;
    for (int hops = 0; hops < 8; hops++) {
        Dwarf_Attribute attr;
        Dwarf_Attribute *ref = dwarf_attr(decl, DW_AT_abstract_origin, &attr);
        if (!ref) {
            ref = dwarf_attr(decl, DW_AT_specification, &attr);
        }
        Dwarf_Die next;
        if (!ref || !dwarf_formref_die(ref, &next)) {
            return;
        }
        *decl = next;
    }
}

static const char *scope_name(Dwarf_Die *scope)
{
    switch (dwarf_tag(scope)) {
    case DW_TAG_namespace: {
        const char *name = dwarf_diename(scope);
        return name ? name : "(anonymous namespace)";
    }
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
    case DW_TAG_union_type: return dwarf_diename(scope);
    default: return NULL;
    }
}

/* Index of decl's slot in the name cache, or of the empty slot where it belongs. */
static size_t name_cache_index(const struct symbolizer *s, const void *decl)
{
    size_t i = mix64((uint64_t)(uintptr_t)decl) & s->name_mask;
    while (s->names[i].decl && s->names[i].decl != decl) {
        i = (i + 1) & s->name_mask;
    }
    return i;
}

static int name_cache_put(struct symbolizer *s, const void *decl, const char *name)
{
    if (!s->names || (s->names_used + 1) * 2 > s->name_mask + 1) {
        size_t old_size = s->names ? s->name_mask + 1 : 0;
        size_t new_size = old_size ? old_size * 2 : 256;
        struct name_slot *table = calloc(new_size, sizeof(*table));
        if (!table) {
            return -ENOMEM;
        }
        struct name_slot *old = s->names;
        s->names = table;
        s->name_mask = new_size - 1;
        for (size_t i = 0; i < old_size; i++) {
            if (old[i].decl) {
                table[name_cache_index(s, old[i].decl)] = old[i];
            }
        }
        free(old);
    }
    size_t i = name_cache_index(s, decl);
    if (!s->names[i].decl) {
        s->names_used++;
    }
    s->names[i].decl = decl;
    s->names[i].name = name;
    return 0;
}

/*
 * "ns::Class::name" for a C++ function that has only DW_AT_name: GCC gives functions with
 * internal linkage no DW_AT_linkage_name, so the qualification comes from the enclosing
 * namespace and class DIEs of the declaration. Finding those walks the CU, so the result is
 * kept per declaration. C names are interned as they are.
 */
static int qualified_name(struct symbolizer *s, Dwarf_Die *die, const char *name, const char **out)
{
    Dwarf_Die decl;
    declaration(die, &decl);
    if (!is_cxx(&decl)) {
        return intern(s, name, out);
    }
    if (s->names) {
        const struct name_slot *cached = &s->names[name_cache_index(s, decl.addr)];
        if (cached->decl) {
            *out = cached->name;
            return 0;
        }
    }
    Dwarf_Die *scopes = NULL;
    int n = dwarf_getscopes_die(&decl, &scopes);
    size_t len = strlen(name) + 1;
    for (int i = n - 1; i >= 1; i--) {
        const char *part = scope_name(&scopes[i]);
        if (part) {
            len += strlen(part) + 2;
        }
    }
    char *buf = malloc(len);
    if (!buf) {
        free(scopes);
        return -ENOMEM;
    }
    size_t pos = 0;
    for (int i = n - 1; i >= 1; i--) {
        const char *part = scope_name(&scopes[i]);
        if (part) {
            size_t part_len = strlen(part);
            memcpy(buf + pos, part, part_len);
            memcpy(buf + pos + part_len, "::", 2);
            pos += part_len + 2;
        }
    }
    memcpy(buf + pos, name, strlen(name) + 1);
    free(scopes);
    int rc = intern(s, buf, out);
    free(buf);
    if (rc < 0) {
        return rc;
    }
    return name_cache_put(s, decl.addr, *out);
}

/*
 * Name of a subprogram or inlined subroutine. The demangled linkage name comes first because it
 * is fully qualified and has the parameter types (DW_AT_name of a member function is just
 * "make"). For the real function, `symbol` (the ELF symbol at the ip) stands in when DWARF has no
 * linkage name, so C++ functions with internal linkage still read "ns::f(int)"; then DW_AT_name
 * with its namespaces and classes; the raw names come last.
 */
static int frame_name(struct symbolizer *s, Dwarf_Die *die, const char *symbol, const char **out)
{
    *out = NULL;
    const char *linkage = die ? die_linkage_name(die) : NULL;
    int rc = intern_demangled(s, linkage, out);
    if (rc < 0 || *out) {
        return rc;
    }
    rc = intern_demangled(s, symbol, out);
    if (rc < 0 || *out) {
        return rc;
    }
    const char *plain = die ? die_string(die, DW_AT_name) : NULL;
    if (plain) {
        return qualified_name(s, die, plain, out);
    }
    return intern(s, linkage ? linkage : symbol, out);
}

/* Where the inlined subroutine `die` was called from, in its caller's terms. */
static void call_site(Dwarf_Die *die, const char **file, unsigned *line)
{
    Dwarf_Attribute attr;
    Dwarf_Word value = 0;
    *file = NULL;
    *line = 0;
    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &value) == 0 && value <= UINT_MAX) {
        *line = (unsigned)value;
    }
    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &value) != 0) {
        return;
    }
    Dwarf_Die cu;
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    if (!dwarf_diecu(die, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, &nfiles) != 0 || value >= nfiles) {
        return;
    }
    const char *name = dwarf_filesrc(files, (size_t)value, NULL, NULL);
    /* Before DWARF 5, file index 0 means "none"; libdw names that slot "???". */
    if (name && strcmp(name, "???") != 0) {
        *file = name;
    }
}

/* ---- finding the DWARF scopes of an ip ---- */

static int range_table_add(struct range_table *t, Dwarf_Addr lo, Dwarf_Addr hi, const Dwarf_Die *die)
{
    if (t->nr == t->alloc) {
        size_t alloc = t->alloc ? t->alloc * 2 : 16;
        struct addr_range *v = realloc(t->v, alloc * sizeof(*v));
        if (!v) {
            return -ENOMEM;
        }
        t->v = v;
        t->alloc = alloc;
    }
    struct addr_range *r = &t->v[t->nr++];
    r->lo = lo;
    r->hi = hi;
    r->max_hi = hi;
    r->die = *die;
    return 0;
}

/* Add every address range of `die`; ranges the linker discarded (left at 0 or at a tombstone
   past hi) are dropped. */
static int range_table_add_die(struct range_table *t, Dwarf_Die *die)
{
    Dwarf_Addr base = 0;
    Dwarf_Addr lo = 0;
    Dwarf_Addr hi = 0;
    ptrdiff_t off = 0;
    while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
        if (lo == 0 || hi <= lo) {
            continue;
        }
        int rc = range_table_add(t, lo, hi, die);
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
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
static int build_cu_index(struct module *m, Dwarf *dw)
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
        int rc = range_table_add_die(&m->cus, &cudie);
        if (rc < 0) {
            return rc;
        }
    }
    range_table_sort(&m->cus);
    return 0;
}

/* The CU DIE covering ip: 1 and *cu, *dwbias filled; 0 if none; negative on error. */
static int find_cu(struct module *m, uint64_t ip, Dwarf_Die *cu, Dwarf_Addr *dwbias)
{
    Dwarf_Die *found = dwfl_module_addrdie(m->dwmod, ip, dwbias);
    /* libdwfl answers with the CU of the nearest arange *below* ip without checking where that
       arange ends, so code without DWARF (crt files) would take the previous CU's lines. */
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
        int rc = build_cu_index(m, dw);
        if (rc < 0) {
            return rc;
        }
    }
    found = range_table_find(&m->cus, ip - *dwbias);
    if (!found) {
        return 0;
    }
    *cu = *found;
    return 1;
}

/* Bounds the recursion on corrupt or hostile DWARF; real nesting is far shallower. */
#define MAX_SCOPE_DEPTH 256

/*
 * Collect the address ranges of the concrete functions of a CU. Most sit at CU level or inside
 * namespaces, but member functions of local classes (GCC puts a lambda's _FUN under the closure
 * type under the enclosing function) and GNU C nested functions sit inside functions and blocks.
 * Other DIEs (types, variables, inlined code) are not descended into: the scopes inside a
 * function are searched per lookup in find_scopes.
 */
static int collect_functions(Dwarf_Die *parent, struct range_table *t, int depth)
{
    Dwarf_Die child;
    if (depth > MAX_SCOPE_DEPTH || dwarf_child(parent, &child) != 0) {
        return 0;
    }
    for (;;) {
        int rc = 0;
        switch (dwarf_tag(&child)) {
        case DW_TAG_subprogram:
            rc = range_table_add_die(t, &child);
            if (rc == 0) {
                rc = collect_functions(&child, t, depth + 1);
            }
            break;
        case DW_TAG_namespace:
        case DW_TAG_module:
        case DW_TAG_class_type:
        case DW_TAG_structure_type:
        case DW_TAG_union_type:
        case DW_TAG_lexical_block: rc = collect_functions(&child, t, depth + 1); break;
        default: break;
        }
        if (rc < 0) {
            return rc;
        }
        Dwarf_Die next;
        if (dwarf_siblingof(&child, &next) != 0) {
            return 0;
        }
        child = next;
    }
}

/*
 * The function DIE containing addr in the CU `root`, or NULL. Each CU is indexed once, on its
 * first lookup, so a lookup costs two binary searches instead of a walk of the whole CU
 * (C++ CUs have 100k+ DIEs from headers).
 */
static int find_function(struct module *m, Dwarf_Die *root, Dwarf_Addr addr, Dwarf_Die **fn)
{
    *fn = NULL;
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
            struct cu_functions *v = realloc(m->cu_funcs, alloc * sizeof(*v));
            if (!v) {
                return -ENOMEM;
            }
            m->cu_funcs = v;
            m->alloc_cu_funcs = alloc;
        }
        struct range_table t = {0};
        int rc = collect_functions(root, &t, 0);
        if (rc < 0) {
            free(t.v);
            return rc;
        }
        range_table_sort(&t);
        memmove(&m->cu_funcs[lo + 1], &m->cu_funcs[lo], (m->nr_cu_funcs - lo) * sizeof(*m->cu_funcs));
        m->cu_funcs[lo].key = key;
        m->cu_funcs[lo].funcs = t;
        m->nr_cu_funcs++;
    }
    *fn = range_table_find(&m->cu_funcs[lo].funcs, addr);
    return 0;
}

static int die_vec_push(struct die_vec *dv, const Dwarf_Die *die)
{
    if (dv->nr == dv->alloc) {
        size_t alloc = dv->alloc ? dv->alloc * 2 : 32;
        Dwarf_Die *v = realloc(dv->v, alloc * sizeof(*v));
        if (!v) {
            return -ENOMEM;
        }
        dv->v = v;
        dv->alloc = alloc;
    }
    dv->v[dv->nr++] = *die;
    return 0;
}

/*
 * Append to `path` the scopes inside the function DIE `parent` that contain addr, outermost
 * first. This walks the concrete DIE tree itself instead of using dwarf_getscopes(), which past
 * an inlined subroutine continues in the *abstract* definition's scopes and gives up when that
 * definition is in another CU, as with GCC's LTO (DW_AT_abstract_origin into early debug).
 * A scope that contains addr is final: sibling code ranges do not overlap.
 */
static int find_scopes(Dwarf_Die *parent, Dwarf_Addr addr, struct die_vec *path, int depth)
{
    Dwarf_Die child;
    if (depth > MAX_SCOPE_DEPTH || dwarf_child(parent, &child) != 0) {
        return 0;
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
                int rc = die_vec_push(path, &child);
                if (rc < 0) {
                    return rc;
                }
                return find_scopes(&child, addr, path, depth + 1);
            }
            break;
        default: break;
        }
        Dwarf_Die next;
        if (dwarf_siblingof(&child, &next) != 0) {
            return 0;
        }
        child = next;
    }
}

/* ---- resolving one ip ---- */

static int push_frame(struct symbolizer *s, const struct module *m, uint64_t ip, const char *function, const char *file,
                      unsigned line, int inlined)
{
    struct sym_frame f = {
        .function = function,
        .module = m->path,
        .module_offset = ip - m->bias,
        .line = line,
        .inlined = inlined,
    };
    int rc = intern(s, file, &f.file);
    if (rc < 0) {
        return rc;
    }
    return frame_vec_push(&s->scratch, &f);
}

/* The line table row for addr in the CU: its file (NULL if none) and line (0 if none). */
static const char *line_row(Dwarf_Die *cu, Dwarf_Addr addr, unsigned *line)
{
    *line = 0;
    Dwarf_Line *row = dwarf_getsrc_die(cu, addr);
    if (!row) {
        return NULL;
    }
    int lineno = 0;
    if (dwarf_lineno(row, &lineno) == 0 && lineno > 0) {
        *line = (unsigned)lineno;
    }
    return dwarf_linesrc(row, NULL, NULL);
}

/*
 * Frames from the scope path: innermost inlined subroutines first, then the nearest enclosing
 * subprogram. The innermost frame's location is the line table row for ip; each outer frame's
 * is the call site of the inlined subroutine it contains.
 */
static int frames_from_path(struct symbolizer *s, const struct module *m, uint64_t ip, const char *symbol,
                            const char *file, unsigned line)
{
    struct die_vec *path = &s->path;
    for (size_t i = path->nr; i-- > 0;) {
        Dwarf_Die *die = &path->v[i];
        int tag = dwarf_tag(die);
        if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) {
            continue;
        }
        bool real = tag == DW_TAG_subprogram;
        const char *name = NULL;
        int rc = frame_name(s, die, real ? symbol : NULL, &name);
        if (rc == 0) {
            rc = push_frame(s, m, ip, name, file, line, !real);
        }
        if (rc < 0 || real) {
            return rc;
        }
        call_site(die, &file, &line);
    }
    /* Inlined code with no enclosing subprogram DIE, or no scope at all: close the chain with
       the symbol table's idea of the real function. */
    const char *name = NULL;
    int rc = frame_name(s, NULL, symbol, &name);
    if (rc < 0) {
        return rc;
    }
    return push_frame(s, m, ip, name, file, line, 0);
}

static int resolve(struct symbolizer *s, int index, uint64_t ip)
{
    struct module *m = &s->modules[index];
    s->scratch.nr = 0;
    s->path.nr = 0;
    if (m->state == MODULE_UNOPENED) {
        open_module(s, index);
    }
    if (m->state != MODULE_OPEN || ip < m->start || ip >= m->end) {
        return push_frame(s, m, ip, NULL, NULL, 0, 0);
    }

    GElf_Off sym_off = 0;
    GElf_Sym sym;
    const char *symbol = dwfl_module_addrinfo(m->dwmod, ip, &sym_off, &sym, NULL, NULL, NULL);

    Dwarf_Die cu;
    Dwarf_Addr dwbias = 0;
    int rc = find_cu(m, ip, &cu, &dwbias);
    if (rc < 0) {
        return rc;
    }
    if (rc == 0) {
        return frames_from_path(s, m, ip, symbol, NULL, 0);
    }
    /* Be careful: DWARF addresses are relative to the debug file's own bias, which differs
       from the module's when the separate debug file was linked at other addresses. */
    Dwarf_Addr addr = ip - dwbias;
    unsigned line = 0;
    const char *file = line_row(&cu, addr, &line);

    /* With split DWARF the skeleton CU has no children; its split unit has the scopes. */
    Dwarf_Die root = cu;
    Dwarf_Die split;
    uint8_t unit_type = 0;
    if (dwarf_cu_info(cu.cu, NULL, &unit_type, NULL, &split, NULL, NULL, NULL) == 0 && unit_type == DW_UT_skeleton &&
        dwarf_tag(&split) == DW_TAG_compile_unit) {
        root = split;
    }
    Dwarf_Die *fn = NULL;
    rc = find_function(m, &root, addr, &fn);
    if (rc < 0) {
        return rc;
    }
    if (fn) {
        rc = die_vec_push(&s->path, fn);
        if (rc == 0) {
            rc = find_scopes(fn, addr, &s->path, 0);
        }
        if (rc < 0) {
            return rc;
        }
    }
    return frames_from_path(s, m, ip, symbol, file, line);
}

/* ---- public API ---- */

struct symbolizer *symbolize_new(void)
{
    struct symbolizer *s = calloc(1, sizeof(*s));
    if (!s) {
        return NULL;
    }
    s->callbacks.find_elf = dwfl_build_id_find_elf;
    s->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
    s->callbacks.section_address = dwfl_offline_section_address;
    s->callbacks.debuginfo_path = &s->debuginfo_path;
    s->dwfl = dwfl_begin(&s->callbacks);
    if (!s->dwfl) {
        free(s);
        return NULL;
    }
    return s;
}

void symbolize_free(struct symbolizer *s)
{
    if (!s) {
        return;
    }
    dwfl_end(s->dwfl);
    for (size_t i = 0; i < s->nr_modules; i++) {
        struct module *m = &s->modules[i];
        free(m->path);
        free(m->build_id);
        free(m->cus.v);
        for (size_t k = 0; k < m->nr_cu_funcs; k++) {
            free(m->cu_funcs[k].funcs.v);
        }
        free(m->cu_funcs);
    }
    free(s->modules);
    if (s->strings) {
        for (size_t i = 0; i <= s->string_mask; i++) {
            free(s->strings[i]);
        }
    }
    free(s->strings);
    free(s->names);
    free(s->slots);
    free(s->pool.v);
    free(s->scratch.v);
    free(s->path.v);
    free(s->debuginfo_path);
    free(s);
}

int symbolize_set_debuginfo_path(struct symbolizer *s, const char *path)
{
    char *copy = NULL;
    if (path) {
        copy = strdup(path);
        if (!copy) {
            return -ENOMEM;
        }
    }
    free(s->debuginfo_path);
    s->debuginfo_path = copy;
    return 0;
}

int symbolize_add_module(struct symbolizer *s, const char *path, uint64_t bias, const uint8_t *build_id,
                         size_t build_id_len)
{
    if (!path || (build_id_len > 0 && !build_id) || build_id_len > MAX_BUILD_ID) {
        return -EINVAL;
    }
    if (s->nr_modules >= INT_MAX) {
        return -EOVERFLOW;
    }
    if (s->nr_modules == s->alloc_modules) {
        size_t alloc = s->alloc_modules ? s->alloc_modules * 2 : 16;
        struct module *modules = realloc(s->modules, alloc * sizeof(*modules));
        if (!modules) {
            return -ENOMEM;
        }
        s->modules = modules;
        s->alloc_modules = alloc;
    }
    struct module m = {.bias = bias, .state = MODULE_UNOPENED};
    m.path = strdup(path);
    if (!m.path) {
        return -ENOMEM;
    }
    if (build_id_len > 0) {
        m.build_id = malloc(build_id_len);
        if (!m.build_id) {
            free(m.path);
            return -ENOMEM;
        }
        memcpy(m.build_id, build_id, build_id_len);
        m.build_id_len = build_id_len;
    }
    s->modules[s->nr_modules] = m;
    return (int)s->nr_modules++;
}

int symbolize_lookup(struct symbolizer *s, int module_index, uint64_t ip, struct sym_frame *out, int max)
{
    if (module_index < 0 || (size_t)module_index >= s->nr_modules || !out || max < 1) {
        return -EINVAL;
    }
    const struct cache_slot *slot = cache_find(s, module_index, ip);
    if (!slot) {
        s->stats.misses++;
        int rc = resolve(s, module_index, ip);
        if (rc < 0) {
            return rc;
        }
        rc = cache_insert(s, module_index, ip, &slot);
        if (rc < 0) {
            return rc;
        }
    }
    s->stats.lookups++;
    int n = slot->count < (uint32_t)max ? (int)slot->count : max;
    memcpy(out, &s->pool.v[slot->first], (size_t)n * sizeof(*out));
    return n;
}

void symbolize_get_stats(const struct symbolizer *s, struct symbolize_stats *stats)
{
    *stats = s->stats;
}
