// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
// Unit test for analyzer/symbolize.c against real compiled code: this binary, its C++ helper and
// libsymtest_lib.so (plus stripped and separate-debug copies), located the way the recorder does.
#define _GNU_SOURCE
#include "symbolize.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "symtest.h"

#if !defined(SYMTEST_STRIPPED_PATH) || !defined(SYMTEST_HI_PATH)
#error "build with -DSYMTEST_*_PATH=... (see tests/unit/symbolize.cmake)"
#endif

/* ---- harness ---- */

/* check.h's CHECK, plus a printf-style explanation (the values seen) when it fails. */
#define CHECKF(cond, ...) explain(check_at((cond) != 0, #cond, __FILE__, __LINE__), __VA_ARGS__)

__attribute__((format(printf, 2, 3))) static void explain(int ok, const char *fmt, ...)
{
    if (ok) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    fputs("    ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static const char *base_name(const char *path)
{
    if (!path) {
        return "(null)";
    }
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static const char *str_or_null(const char *s)
{
    return s ? s : "(null)";
}

static bool str_eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static void dump_frames(const char *what, const struct sym_frame *f, int n)
{
    fprintf(stderr, "  %s: %d frame(s)\n", what, n);
    for (int i = 0; i < n; i++) {
        fprintf(stderr, "    #%d %s%s at %s:%u (%s+0x%llx)\n", i, str_or_null(f[i].function),
                f[i].inlined ? " [inlined]" : "", str_or_null(f[i].file), f[i].line,
                base_name(f[i].module), (unsigned long long)f[i].module_offset);
    }
}

/* ---- finding our own modules, the way the recorder does ---- */

struct found_module {
    uintptr_t addr;
    char path[4096];
    uint64_t bias;
    uint8_t build_id[64];
    size_t build_id_len;
    bool found;
};

static void read_build_id(struct dl_phdr_info *info, struct found_module *fm)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE) {
            continue;
        }
        const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        const unsigned char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            const unsigned char *name = p + sizeof(*nh);
            const unsigned char *desc = name + ((nh->n_namesz + 3) & ~3u);
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
                memcmp(name, "GNU", 4) == 0 && nh->n_descsz <= sizeof(fm->build_id)) {
                memcpy(fm->build_id, desc, nh->n_descsz);
                fm->build_id_len = nh->n_descsz;
                return;
            }
            p = desc + ((nh->n_descsz + 3) & ~3u);
        }
    }
}

static int find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct found_module *fm = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type != PT_LOAD || fm->addr < lo || fm->addr >= lo + ph->p_memsz) {
            continue;
        }
        fm->bias = info->dlpi_addr;
        if (info->dlpi_name[0] == '\0') {
            ssize_t len = readlink("/proc/self/exe", fm->path, sizeof(fm->path) - 1);
            fm->path[len > 0 ? len : 0] = '\0';
        } else {
            snprintf(fm->path, sizeof(fm->path), "%s", info->dlpi_name);
        }
        read_build_id(info, fm);
        fm->found = true;
        return 1;
    }
    return 0;
}

static struct found_module find_module(const void *addr)
{
    struct found_module fm = { .addr = (uintptr_t)addr };
    dl_iterate_phdr(find_cb, &fm);
    return fm;
}

/* ---- code under test: a chain of always_inline functions in C ---- */

static volatile unsigned line_inner;
static volatile unsigned line_middle;
static volatile unsigned line_outer;
static volatile int sink;

static inline __attribute__((always_inline)) void *symtest_inline_inner(int x)
{
    void *ra = symtest_ra(); line_inner = __LINE__;
    sink += x;
    return ra;
}

static inline __attribute__((always_inline)) void *symtest_inline_middle(int x)
{
    void *ra = symtest_inline_inner(x + 1); line_middle = __LINE__;
    sink += x;
    return ra;
}

__attribute__((noinline)) void *symtest_inline_outer(int x)
{
    void *ra = symtest_inline_middle(x + 1); line_outer = __LINE__;
    sink += x;
    return ra;
}

/* ---- tests ---- */

#define MAX_FRAMES 16

