// SPDX-License-Identifier: MIT
/* The symbolizer's shared state and the calls between its seven files:
 * symbolize.c (public API, result cache, resolving one ip), sym_module.c
 * (finding and opening a module's ELF and debug files), sym_symtab.c (the
 * ELF symbols by address), sym_cache.c (the frames cached on disk),
 * sym_names.c (function names and call sites),
 * sym_scopes.c (which DWARF scopes contain an address) and sym_strings.c
 * (hashing, string interning). Calls go one way: symbolize.c calls the
 * other six, sym_names.c and sym_cache.c call sym_strings.c. Internal to analyzer/: only
 * these files and their unit tests include it. Out of memory ends the tool
 * (util.h's xmalloc family), like everywhere else in the analyzer. */
#ifndef SYMBOLIZE_INTERNAL_H
#define SYMBOLIZE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "symbolize.h"

#define MAX_BUILD_ID 64

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

/* A file's identity for the cache on disk (sym_cache.c). */
struct stamp {
    uint64_t dev, ino, size, mtime_s, mtime_ns;
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
    /* The ELF symbols sorted by address (sym_symtab.c), built on the first lookup; NULL with
     * symtab_built set: libdwfl's own search is used (see sym_symtab_build). */
    bool symtab_built;
    struct sym_symtab *symtab;
    /* The cache on disk: looked at before the first lookup (with the file's stamp then), and
     * written at the end when a lookup had to be resolved. */
    bool cache_checked;
    bool cache_stamped;
    bool cache_dirty;
    struct stamp cache_stamp;
    /* Own CU index, built on the first miss of dwfl_module_addrdie() (see sym_find_cu). */
    bool cu_index_built;
    struct range_table cus;
    /* Function indexes of the CUs looked into so far, sorted by key (see sym_find_function). */
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
     * debug-file search, so both live here for the whole session. */
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

    char *cache_dir; /* the cache on disk (sym_cache.c); NULL: none */

    struct symbolize_stats stats;
};

/* ---- sym_module.c ---- */

/** Find and open module `index`'s file (or its debug file by build-id); sets its state. */
void sym_open_module(struct symbolizer *s, int index);

/* ---- sym_symtab.c ---- */

/** A module's symbols by address. */
struct sym_symtab;

/**
 * Read the symbol table of `mod` (through libdwfl) once and sort it. NULL when the module needs
 * libdwfl's own search (ppc64 function descriptors, which libdwfl resolves); a module without
 * symbols gives an index that names nothing, as libdwfl does. Free it with sym_symtab_free().
 */
struct sym_symtab *sym_symtab_build(Dwfl_Module *mod);
/**
 * The name dwfl_module_addrinfo(mod, addr) gives, the same string, found by binary search:
 * NULL when no symbol names addr. Not thread-safe (a scratch vector lives in the index).
 */
const char *sym_symtab_lookup(struct sym_symtab *t, uint64_t addr);
/** Free the index; accepts NULL. */
void sym_symtab_free(struct sym_symtab *t);

/* ---- sym_cache.c ---- */

/** What symbolize_set_cache_default() last set; NULL: no cache. */
const char *sym_cache_default(void);
/** The stamp of the file at `path` now: 0, or -1 when it is not a regular file. */
int sym_cache_stamp(const char *path, struct stamp *st);
/** Hands the cached frames of one address on: `offset` is ip minus the module's bias; the
 * frames' strings live until the callback returns. */
typedef void (*sym_cache_add_fn)(void *ctx, uint64_t offset, const struct sym_frame *frames, int count);
/**
 * Read module `m`'s cache file under `dir` and call `add` for each of its addresses, if the
 * file is valid for the files as they are now (see sym_cache.c); a file that is not adds
 * nothing. Returns the number of addresses handed on.
 */
size_t sym_cache_load(const char *dir, const struct module *m, const char *debuginfo_path, sym_cache_add_fn add,
                      void *ctx);
/** One address's frames, for sym_cache_store(). */
struct sym_cache_item {
    uint64_t offset;
    const struct sym_frame *frames;
    uint32_t count;
};
/**
 * Write module `m`'s cache file under `dir` (made 0700 if missing) with the `n` items, replacing
 * the one there; nothing when the module has no DWARF, was not read from its recorded path, or
 * its file changed since its stamp was taken. Failures are silent: the cache is an optimisation.
 */
void sym_cache_store(const char *dir, const struct module *m, const char *debuginfo_path,
                     const struct sym_cache_item *items, size_t n);

/* ---- sym_names.c ---- */

/**
 * Interned name of a subprogram or inlined subroutine DIE (NULL `die`: of the ELF symbol alone):
 * the demangled linkage name, else the demangled `symbol`, else DW_AT_name qualified by its
 * namespaces and classes, else the raw name. NULL when nothing names it.
 */
const char *sym_frame_name(struct symbolizer *s, Dwarf_Die *die, const char *symbol);
/** Where the inlined subroutine `die` was called from: file (NULL if unknown) and line (0). */
void sym_call_site(Dwarf_Die *die, const char **file, unsigned *line);

/* ---- sym_strings.c ---- */

/** A 64-bit finalizer for hash tables keyed by addresses. */
uint64_t sym_mix64(uint64_t x);
/** One copy of `str` for the symbolizer's lifetime; NULL for a NULL `str`. */
const char *sym_intern(struct symbolizer *s, const char *str);
/** Free every interned string (symbolize_free()). */
void sym_strings_release(struct symbolizer *s);

/* ---- sym_scopes.c ---- */

/** The CU DIE covering ip: 1 and *cu, *dwbias filled; 0 if none. */
int sym_find_cu(struct module *m, uint64_t ip, Dwarf_Die *cu, Dwarf_Addr *dwbias);
/** The concrete function DIE containing addr in the CU `root`, or NULL; indexes the CU once. */
Dwarf_Die *sym_find_function(struct module *m, Dwarf_Die *root, Dwarf_Addr addr);
/** Append `die` to the vector. */
void sym_die_vec_push(struct die_vec *dv, const Dwarf_Die *die);
/** Append the scopes inside function `fn` that contain addr to `path`, outermost first. */
void sym_find_scopes(Dwarf_Die *fn, Dwarf_Addr addr, struct die_vec *path);
/** Release a module's CU and function indexes. */
void sym_release_indexes(struct module *m);

#endif
