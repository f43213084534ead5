// SPDX-License-Identifier: MIT
/* Unit test of analyzer/sym_symtab.c: the sorted symbol index must give the very name libdwfl's
 * dwfl_module_addrinfo() gives. On tests/progs/symtab_cases.S (aliases, nested, sizeless and
 * hidden symbols, bytes past an end), built as a shared library, its stripped copy (.dynsym
 * only) and an executable without any symbol table, it checks the names by construction and
 * compares with libdwfl at every address; on libc, libdw and this binary at every symbol's
 * edges and on a grid. Extra ELF files named on the command line are compared the same way. */
#define _GNU_SOURCE
#include "symbolize_internal.h"

#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gelf.h>

#include "check.h"

#if !defined(SYMTAB_CASES_PATH) || !defined(SYMTAB_STRIPPED_PATH) || !defined(SYMTAB_NOSYMS_PATH)
#error "build with -DSYMTAB_*_PATH=... (see tests/unit/symbolize.cmake)"
#endif

static const char *str_or_null(const char *s)
{
    return s ? s : "(null)";
}

static Dwfl *new_dwfl(void)
{
    static char *debuginfo_path;
    static const Dwfl_Callbacks callbacks = {
        .find_elf = dwfl_build_id_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
        .section_address = dwfl_offline_section_address,
        .debuginfo_path = &debuginfo_path,
    };
    return dwfl_begin(&callbacks);
}

/* The module of `path` at `bias`, reported as the symbolizer reports it. */
static Dwfl_Module *report(Dwfl *dwfl, const char *path, uint64_t bias)
{
    dwfl_report_begin_add(dwfl);
    Dwfl_Module *mod = dwfl_report_elf(dwfl, path, path, -1, bias, true);
    dwfl_report_end(dwfl, NULL, NULL);
    return mod;
}

static const char *libdwfl_name(Dwfl_Module *mod, uint64_t addr)
{
    GElf_Off off = 0;
    GElf_Sym sym;
    return dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
}

/* ---- comparison with libdwfl ---- */

struct compare {
    const char *what;
    size_t probes;
    size_t mismatches;
};

static void probe(struct compare *c, struct sym_symtab *t, Dwfl_Module *mod, uint64_t addr)
{
    const char *want = libdwfl_name(mod, addr);
    const char *got = sym_symtab_lookup(t, addr);
    c->probes++;
    if (want == got || (want && got && strcmp(want, got) == 0)) {
        return;
    }
    if (c->mismatches++ < 10) {
        fprintf(stderr, "  %s at 0x%llx: libdwfl '%s', index '%s'\n", c->what, (unsigned long long)addr,
                str_or_null(want), str_or_null(got));
    }
}

/* Every address of the module when `every` is set, else the edges (one byte before, at, after
 * its start and its end) of about 3000 symbols spread over the table and about 10000 addresses
 * spread over the module: libdwfl's own answer costs a walk of the table each. */
static void compare_module(const char *what, Dwfl_Module *mod, bool every)
{
    struct sym_symtab *t = sym_symtab_build(mod);
    if (!CHECK(t != NULL)) {
        return;
    }
    struct compare c = {.what = what};
    Dwarf_Addr start = 0;
    Dwarf_Addr end = 0;
    dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL, NULL);
    if (every) {
        for (uint64_t a = start; a < end; a++) {
            probe(&c, t, mod, a);
        }
    } else {
        int count = dwfl_module_getsymtab(mod);
        int stride = count / 3000 + 1;
        for (int i = 1; i < count; i += stride) {
            GElf_Sym sym;
            GElf_Addr value = 0;
            if (!dwfl_module_getsym_info(mod, i, &sym, &value, NULL, NULL, NULL)) {
                continue;
            }
            for (int d = -1; d <= 1; d++) {
                probe(&c, t, mod, value + (uint64_t)d);
                probe(&c, t, mod, value + sym.st_size + (uint64_t)d);
            }
        }
        uint64_t step = (end - start) / 10000 + 1;
        for (uint64_t a = start; a < end; a += step) {
            probe(&c, t, mod, a);
        }
    }
    printf("  %s: %zu addresses, %zu differ from libdwfl\n", what, c.probes, c.mismatches);
    CHECK(c.probes > 0);
    CHECK_EQ(c.mismatches, 0);
    sym_symtab_free(t);
}

/* ---- names by construction ---- */

static uint64_t symbol_value(Dwfl_Module *mod, const char *name)
{
    int count = dwfl_module_getsymtab(mod);
    for (int i = 1; i < count; i++) {
        GElf_Sym sym;
        GElf_Addr value = 0;
        const char *n = dwfl_module_getsym_info(mod, i, &sym, &value, NULL, NULL, NULL);
        if (n && strcmp(n, name) == 0) {
            return value;
        }
    }
    return 0;
}

static void expect(struct sym_symtab *t, uint64_t base, uint64_t offset, const char *want, int line)
{
    const char *got = sym_symtab_lookup(t, base + offset);
    bool ok = want ? got && strcmp(got, want) == 0 : got == NULL;
    check_at(ok, "the name at an offset of symtab_cases.S", __FILE__, line);
    if (!ok) {
        fprintf(stderr, "    +0x%llx: want '%s', got '%s'\n", (unsigned long long)offset, str_or_null(want),
                str_or_null(got));
    }
}

#define EXPECT(off, name) expect(t, base, (off), (name), __LINE__)