static void test_inline_chain(void)
{
    void *ra = symtest_inline_outer(1);
    uint64_t ip = (uint64_t)(uintptr_t)ra - 1;
    struct found_module fm = find_module(ra);
    CHECKF(fm.found, "dl_iterate_phdr found no module for %p", ra);

    struct symbolizer *s = symbolize_new();
    CHECKF(s != NULL, "symbolize_new failed");
    int mod = symbolize_add_module(s, fm.path, fm.bias, fm.build_id, fm.build_id_len);
    CHECKF(mod == 0, "first module index %d", mod);

    struct sym_frame f[MAX_FRAMES];
    int n = symbolize_lookup(s, mod, ip, f, MAX_FRAMES);
    if (n != 3) {
        dump_frames("inline chain", f, n);
    }
    CHECKF(n == 3, "expected inner, middle, outer; got %d frames", n);
    if (n == 3) {
        CHECKF(str_eq(f[0].function, "symtest_inline_inner"), "got %s", str_or_null(f[0].function));
        CHECKF(f[0].inlined == 1, "inner inlined=%d", f[0].inlined);
        CHECKF(str_eq(base_name(f[0].file), "test_symbolize.c"), "file %s", str_or_null(f[0].file));
        CHECKF(f[0].line == line_inner, "inner line %u, want %u", f[0].line, line_inner);

        CHECKF(str_eq(f[1].function, "symtest_inline_middle"), "got %s",
              str_or_null(f[1].function));
        CHECKF(f[1].inlined == 1, "middle inlined=%d", f[1].inlined);
        CHECKF(str_eq(base_name(f[1].file), "test_symbolize.c"), "file %s", str_or_null(f[1].file));
        CHECKF(f[1].line == line_middle, "middle line %u, want %u", f[1].line, line_middle);

        CHECKF(str_eq(f[2].function, "symtest_inline_outer"), "got %s", str_or_null(f[2].function));
        CHECKF(f[2].inlined == 0, "outer inlined=%d", f[2].inlined);
        CHECKF(str_eq(base_name(f[2].file), "test_symbolize.c"), "file %s", str_or_null(f[2].file));
        CHECKF(f[2].line == line_outer, "outer line %u, want %u", f[2].line, line_outer);
        for (int i = 0; i < n; i++) {
            CHECKF(f[i].module_offset == ip - fm.bias, "frame %d offset 0x%llx", i,
                  (unsigned long long)f[i].module_offset);
            CHECKF(str_eq(f[i].module, fm.path), "frame %d module %s", i,
                  str_or_null(f[i].module));
        }
    }

    /* The second lookup is a cache hit: same strings, no new resolution. */
    struct symbolize_stats before;
    struct symbolize_stats after;
    symbolize_get_stats(s, &before);
    struct sym_frame g[MAX_FRAMES];
    int n2 = symbolize_lookup(s, mod, ip, g, MAX_FRAMES);
    symbolize_get_stats(s, &after);
    CHECKF(n2 == n, "cached lookup gave %d frames, first gave %d", n2, n);
    CHECKF(after.misses == before.misses, "cached lookup missed");
    CHECKF(after.lookups == before.lookups + 1, "lookup not counted");
    for (int i = 0; i < n && i < n2; i++) {
        CHECKF(g[i].function == f[i].function && g[i].file == f[i].file && g[i].line == f[i].line,
              "cached frame %d differs", i);
    }

    /* max smaller than the chain: the innermost frames come back. */
    struct sym_frame one;
    int n1 = symbolize_lookup(s, mod, ip, &one, 1);
    CHECKF(n1 == 1, "max=1 gave %d", n1);
    CHECKF(n1 == 1 && one.function == f[0].function && one.inlined == 1, "max=1 frame differs");

    /* Bad arguments are errors, not crashes. */
    CHECKF(symbolize_lookup(s, -1, ip, f, MAX_FRAMES) == -EINVAL, "index -1 accepted");
    CHECKF(symbolize_lookup(s, 1, ip, f, MAX_FRAMES) == -EINVAL, "unregistered index accepted");
    CHECKF(symbolize_lookup(s, mod, ip, f, 0) == -EINVAL, "max 0 accepted");
    CHECKF(symbolize_lookup(s, mod, ip, NULL, 1) == -EINVAL, "NULL out accepted");
    CHECKF(symbolize_add_module(s, NULL, 0, NULL, 0) == -EINVAL, "NULL path accepted");
    CHECKF(symbolize_add_module(s, "x", 0, NULL, 4) == -EINVAL, "NULL build-id accepted");

    /* Garbage ips in a good module: one module+offset frame each. */
    const uint64_t garbage[] = { 0, 1, fm.bias - 1, UINT64_MAX, fm.bias + (1ull << 40) };
    for (size_t i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
        int ng = symbolize_lookup(s, mod, garbage[i], f, MAX_FRAMES);
        CHECKF(ng == 1, "garbage ip %zu gave %d frames", i, ng);
        CHECKF(ng == 1 && f[0].function == NULL && f[0].file == NULL && f[0].line == 0,
              "garbage ip %zu resolved to %s", i, str_or_null(f[0].function));
        CHECKF(ng == 1 && f[0].module_offset == garbage[i] - fm.bias, "garbage ip %zu offset", i);
    }
    /* An address in data, not code: anything but a crash. */
    int nd = symbolize_lookup(s, mod, (uint64_t)(uintptr_t)&sink, f, MAX_FRAMES);
    CHECKF(nd >= 1, "data address gave %d", nd);

    symbolize_free(s);
}

