// SPDX-License-Identifier: MIT
/* Finds the next allocator in the chain (glibc, or a malloc the user
 * preloaded before us) with dlsym(RTLD_NEXT). dlsym itself may allocate, so
 * until resolution is done allocations come from a static bootstrap pool
 * whose blocks are never returned. */
#define _GNU_SOURCE
#include "recorder_internal.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static void *next(const char *name)
{
    return dlsym(use_default ? RTLD_DEFAULT : RTLD_NEXT, name);
}

static void *must(const char *name)
{
    void *f = next(name);
    if (!f) {
        /* The one fatal error: without the real allocator nothing can run. */
        log_msg("cannot find the real allocator function", name);
        _exit(127);
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
