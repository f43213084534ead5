// SPDX-License-Identifier: MIT
/* Finds the objects loaded at start only because the user preloaded them
 * (a tcmalloc or jemalloc in LD_PRELOAD, and what it alone brings in, such
 * as libstdc++ for a C program), so that memrec can set apart what their
 * initialization allocates. Runs inside the target: reads the loader's
 * data in place, never allocates. */
#define _GNU_SOURCE
#include "preloaded.h"

#include <elf.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>

#include "mem.h"
#include "memfmt.h"

#define MAX_START_OBJECTS 512

struct start_object {
    uintptr_t bias;
    const void *phdr; /* with bias, identifies one mapping of one object */
    const char *name; /* dlpi_name: "" for the executable */
    const ElfW(Dyn) * dyn; /* its dynamic section, NULL if none */
    uint64_t lo, hi; /* span of its loadable segments */
    int reachable; /* through DT_NEEDED from the executable or from us */
    uint32_t flags; /* enum memfmt_module_flags */
};

static struct start_object *objs; /* mmap'd */
static int nobjs;
static int classified;

static int collect(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    if (nobjs >= MAX_START_OBJECTS) {
        return 1;
    }
    struct start_object *o = &objs[nobjs++];
    o->bias = info->dlpi_addr;
    o->phdr = info->dlpi_phdr;
    o->name = info->dlpi_name ? info->dlpi_name : "";
    o->lo = UINT64_MAX;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC) {
            o->dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
        } else if (ph->p_type == PT_LOAD) {
            uint64_t lo = info->dlpi_addr + ph->p_vaddr;
            o->lo = lo < o->lo ? lo : o->lo;
            o->hi = lo + ph->p_memsz > o->hi ? lo + ph->p_memsz : o->hi;
        }
    }
    return 0;
}

static int holds(const struct start_object *o, const void *addr)
{
    uint64_t a = (uint64_t)(uintptr_t)addr;
    return a >= o->lo && a < o->hi;
}

/* The string table of an object. glibc rewrites DT_STRTAB to an absolute
 * address in writable dynamic sections; where it does not (read-only
 * dynamic sections), the value is still relative to the load bias. */
static const char *strtab(const struct start_object *o)
{
    for (const ElfW(Dyn) *d = o->dyn; d && d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_STRTAB) {
            uintptr_t p = (uintptr_t)d->d_un.d_ptr;
            return (const char *)(p < o->bias ? p + o->bias : p);
        }
    }
    return NULL;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The object a DT_NEEDED entry names: by its DT_SONAME, its path, or the
 * last part of its path (what the loader matched it by). */
static struct start_object *find_needed(const char *needed)
{
    for (int i = 0; i < nobjs; i++) {
        struct start_object *o = &objs[i];
        if (*o->name && (strcmp(o->name, needed) == 0 || strcmp(base_name(o->name), needed) == 0)) {
            return o;
        }
        const char *str = strtab(o);
        for (const ElfW(Dyn) *d = o->dyn; str && d && d->d_tag != DT_NULL; d++) {
            if (d->d_tag == DT_SONAME && strcmp(str + d->d_un.d_val, needed) == 0) {
                return o;
            }
        }
    }
    return NULL;
}

/* Mark everything reachable from `o` through DT_NEEDED. The closure is
 * found by repeated passes: at start-up there are tens of objects, and this
 * runs once. */
static void reach_from(struct start_object *o)
{
    o->reachable = 1;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < nobjs; i++) {
            const struct start_object *from = &objs[i];
            const char *str = strtab(from);
            if (!from->reachable || !str) {
                continue;
            }
            for (const ElfW(Dyn) *d = from->dyn; d->d_tag != DT_NULL; d++) {
                if (d->d_tag != DT_NEEDED) {
                    continue;
                }
                struct start_object *to = find_needed(str + d->d_un.d_val);
                if (to && !to->reachable) {
                    to->reachable = 1;
                    changed = 1;
                }
            }
        }
    }
}

void preloaded_classify(void)
{
    if (classified) {
        return;
    }
    classified = 1;
    objs = mem_map(MAX_START_OBJECTS * sizeof *objs);
    if (!objs) {
        return;
    }
    dl_iterate_phdr(collect, NULL);
    if (nobjs == 0) {
        return;
    }
    uintptr_t ldso_base = (uintptr_t)getauxval(AT_BASE);
    uintptr_t vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
    /* dl_iterate_phdr lists the executable first. Our own library and what
     * it needs are memrec's, not the user's: reachable too. */
    reach_from(&objs[0]);
    for (int i = 0; i < nobjs; i++) {
        if (holds(&objs[i], (const void *)preloaded_classify)) {
            reach_from(&objs[i]);
        }
    }
    for (int i = 0; i < nobjs; i++) {
        struct start_object *o = &objs[i];
        int ldso = ldso_base && o->bias == ldso_base;
        int never = ldso || (vdso && holds(o, (const void *)vdso)) || holds(o, (const void *)gnu_get_libc_version);
        o->flags = ldso ? MEMFMT_MODF_LOADER : 0;
        if (!o->reachable && !never && o->dyn) {
            o->flags |= MEMFMT_MODF_PRELOAD_ONLY;
        }
    }
}

uint32_t preloaded_flags(uintptr_t bias, const void *phdr)
{
    for (int i = 0; i < nobjs; i++) {
        if (objs[i].bias == bias && objs[i].phdr == phdr) {
            return objs[i].flags;
        }
    }
    return 0;
}
