// SPDX-License-Identifier: MIT
/* memrec.h: tell memrec about the blocks of your own pool allocators.
 *
 * Copyright (c) the memrec authors. MIT licence: use it in any program.
 *
 * A program that carves blocks out of its own arenas or pools calls
 * memrec_pool_alloc() for each block it hands out, memrec_pool_free() for
 * each block it takes back, and memrec_pool_reset() when it releases every
 * block of a pool at once. Under memrec these blocks count like malloc'ed
 * ones (calls, temporaries, peak, leaks) with the stack of the call, and
 * show as pool_alloc / pool_free. Without memrec the calls do nothing.
 *
 * How to use: include this header (C or C++, GCC or clang, Linux), and do
 * not link anything: no memrec library is needed at build or run time.
 *
 *     void *arena_alloc(struct arena *a, size_t n)
 *     {
 *         void *p = a->next;  ... carve n bytes ...
 *         memrec_pool_alloc(a, p, n);   // once the block is yours
 *         return p;
 *     }
 *     void arena_reset(struct arena *a)
 *     {
 *         memrec_pool_reset(a);         // before the memory is handed out again
 *         a->next = a->start;
 *     }
 *
 * (With threads sharing a pool, that order keeps every free after its
 * allocation and before the block's next allocation.) docs/capture.md has
 * a complete example.
 *
 * Blocks are known by (pool, address): a block may have the same address as
 * its pool or as another pool's block. A pool is any address that names it,
 * usually its control structure.
 *
 * Counting twice. If the pool's own memory comes from malloc (or new), that
 * chunk is recorded too, and its bytes count once as the chunk and again
 * as the blocks inside it. Get pool chunks with mmap (not part of memrec's
 * heap figures) to see only the blocks, or do not report the blocks to see
 * only the chunks.
 *
 * Cost. The first call in each translation unit (source file) asks the
 * dynamic loader, once, whether memrec's recorder is loaded:
 * dlsym(RTLD_DEFAULT, "memrec_pool_api_v1"), a few microseconds, and the
 * answer is kept in a static variable. When the program runs without
 * memrec, every later call is one load and one well-predicted branch (see
 * docs/capture.md for the measured figure). Under memrec a call costs
 * about what a recorded malloc costs: a stack walk and a few bytes sent.
 *
 * Why dlsym and not a weak symbol: a weak undefined function is resolved
 * at run time only in position-independent code; in an executable built
 * with -fno-pie (or -no-pie from non-PIC objects) the linker fixes it to 0
 * and the calls would silently do nothing under memrec. dlsym works in
 * every kind of executable and shared library. It is part of glibc's libc
 * from 2.34 on; with an older glibc link with -ldl.
 *
 * Thread safety: every function may be called from any thread. The first
 * call of a translation unit (the look-up) is not async-signal-safe, and
 * when memrec is absent it may allocate (dlsym's error message, which is
 * cleared at once); call memrec_pool_init() early, for instance at the
 * start of main(), to do it there. The recorder ignores calls made while
 * it is itself recording (from inside a malloc hook of the same thread).
 */
#ifndef MEMREC_H
#define MEMREC_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) && defined(__linux__)
#include <dlfcn.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* What the recorder exports under the name memrec_pool_api_v1. Fields are
 * only ever appended; `size` says how many are there. */
struct memrec_pool_api {
    uint32_t version; /* 1 */
    uint32_t size; /* sizeof the recorder's struct */
    void (*pool_alloc)(const void *pool, const void *ptr, size_t size);
    void (*pool_free)(const void *pool, const void *ptr);
    void (*pool_reset)(const void *pool);
};

#if defined(__GNUC__) && defined(__linux__)

#ifndef RTLD_DEFAULT
#define MEMREC_RTLD_DEFAULT ((void *)0) /* glibc's and musl's value; dlfcn.h defines it under _GNU_SOURCE */
#else
#define MEMREC_RTLD_DEFAULT RTLD_DEFAULT
#endif

/* The cached answer of this translation unit: 0 = not asked yet,
 * 1 = memrec is absent, anything else = the recorder's table. One word
 * with an "absent" value that is not 0 keeps the absent case to a single
 * compare. Relaxed atomics: two threads asking at once store the same
 * value, and the table itself is never written after the loader set it up. */
static inline uintptr_t *memrec_api_slot(void)
{
    static uintptr_t slot;
    return &slot;
}

static inline uintptr_t memrec_api_lookup(void)
{
    void *sym = dlsym(MEMREC_RTLD_DEFAULT, "memrec_pool_api_v1");
    uintptr_t v = 1;
    if (sym) {
        const struct memrec_pool_api *api = (const struct memrec_pool_api *)sym;
        if (api->version == 1 && api->size >= sizeof(struct memrec_pool_api)) {
            v = (uintptr_t)sym;
        }
    } else {
        (void)dlerror(); /* do not leave our failed look-up for the program's dlerror() */
    }
    __atomic_store_n(memrec_api_slot(), v, __ATOMIC_RELAXED);
    return v;
}

/** The recorder's table, or NULL when the program runs without memrec. */
static inline const struct memrec_pool_api *memrec_api(void)
{
    uintptr_t v = __atomic_load_n(memrec_api_slot(), __ATOMIC_RELAXED);
    if (v == 1) {
        return 0;
    }
    if (__builtin_expect(v == 0, 0)) {
        v = memrec_api_lookup();
        if (v == 1) {
            return 0;
        }
    }
    return (const struct memrec_pool_api *)v;
}

/** Do the one-time look-up now (optional; see "Thread safety" above).
 * Returns 1 when the program runs under memrec, 0 otherwise. */
static inline int memrec_pool_init(void)
{
    return memrec_api() != 0;
}

/** `ptr` is a new block of `size` bytes handed out by `pool`. Recorded with
 * the caller's stack as an allocation of kind pool_alloc. */
static inline void memrec_pool_alloc(const void *pool, const void *ptr, size_t size)
{
    const struct memrec_pool_api *api = memrec_api();
    if (api) {
        api->pool_alloc(pool, ptr, size);
    }
}

/** The block `ptr` of `pool` is given back. A block memrec does not know
 * (never reported, or already freed) is ignored. */
static inline void memrec_pool_free(const void *pool, const void *ptr)
{
    const struct memrec_pool_api *api = memrec_api();
    if (api) {
        api->pool_free(pool, ptr);
    }
}

/** Every block of `pool` still live is freed, newest first, as if by one
 * memrec_pool_free() each. Use it for an arena reset and when a pool is
 * destroyed. */
static inline void memrec_pool_reset(const void *pool)
{
    const struct memrec_pool_api *api = memrec_api();
    if (api) {
        api->pool_reset(pool);
    }
}

#else /* not GCC or clang on Linux: memrec cannot run there; the calls vanish */

static inline int memrec_pool_init(void)
{
    return 0;
}
static inline void memrec_pool_alloc(const void *pool, const void *ptr, size_t size)
{
    (void)pool;
    (void)ptr;
    (void)size;
}
static inline void memrec_pool_free(const void *pool, const void *ptr)
{
    (void)pool;
    (void)ptr;
}
static inline void memrec_pool_reset(const void *pool)
{
    (void)pool;
}

#endif

#ifdef __cplusplus
}
#endif

#endif
