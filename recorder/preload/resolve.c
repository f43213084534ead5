// SPDX-License-Identifier: MIT
/* Finds the next allocator in the chain (glibc, or a malloc the user
 * preloaded before us) with dlsym(RTLD_NEXT). dlsym itself may allocate, so
 * until resolution is done allocations come from a static bootstrap pool
 * whose blocks are never returned. */
#define _GNU_SOURCE
#include "resolve.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "got.h"
#include "log.h"

HIDDEN struct real_funcs real;

HIDDEN _Alignas(64) unsigned char resolve_pool[RESOLVE_POOL_SIZE];
static atomic_size_t pool_used;
static __thread int resolving __attribute__((tls_model("initial-exec")));

/* Each pool block is preceded by its size, for realloc out of the pool. */
void *resolve_pool_alloc(size_t size, size_t align)
{
    if (align < 16) {
        align = 16;
    }
    for (;;) {
        size_t old = atomic_load(&pool_used);
        size_t start = (old + 16 + align - 1) & ~(align - 1);
        if (start + size > RESOLVE_POOL_SIZE || size > RESOLVE_POOL_SIZE) {
            return NULL;
        }
        if (atomic_compare_exchange_weak(&pool_used, &old, start + size)) {
            memcpy(resolve_pool + start - sizeof(size_t), &size, sizeof size);
            return resolve_pool + start;
        }
    }
}

size_t resolve_pool_size(const void *p)
{
    size_t n;
    memcpy(&n, (const unsigned char *)p - sizeof(size_t), sizeof n);
    return n;
}

int resolve_in_progress(void)
{
    return resolving;
}

/* Preloaded, the next definition is the one after us (RTLD_NEXT). Loaded
 * into a running process by memrec --pid, we are not in the global scope
 * at all, and the definition the program uses is simply the first one
 * (RTLD_DEFAULT). */
static int use_default;

void resolve_use_default(void)
{
    use_default = 1;
}

/* What the executable says of one name: bit 0, it imports it (a JUMP_SLOT
 * or GLOB_DAT relocation of an undefined symbol); bit 1, it defines it. */
struct exe_probe {
    const char *name;
    int seen;
};

static void *probe_choose(void *ctx, const struct got_module *m, const struct got_slot *slot)
{
    (void)m;
    struct exe_probe *q = ctx;
    q->seen |= slot->defined_here ? 2 : 1;
    return NULL; /* look, never write */
}

static int probe_exe(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct exe_probe *q = data;
    struct got_module m;
    got_module_from_phdr(&m, info);
    got_patch(&m, &q->name, 1, probe_choose, q);
    return 1; /* the first object is the executable: stop there */
}

/* A non-PIE executable that takes the address of malloc (Debian's python3
 * is one) gets a canonical PLT entry: its dynamic symbol "malloc" is
 * undefined there but has a value, the address of its PLT stub, and
 * dlsym(RTLD_DEFAULT) returns that stub. The stub jumps through the
 * executable's own GOT slot, which the attach points at our hook: our
 * "next malloc" would be ourselves, forever. So when the first definition
 * lies in the executable and the executable only imports the name, the
 * next definition is the first one found after it, in load order. */
static void *after_exe_stub(void *p, const char *name)
{
    Dl_info info;
    struct link_map *lm = NULL;
    if (!dladdr1(p, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm || lm->l_prev) {
        return p;
    }
    struct exe_probe q = {name, 0};
    dl_iterate_phdr(probe_exe, &q);
    if (q.seen != 1) {
        return p; /* defined by the executable itself, or not its stub */
    }
    for (struct link_map *l = lm->l_next; l; l = l->l_next) {
        /* A handle of its own, not the link map: the vDSO's map has no
         * search scope, and dlsym on it would crash. dlmopen in the base
         * namespace is glibc's dlopen without our dlopen hook (dlopen_hook.c,
         * above this file): with RTLD_NOLOAD and a loaded object's own
         * name the caller plays no part, so the handle is the same. */
        void *h = l->l_name && l->l_name[0] ? dlmopen(LM_ID_BASE, l->l_name, RTLD_LAZY | RTLD_NOLOAD) : NULL;
        if (!h) {
            continue;
        }
        void *f = dlsym(h, name);
        dlclose(h);
        Dl_info fi;
        struct link_map *fl = NULL;
        if (f && f != p && dladdr1(f, &fi, (void **)&fl, RTLD_DL_LINKMAP) && fl && fl != lm) {
            return f;
        }
    }
    return p;
}

static void *next(const char *name)
{
    if (!use_default) {
        return dlsym(RTLD_NEXT, name);
    }
    void *p = dlsym(RTLD_DEFAULT, name);
    return p ? after_exe_stub(p, name) : NULL;
}

static void *must(const char *name)
{
    void *f = next(name);
    if (!f) {
        /* The one fatal error: without the real allocator nothing can run. */
        log_msg("cannot find the real allocator function", name);
        /* Not _exit(): that is our hook (init.c, above this file), which
         * flushes the recording first; resolution ends before any
         * recording starts (init_start() and memrec_attach() resolve before
         * buffer_setup()), so there is nothing to flush. */
        syscall(SYS_exit_group, 127);
        __builtin_unreachable();
    }
    return f;
}

void resolve_init(void)
{
    if (real.free || resolving) {
        return;
    }
    resolving = 1;
    /* Optional ones may be missing in another malloc; fall back to glibc's
     * behaviour through the ones that exist. Order matters: free and malloc
     * last, because real.free being set is what says resolution is done. */
    real.calloc = must("calloc");
    real.realloc = must("realloc");
    real.reallocarray = next("reallocarray");
    real.posix_memalign = must("posix_memalign");
    real.aligned_alloc = next("aligned_alloc");
    real.memalign = next("memalign");
    real.valloc = next("valloc");
    real.pvalloc = next("pvalloc");
    real.malloc = must("malloc");
    void (*f)(void *) = must("free");
    atomic_thread_fence(memory_order_seq_cst);
    real.free = f;
    resolving = 0;
}

void *resolve_next(const char *name)
{
    return next(name);
}
