// SPDX-License-Identifier: MIT
/* Function names and call sites for the symbolizer: demangled linkage
 * names first, then DW_AT_name qualified by its namespaces and classes
 * (cached per declaration DIE), then the ELF symbol. Names are interned in
 * the symbolizer, so a frame's strings live as long as it does. */
#include "symbolize_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>

#include "util.h"

/* The C entry point of the C++ runtime's demangler (libstdc++ / libc++abi). */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Malloc'd demangled form of an Itanium-mangled name, or NULL if `name` is not one. */
static char *demangle(const char *name)
{
    if (!name || strncmp(name, "_Z", 2) != 0) {
        return NULL;
    }
    int status = -1;
    char *out = __cxa_demangle(name, NULL, NULL, &status);
    if (status == -1) {
        /* The demangler's only failure that is not about the name itself. */
        die("out of memory demangling a function name");
    }
    if (status != 0) {
        free(out);
        return NULL;
    }
    return out;
}

/* The interned demangled form of `mangled`, or NULL if it does not demangle. */
static const char *intern_demangled(struct symbolizer *s, const char *mangled)
{
    char *plain = demangle(mangled);
    if (!plain) {
        return NULL;
    }
    const char *out = sym_intern(s, plain);
    free(plain);
    return out;
}

static const char *die_string(Dwarf_Die *die, unsigned attr_name)
{
    Dwarf_Attribute attr;
    /* _integrate follows DW_AT_abstract_origin (inlined and out-of-line instances) and
     * DW_AT_specification (member functions defined outside their class). */
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
 * which is the one nested in its namespaces and classes. */
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
    size_t i = sym_mix64((uint64_t)(uintptr_t)decl) & s->name_mask;
    while (s->names[i].decl && s->names[i].decl != decl) {
        i = (i + 1) & s->name_mask;
    }
    return i;
}

static void name_cache_put(struct symbolizer *s, const void *decl, const char *name)
{
    if (!s->names || (s->names_used + 1) * 2 > s->name_mask + 1) {
        size_t old_size = s->names ? s->name_mask + 1 : 0;
        size_t new_size = old_size ? old_size * 2 : 256;
        struct name_slot *old = s->names;
        s->names = xcalloc(new_size, sizeof(*s->names));
        s->name_mask = new_size - 1;
        for (size_t i = 0; i < old_size; i++) {
            if (old[i].decl) {
                s->names[name_cache_index(s, old[i].decl)] = old[i];
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
}

/*
 * "ns::Class::name" for a C++ function that has only DW_AT_name: GCC gives functions with
 * internal linkage no DW_AT_linkage_name, so the qualification comes from the enclosing
 * namespace and class DIEs of the declaration. Finding those walks the CU, so the result is
 * kept per declaration. C names are interned as they are.
 */
static const char *qualified_name(struct symbolizer *s, Dwarf_Die *die, const char *name)
{
    Dwarf_Die decl;
    declaration(die, &decl);
    if (!is_cxx(&decl)) {
        return sym_intern(s, name);
    }
    if (s->names) {
        const struct name_slot *cached = &s->names[name_cache_index(s, decl.addr)];
        if (cached->decl) {
            return cached->name;
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
    char *buf = xmalloc(len);
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
    const char *out = sym_intern(s, buf);
    free(buf);
    name_cache_put(s, decl.addr, out);
    return out;
}

/*
 * The demangled linkage name comes first because it is fully qualified and has the parameter
 * types (DW_AT_name of a member function is just "make"). For the real function, `symbol` (the
 * ELF symbol at the ip) stands in when DWARF has no linkage name, so C++ functions with internal
 * linkage still read "ns::f(int)"; then DW_AT_name with its namespaces and classes; the raw
 * names come last.
 */
const char *sym_frame_name(struct symbolizer *s, Dwarf_Die *die, const char *symbol)
{
    const char *linkage = die ? die_linkage_name(die) : NULL;
    const char *out = intern_demangled(s, linkage);
    if (!out) {
        out = intern_demangled(s, symbol);
    }
    if (out) {
        return out;
    }
    const char *plain = die ? die_string(die, DW_AT_name) : NULL;
    if (plain) {
        return qualified_name(s, die, plain);
    }
    return sym_intern(s, linkage ? linkage : symbol);
}

void sym_call_site(Dwarf_Die *die, const char **file, unsigned *line)
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