static void test_cases_full(Dwfl *dwfl)
{
    Dwfl_Module *mod = report(dwfl, SYMTAB_CASES_PATH, 0x7f0000000000);
    if (!CHECK(mod != NULL)) {
        return;
    }
    struct sym_symtab *t = sym_symtab_build(mod);
    uint64_t base = symbol_value(mod, "alias_global");
    if (!CHECK(t != NULL) || !CHECK(base != 0)) {
        return;
    }
    /* Aliases: the global name wins over the weak and the local one, at both ends. */
    EXPECT(0x000, "alias_global");
    EXPECT(0x01f, "alias_global");
    /* A global function hides the local one inside it: locals are searched only without a global. */
    EXPECT(0x020, "outer_global");
    EXPECT(0x030, "outer_global");
    EXPECT(0x05f, "outer_global");
    /* Among locals the innermost (latest start) wins, and only within its size. */
    EXPECT(0x060, "outer_local");
    EXPECT(0x070, "inner_of_local");
    EXPECT(0x07f, "inner_of_local");
    EXPECT(0x080, "outer_local");
    /* Past a function's end nothing is named: no label starts where it ends. */
    EXPECT(0x0a0, "short_fn");
    EXPECT(0x0af, "short_fn");
    EXPECT(0x0b0, NULL);
    EXPECT(0x0bf, NULL);
    /* A sizeless label names what follows it, up to the next symbol. */
    EXPECT(0x0c0, "label_local");
    EXPECT(0x0df, "label_local");
    /* A label inside a sized function is hidden by it, also past the function's end. */
    EXPECT(0x0e0, "hiding_fn");
    EXPECT(0x0f0, "hiding_fn");
    EXPECT(0x100, NULL);
    EXPECT(0x10f, NULL);
    /* A global label exactly at the address beats the local function around it; one byte on,
     * the local function wins. */
    EXPECT(0x110, "local_cover");
    EXPECT(0x118, "global_label");
    EXPECT(0x11c, "local_cover");
    /* An object symbol names its bytes too, and nothing past them. */
    EXPECT(0x140, "some_object");
    EXPECT(0x14f, "some_object");
    EXPECT(0x150, NULL);
    /* Two labels at one address: one of the two, the one libdwfl gives (compared below). */
    const char *twin = sym_symtab_lookup(t, base + 0x138);
    CHECK(twin && (strcmp(twin, "twin_a") == 0 || strcmp(twin, "twin_b") == 0));
    /* Below the first symbol: nothing. */
    CHECK(sym_symtab_lookup(t, 0x1000) == NULL);
    sym_symtab_free(t);
    compare_module("symtab_cases.so", mod, true);
}

static void test_cases_stripped(Dwfl *dwfl)
{
    Dwfl_Module *mod = report(dwfl, SYMTAB_STRIPPED_PATH, 0x7e0000000000);
    if (!CHECK(mod != NULL)) {
        return;
    }
    struct sym_symtab *t = sym_symtab_build(mod);
    uint64_t base = symbol_value(mod, "alias_global");
    if (!CHECK(t != NULL) || !CHECK(base != 0)) {
        return;
    }
    /* Only the exported names are left (.dynsym). */
    EXPECT(0x000, "alias_global");
    EXPECT(0x030, "outer_global");
    EXPECT(0x070, NULL);
    EXPECT(0x0c0, NULL);
    EXPECT(0x110, NULL);
    EXPECT(0x118, "global_label");
    /* With no symbol after it, a label names the rest of its section. */
    EXPECT(0x140, "global_label");
    EXPECT(0xfff, "global_label");
    sym_symtab_free(t);
    compare_module("symtab_cases_stripped.so", mod, true);
}

static void test_no_symbols(Dwfl *dwfl)
{
    Dwfl_Module *mod = report(dwfl, SYMTAB_NOSYMS_PATH, 0);
    if (!CHECK(mod != NULL)) {
        return;
    }
    CHECK(dwfl_module_getsymtab(mod) <= 0);
    struct sym_symtab *t = sym_symtab_build(mod);
    Dwarf_Addr start = 0;
    Dwarf_Addr end = 0;
    dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL, NULL);
    if (CHECK(t != NULL) && CHECK(end > start)) {
        CHECK(sym_symtab_lookup(t, start) == NULL);
        CHECK(sym_symtab_lookup(t, start + (end - start) / 2) == NULL);
    }
    sym_symtab_free(t);
    compare_module("symtab_nosyms", mod, true);
}

/* ---- real modules ---- */

struct loaded {
    Dwfl *dwfl;
    int compared;
};

static int compare_loaded(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct loaded *l = arg;
    const char *name = info->dlpi_name;
    bool self = name[0] == '\0' && l->compared == 0;
    if (!self && !strstr(name, "/libc.so") && !strstr(name, "/libdw")) {
        return 0;
    }
    const char *path = self ? "/proc/self/exe" : name;
    Dwfl_Module *mod = report(l->dwfl, path, info->dlpi_addr);
    if (CHECK(mod != NULL)) {
        compare_module(self ? "test_symtab" : name, mod, false);
    }
    l->compared++;
    return 0;
}

int main(int argc, char **argv)
{
    Dwfl *dwfl = new_dwfl();
    if (!CHECK(dwfl != NULL)) {
        return check_summary("test_symtab");
    }
    test_cases_full(dwfl);
    test_cases_stripped(dwfl);
    test_no_symbols(dwfl);
    struct loaded l = {.dwfl = dwfl};
    dl_iterate_phdr(compare_loaded, &l);
    CHECK(l.compared >= 3);
    for (int i = 1; i < argc; i++) {
        Dwfl_Module *mod = report(dwfl, argv[i], 0);
        if (CHECK(mod != NULL)) {
            compare_module(argv[i], mod, false);
        }
    }
    dwfl_end(dwfl);
    return check_summary("test_symtab");
}