static void test_cxx_names(void)
{
    unsigned make_line = 0;
    unsigned grow_line = 0;
    void *ra = symtest_cxx_run(&make_line, &grow_line);
    uint64_t ip = (uint64_t)(uintptr_t)ra - 1;
    struct found_module fm = find_module(ra);
    CHECKF(fm.found, "dl_iterate_phdr found no module for %p", ra);

    struct symbolizer *s = symbolize_new();
    int mod = symbolize_add_module(s, fm.path, fm.bias, fm.build_id, fm.build_id_len);
    struct sym_frame f[MAX_FRAMES];
    int n = symbolize_lookup(s, mod, ip, f, MAX_FRAMES);
    if (n != 2) {
        dump_frames("c++", f, n);
    }
    CHECKF(n == 2, "expected grow (inlined) and make; got %d frames", n);
    if (n == 2) {
        CHECKF(str_eq(f[0].function, "ns::Widget::grow(int)"), "got %s",
              str_or_null(f[0].function));
        CHECKF(f[0].inlined == 1, "grow inlined=%d", f[0].inlined);
        CHECKF(str_eq(base_name(f[0].file), "symtest_cxx.cpp"), "file %s", str_or_null(f[0].file));
        CHECKF(f[0].line == grow_line, "grow line %u, want %u", f[0].line, grow_line);
        CHECKF(str_eq(f[1].function, "ns::Widget::make(int)"), "got %s",
              str_or_null(f[1].function));
        CHECKF(f[1].inlined == 0, "make inlined=%d", f[1].inlined);
        CHECKF(str_eq(base_name(f[1].file), "symtest_cxx.cpp"), "file %s", str_or_null(f[1].file));
        CHECKF(f[1].line == make_line, "make line %u, want %u", f[1].line, make_line);
    }
    symbolize_free(s);
}

struct lib_ips {
    struct found_module fm;
    uint64_t entry_ip;
    unsigned entry_line;
    uint64_t static_ip;
    unsigned static_line;
};

static struct lib_ips lib_ips(void)
{
    struct lib_ips l;
    void *ra = symtest_lib_entry(&l.entry_line);
    l.entry_ip = (uint64_t)(uintptr_t)ra - 1;
    l.fm = find_module(ra);
    ra = symtest_lib_static(&l.static_line);
    l.static_ip = (uint64_t)(uintptr_t)ra - 1;
    return l;
}

