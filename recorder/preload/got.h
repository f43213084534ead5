// SPDX-License-Identifier: MIT
/* got.c: rewriting the GOT slots through which a loaded object calls
 * functions of other objects, and putting the old values back. Used to
 * route a library opened with RTLD_DEEPBIND through the recorder's hooks
 * (dlopen_hook.c), and meant for attaching to a running process too: install
 * hooks in every loaded object, later remove them. x86-64 ELF only
 * (R_X86_64_JUMP_SLOT and R_X86_64_GLOB_DAT in DT_JMPREL and DT_RELA; DT_REL
 * tables, used by other architectures, are not read). Runs inside the
 * target: never calls malloc or stdio. */
#ifndef RECORDER_GOT_H
#define RECORDER_GOT_H

#include <link.h>
#include <stdint.h>

#include "hidden.h"

/* One loaded object, as dl_iterate_phdr describes it. */
struct got_module {
    uintptr_t bias; /* load bias: slot address = bias + r_offset */
    const ElfW(Phdr) * phdr;
    int phnum;
    const ElfW(Dyn) * dynamic; /* NULL: no PT_DYNAMIC, nothing to patch */
    uintptr_t lo, hi; /* its loadable segments span [lo, hi) */
    const char *name;
};

/* Errors of got_patch(), negative. */
enum got_error {
    GOT_E_FORMAT = -1, /* dynamic section unusable (DT_PLTREL not DT_RELA, no symbol table) */
    GOT_E_FULL = -2, /* no room left to remember old values: slot left alone */
    GOT_E_PROTECT = -3, /* mprotect refused to make a read-only GOT page writable */
};

/** Describe the object `info` for the calls below. Reads only `info`'s
 * program headers; never fails (an object without PT_DYNAMIC gets NULL). */
HIDDEN void got_module_from_phdr(struct got_module *m, const struct dl_phdr_info *info);

/* One GOT slot as got_patch() shows it to the caller's choose(). */
struct got_slot {
    uintptr_t addr; /* the slot: bias + r_offset */
    void *cur; /* its present content */
    int name; /* index into got_patch()'s names */
    int defined_here; /* the module defines that symbol itself */
};

/** Decide the fate of one slot of module `m`: return the value to write
 * into it, or NULL to leave it. Runs under got.c's lock, so it must call
 * neither got_* nor the dynamic loader (dlsym, dladdr take the loader's
 * lock, which a library constructor calling dlopen holds while it waits
 * for ours): look everything up before calling got_patch(). */
typedef void *(*got_choose_fn)(void *ctx, const struct got_module *m, const struct got_slot *slot);

/** For every R_X86_64_JUMP_SLOT and R_X86_64_GLOB_DAT relocation of `m`
 * whose symbol is one of names[0..n), ask choose() and write what it
 * returns into the slot (bias + r_offset). A slot in the object's RELRO
 * range is made writable for the write and read-only again. The old value
 * is remembered for got_restore(); a slot already rewritten keeps its first
 * remembered value. Returns the number of slots written (0 is normal), or
 * a GOT_E_* code; slots written before an error stay written and
 * remembered. Thread-safe (one process-wide lock, never taken on the
 * allocation path); not async-signal-safe. The store into a slot is one
 * aligned 8-byte write, so a thread calling through it concurrently sees
 * either the old or the new function. */
HIDDEN int got_patch(const struct got_module *m, const char *const *names, int n, got_choose_fn choose, void *ctx);

/** Put back the old value of every slot got_patch() wrote in module `m`
 * (in every module when `m` is NULL), provided the module is still loaded
 * and the slot still holds what was written; then forget those slots.
 * Remembered slots of modules no longer loaded are forgotten without being
 * touched. Returns the number of slots restored. Thread-safe like
 * got_patch(). */
HIDDEN int got_restore(const struct got_module *m);

/** Forget the remembered slots of modules no longer loaded, so that an
 * object later mapped at the same address is never written. Thread-safe. */
HIDDEN void got_forget_unloaded(void);

/** Number of slots currently remembered (for tests and logs). */
HIDDEN int got_count(void);

#endif
