// SPDX-License-Identifier: MIT
/* The next allocator in the chain (resolve.c): the real malloc family found with dlsym, and
 * the static bootstrap pool that serves allocations before dlsym works. */
#ifndef RECORDER_RESOLVE_H
#define RECORDER_RESOLVE_H

#include <stddef.h>
#include <stdint.h>

#include "hidden.h"

struct real_funcs {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void *(*reallocarray)(void *, size_t, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
};

HIDDEN extern struct real_funcs real;

/** Resolve the real functions with dlsym(RTLD_NEXT). Safe to call from any
 * hook, any number of times; while it runs, allocations are served from a
 * static bootstrap pool. Aborts only if malloc/free cannot be found. */
HIDDEN void resolve_init(void);
/** True while resolve_init() is looking symbols up on this thread. */
HIDDEN int resolve_in_progress(void);
/** Bootstrap pool: allocation used before dlsym works. */
HIDDEN void *resolve_pool_alloc(size_t size, size_t align);
#define RESOLVE_POOL_SIZE (256u << 10)
/* The bootstrap pool itself (resolve.c), visible for the inline test below. */
HIDDEN extern unsigned char resolve_pool[RESOLVE_POOL_SIZE];

/** True if `p` came from the bootstrap pool (such blocks are never freed).
 * Inline: every free asks. */
static inline int resolve_pool_owns(const void *p)
{
    return (uintptr_t)p - (uintptr_t)resolve_pool < RESOLVE_POOL_SIZE;
}
/** Usable size of a pool block (for realloc out of the pool). */
HIDDEN size_t resolve_pool_size(const void *p);
/** From now on look the real functions up as the program sees them
 * (RTLD_DEFAULT): the recorder was loaded into a running process. */
HIDDEN void resolve_use_default(void);
/** Look up a C++ operator of the next library; NULL when none is loaded. */
HIDDEN void *resolve_next(const char *name);

#endif