/* Expect full DWARF answers for libsymtest_lib.so's two ips from the module at `path`. */
static void check_lib_full(struct symbolizer *s, const char *path, const struct lib_ips *l,
                           const char *what)
{
    int mod = symbolize_add_module(s, path, l->fm.bias, l->fm.build_id, l->fm.build_id_len);
    CHECKF(mod >= 0, "%s: add_module %d", what, mod);
    struct sym_frame f[MAX_FRAMES];
    int n = symbolize_lookup(s, mod, l->entry_ip, f, MAX_FRAMES);
    if (n != 1 || !str_eq(f[0].function, "symtest_lib_entry") || f[0].line != l->entry_line) {
        dump_frames(what, f, n);
    }
    CHECKF(n == 1, "%s: entry gave %d frames", what, n);
    CHECKF(str_eq(f[0].function, "symtest_lib_entry"), "%s: got %s", what,
          str_or_null(f[0].function));
    CHECKF(str_eq(base_name(f[0].file), "symtest_lib.c"), "%s: file %s", what,
          str_or_null(f[0].file));
    CHECKF(f[0].line == l->entry_line, "%s: line %u, want %u", what, f[0].line, l->entry_line);
    CHECKF(f[0].module_offset == l->entry_ip - l->fm.bias, "%s: offset", what);
    CHECKF(f[0].module != NULL && strcmp(f[0].module, path) == 0, "%s: module %s", what,
          str_or_null(f[0].module));

    n = symbolize_lookup(s, mod, l->static_ip, f, MAX_FRAMES);
    if (n != 1 || !str_eq(f[0].function, "lib_hidden") || f[0].line != l->static_line) {
        dump_frames(what, f, n);
    }
    CHECKF(n == 1, "%s: static gave %d frames", what, n);
    CHECKF(str_eq(f[0].function, "lib_hidden"), "%s: got %s", what, str_or_null(f[0].function));
    CHECKF(f[0].line == l->static_line, "%s: line %u, want %u", what, f[0].line, l->static_line);
}

static void test_shared_library(void)
{
    struct lib_ips l = lib_ips();
    CHECKF(l.fm.found, "libsymtest_lib.so not found by dl_iterate_phdr");
    CHECKF(strstr(l.fm.path, "libsymtest_lib") != NULL, "module path %s", l.fm.path);
    CHECKF(l.fm.build_id_len > 0, "libsymtest_lib.so has no build-id");

    struct symbolizer *s = symbolize_new();
    check_lib_full(s, l.fm.path, &l, "unstripped");
    /* .gnu_debuglink next to a --strip-all copy: everything comes from the .debug file. */
    check_lib_full(s, SYMTEST_DEBUGLINK_PATH, &l, "debuglink");
    /* No .debug_aranges (as clang builds): CUs are found by their own ranges. */
    check_lib_full(s, SYMTEST_NOARANGES_PATH, &l, "no aranges");

    /* --strip-all copy: only .dynsym is left. */
    int mod = symbolize_add_module(s, SYMTEST_STRIPPED_PATH, l.fm.bias, l.fm.build_id,
                                   l.fm.build_id_len);
    struct sym_frame f[MAX_FRAMES];
    int n = symbolize_lookup(s, mod, l.entry_ip, f, MAX_FRAMES);
    CHECKF(n == 1, "stripped entry gave %d frames", n);
    CHECKF(f[0].function == NULL || str_eq(f[0].function, "symtest_lib_entry"),
          "stripped entry: got %s", str_or_null(f[0].function));
    CHECKF(f[0].file == NULL && f[0].line == 0, "stripped entry has a line: %s:%u",
          str_or_null(f[0].file), f[0].line);
    CHECKF(f[0].module_offset == l.entry_ip - l.fm.bias, "stripped entry offset 0x%llx",
          (unsigned long long)f[0].module_offset);
    CHECKF(str_eq(f[0].module, SYMTEST_STRIPPED_PATH), "module %s", str_or_null(f[0].module));
    n = symbolize_lookup(s, mod, l.static_ip, f, MAX_FRAMES);
    CHECKF(n == 1, "stripped static gave %d frames", n);
    CHECKF(f[0].function == NULL, "stripped static: got %s", str_or_null(f[0].function));
    CHECKF(f[0].module_offset == l.static_ip - l.fm.bias, "stripped static offset");
    symbolize_free(s);
}

static int make_build_id_dir(char *dir, size_t size, const struct found_module *fm)
{
    snprintf(dir, size, "/tmp/symtest_debug_XXXXXX");
    if (!mkdtemp(dir)) {
        return -1;
    }
    char path[4200];
    snprintf(path, sizeof(path), "%s/.build-id", dir);
    mkdir(path, 0700);
    snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%02x", fm->build_id[0]);
    mkdir(path, 0700);
    size_t len = strlen(path);
    path[len++] = '/';
    for (size_t i = 1; i < fm->build_id_len; i++) {
        len += (size_t)snprintf(path + len, sizeof(path) - len, "%02x", fm->build_id[i]);
    }
    snprintf(path + len, sizeof(path) - len, ".debug");
    return symlink(SYMTEST_DEBUG_PATH, path);
}

static void remove_build_id_dir(const char *dir, const struct found_module *fm)
{
    char path[4200];
    int len = snprintf(path, sizeof(path), "%s/.build-id/%02x/", dir, fm->build_id[0]);
    for (size_t i = 1; i < fm->build_id_len; i++) {
        len += snprintf(path + len, sizeof(path) - (size_t)len, "%02x", fm->build_id[i]);
    }
    snprintf(path + len, sizeof(path) - (size_t)len, ".debug");
    unlink(path);
    snprintf(path, sizeof(path), "%s/.build-id/%02x", dir, fm->build_id[0]);
    rmdir(path);
    snprintf(path, sizeof(path), "%s/.build-id", dir);
    rmdir(path);
    rmdir(dir);
}

static void test_build_id_debug_dir(void)
{
    struct lib_ips l = lib_ips();
    char dir[64];
    int rc = make_build_id_dir(dir, sizeof(dir), &l.fm);
    CHECKF(rc == 0, "cannot make the .build-id directory under /tmp");
    if (rc != 0) {
        return;
    }
    struct symbolizer *s = symbolize_new();
    symbolize_set_debuginfo_path(s, dir);
    /* Stripped file on disk, DWARF found by build-id through libdwfl's standard search. */
    check_lib_full(s, SYMTEST_STRIPPED_PATH, &l, "stripped + build-id dir");
    /* File gone since recording: the .debug file found by build-id stands in for it. */
    check_lib_full(s, "/nonexistent/symtest/libsymtest_lib.so", &l, "missing + build-id dir");
    symbolize_free(s);
    remove_build_id_dir(dir, &l.fm);
}

/*
 * A library whose first segment is linked at 0x10000000, loaded elsewhere: the load bias
 * (dlpi_addr) is then not its load address, and the module must be placed by the bias.
 */
static void test_nonzero_vaddr(void)
{
    /* Valgrind 3.19 asserts while reading such a moved library's symbols; not our bug. */
    const char *preload = getenv("LD_PRELOAD");
    if (preload && strstr(preload, "vgpreload")) {
        printf("test_symbolize: skipping the p_vaddr != 0 library under valgrind\n");
        return;
    }
    /* Occupy the link address so the dynamic loader has to move the library. */
    void *want = (void *)0x10000000;
    void *hole = mmap(want, 0x200000, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                      -1, 0);
    void *handle = dlopen(SYMTEST_HI_PATH, RTLD_NOW | RTLD_LOCAL);
    CHECKF(handle != NULL, "dlopen %s: %s", SYMTEST_HI_PATH, dlerror());
    if (!handle) {
        return;
    }
    void *sym = dlsym(handle, "symtest_hi_entry");
    void *(*entry)(unsigned *) = NULL;
    /* ISO C has no object-to-function pointer cast; POSIX guarantees the bytes convert. */
    memcpy(&entry, &sym, sizeof(entry));
    CHECKF(entry != NULL, "dlsym symtest_hi_entry");
    if (entry) {
        unsigned line = 0;
        void *ra = entry(&line);
        uint64_t ip = (uint64_t)(uintptr_t)ra - 1;
        struct found_module fm = find_module(ra);
        CHECKF(fm.found, "libsymtest_hi.so not found by dl_iterate_phdr");
        if (hole == want) {
            CHECKF(fm.bias != 0, "library was not moved, the test proves nothing");
        }
        struct symbolizer *s = symbolize_new();
        int mod = symbolize_add_module(s, fm.path, fm.bias, fm.build_id, fm.build_id_len);
        struct sym_frame f[MAX_FRAMES];
        int n = symbolize_lookup(s, mod, ip, f, MAX_FRAMES);
        if (n != 1 || !str_eq(f[0].function, "symtest_hi_entry")) {
            dump_frames("p_vaddr != 0", f, n);
        }
        CHECKF(n == 1 && str_eq(f[0].function, "symtest_hi_entry"), "p_vaddr != 0: got %s",
              str_or_null(f[0].function));
        CHECKF(f[0].line == line, "p_vaddr != 0: line %u, want %u", f[0].line, line);
        CHECKF(str_eq(base_name(f[0].file), "symtest_hi.c"), "file %s", str_or_null(f[0].file));
        CHECKF(f[0].module_offset == ip - fm.bias && f[0].module_offset >= 0x10000000,
              "p_vaddr != 0: offset 0x%llx", (unsigned long long)f[0].module_offset);
        symbolize_free(s);
    }
    dlclose(handle);
    if (hole != MAP_FAILED) {
        munmap(hole, 0x200000);
    }
}

static void check_offset_only(struct symbolizer *s, const char *path, uint64_t bias,
                              const uint8_t *build_id, size_t build_id_len, uint64_t offset)
{
    int mod = symbolize_add_module(s, path, bias, build_id, build_id_len);
    CHECKF(mod >= 0, "%s: add_module %d", path, mod);
    struct sym_frame f[MAX_FRAMES];
    memset(f, 0xff, sizeof(f));
    int n = symbolize_lookup(s, mod, bias + offset, f, MAX_FRAMES);
    CHECKF(n == 1, "%s: %d frames", path, n);
    CHECKF(f[0].function == NULL && f[0].file == NULL && f[0].line == 0 && f[0].inlined == 0,
          "%s: got %s at %s:%u", path, str_or_null(f[0].function), str_or_null(f[0].file),
          f[0].line);
    CHECKF(f[0].module_offset == offset, "%s: offset 0x%llx, want 0x%llx", path,
          (unsigned long long)f[0].module_offset, (unsigned long long)offset);
    CHECKF(str_eq(f[0].module, path), "%s: module %s", path, str_or_null(f[0].module));
}

static void test_offset_only(void)
{
    struct symbolizer *s = symbolize_new();
    check_offset_only(s, "/nonexistent/symtest_missing.so", 0x7f1200000000ull, NULL, 0, 0x1234);
    check_offset_only(s, "[vdso]", 0x7ffd00000000ull, NULL, 0, 0x9a0);
    check_offset_only(s, "linux-vdso.so.1", 0x7ffd00000000ull, NULL, 0, 0x9a0);
    check_offset_only(s, "", 0x400000, NULL, 0, 0x10);

    /* Not an ELF file. */
    char junk[] = "/tmp/symtest_junk_XXXXXX";
    int fd = mkstemp(junk);
    CHECKF(fd >= 0, "mkstemp");
    if (fd >= 0) {
        CHECKF(write(fd, "not an elf file\n", 16) == 16, "write");
        close(fd);
        check_offset_only(s, junk, 0x7f0000000000ull, NULL, 0, 0x40);
        unlink(junk);
    }
    /* A directory. */
    check_offset_only(s, "/tmp", 0x7f0000000000ull, NULL, 0, 0x40);

    /* The right file with the wrong build-id (rebuilt since recording): trust nothing in it. */
    void *ra = symtest_inline_outer(2);
    struct found_module fm = find_module(ra);
    uint8_t wrong[20];
    memset(wrong, 0xab, sizeof(wrong));
    check_offset_only(s, fm.path, fm.bias, wrong, sizeof(wrong),
                      (uint64_t)(uintptr_t)ra - 1 - fm.bias);
    symbolize_free(s);
    symbolize_free(NULL);
}

int main(void)
{
    /* Keep libdwfl from asking debuginfod servers for the files the test leaves out. */
    unsetenv("DEBUGINFOD_URLS");
    test_inline_chain();
    test_cxx_names();
    test_shared_library();
    test_build_id_debug_dir();
    test_nonzero_vaddr();
    test_offset_only();
    return check_summary("test_symbolize");
}
