// SPDX-License-Identifier: MIT
/* The interposed mapping functions: mmap, mmap64, munmap, mremap, brk and
 * sbrk. Each forwards to the next definition and, for anonymous memory the
 * program maps itself, records the change with its stack. Calls made while
 * the recorder runs on this thread (tstate.in_hook) pass through
 * unrecorded: the allocator under our malloc hook, libunwind and the
 * recorder's own mem_map never show, so nothing is counted twice. Before
 * the next definitions are known, the kernel is called directly. */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "buffer.h"
#include "buffer_map.h"
#include "guard.h"
#include "init.h"
#include "log.h"
#include "memfmt.h"
#include "memwire.h"

#define EXPORT __attribute__((visibility("default")))

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*munmap_fn)(void *, size_t);
typedef void *(*mremap_fn)(void *, size_t, size_t, int, ...);
typedef int (*brk_fn)(void *);
typedef void *(*sbrk_fn)(intptr_t);

static struct {
    mmap_fn mmap, mmap64;
    munmap_fn munmap;
    mremap_fn mremap;
    brk_fn brk;
    sbrk_fn sbrk;
    uintptr_t page_mask;
} next;

static atomic_int resolved;
static __thread int resolving __attribute__((tls_model("initial-exec")));

/* dlsym may map memory itself (its error buffer, a loader table): those
 * calls come back here with `resolving` set and go straight to the kernel.
 * So do calls made inside the recorder or under our malloc hook before
 * resolution: dlsym may allocate, and the allocator calling mmap may hold
 * its own lock. Threads racing here all store the same pointers. */
static int resolve_maps(void)
{
    if (__builtin_expect(atomic_load_explicit(&resolved, memory_order_acquire), 1)) {
        return 1;
    }
    if (resolving || tstate.in_hook) {
        return 0;
    }
    resolving = 1;
    int saved = tstate.in_hook;
    tstate.in_hook = 1;
    next.mmap = (mmap_fn)dlsym(RTLD_NEXT, "mmap");
    next.mmap64 = (mmap_fn)dlsym(RTLD_NEXT, "mmap64");
    next.munmap = (munmap_fn)dlsym(RTLD_NEXT, "munmap");
    next.mremap = (mremap_fn)dlsym(RTLD_NEXT, "mremap");
    next.brk = (brk_fn)dlsym(RTLD_NEXT, "brk");
    next.sbrk = (sbrk_fn)dlsym(RTLD_NEXT, "sbrk");
    if (!next.mmap64) {
        next.mmap64 = next.mmap;
    }
    next.page_mask = (uintptr_t)sysconf(_SC_PAGESIZE) - 1;
    tstate.in_hook = saved;
    resolving = 0;
    if (!next.mmap || !next.munmap || !next.mremap || !next.brk || !next.sbrk) {
        log_msg("cannot find the next mapping functions; mappings are not recorded", NULL);
        return 0; /* stays unresolved: every call goes to the kernel */
    }
    atomic_store_explicit(&resolved, 1, memory_order_release);
    return 1;
}

/* Resolved when the library is loaded, before the program runs, so that
 * the kernel fallback above only serves calls made before that. */
__attribute__((constructor)) static void maphooks_init(void)
{
    resolve_maps();
}

/* The kernel maps whole pages. */
static size_t pages(size_t len)
{
    return len > SIZE_MAX - next.page_mask ? len : (len + next.page_mask) & ~next.page_mask;
}

static inline __attribute__((always_inline)) void *mmap_common(mmap_fn f, void *addr, size_t len, int prot, int flags,
                                                               int fd, off_t off)
{
    if (!hook_enter(0)) {
        return f(addr, len, prot, flags, fd, off);
    }
    void *p = f(addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED) {
        int saved = errno;
        if (flags & MAP_ANONYMOUS) {
            buffer_map((uintptr_t)p, pages(len));
        } else if (flags & MAP_FIXED) {
            /* A file placed over recorded anonymous memory replaces it. */
            uint64_t s = buffer_map_begin();
            buffer_map_end(s, MEMFMT_W_UNMAP, MEMFMT_MK_MMAP, (uintptr_t)p, pages(len), 0, 0);
        }
        errno = saved;
    }
    hook_leave();
    return p;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (!resolve_maps()) {
        return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
    }
    return mmap_common(next.mmap, addr, len, prot, flags, fd, off);
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (!resolve_maps()) {
        return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
    }
    return mmap_common(next.mmap64, addr, len, prot, flags, fd, off);
}

EXPORT int munmap(void *addr, size_t len)
{
    if (!resolve_maps()) {
        return (int)syscall(SYS_munmap, addr, len);
    }
    if (!hook_enter(0)) {
        return next.munmap(addr, len);
    }
    uint64_t s = buffer_map_begin();
    int rc = next.munmap(addr, len);
    int saved = errno;
    if (rc == 0) {
        buffer_map_end(s, MEMFMT_W_UNMAP, MEMFMT_MK_MUNMAP, (uintptr_t)addr, pages(len), 0, 0);
    } else {
        buffer_map_cancel(s);
    }
    errno = saved;
    hook_leave();
    return rc;
}

EXPORT void *mremap(void *old, size_t old_len, size_t len, int flags, ...)
{
    void *want = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        want = va_arg(ap, void *);
        va_end(ap);
    }
    if (!resolve_maps()) {
        return (void *)syscall(SYS_mremap, old, old_len, len, flags, want);
    }
    if (!hook_enter(0)) {
        return next.mremap(old, old_len, len, flags, want);
    }
    /* Numbered before the call (the old range may be gone once it returns)
     * and after it (the new range exists): see buffer_map_end. */
    uint64_t s = buffer_map_begin();
    void *p = next.mremap(old, old_len, len, flags, want);
    int saved = errno;
    if (p != MAP_FAILED) {
        buffer_map_end(s, MEMFMT_W_MREMAP, MEMFMT_MK_MREMAP, (uintptr_t)old, pages(old_len), (uintptr_t)p, pages(len));
    } else {
        buffer_map_cancel(s);
    }
    errno = saved;
    hook_leave();
    return p;
}

/* Before resolution brk is the bare system call, which answers the break
 * it ended at; glibc's brk answers 0 or -1. */
static int raw_brk(void *addr)
{
    if ((uintptr_t)syscall(SYS_brk, addr) < (uintptr_t)addr) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

EXPORT int brk(void *addr)
{
    if (!resolve_maps()) {
        return raw_brk(addr);
    }
    if (!hook_enter(0)) {
        return next.brk(addr);
    }
    uint64_t s = buffer_map_begin();
    uintptr_t old = (uintptr_t)next.sbrk(0);
    int rc = next.brk(addr);
    int saved = errno;
    if (rc == 0 && (uintptr_t)addr != old) {
        buffer_map_end(s, MEMFMT_W_BRK, MEMFMT_MK_BRK, old, 0, (uintptr_t)addr, 0);
    } else {
        buffer_map_cancel(s);
    }
    errno = saved;
    hook_leave();
    return rc;
}

EXPORT void *sbrk(intptr_t inc)
{
    if (!resolve_maps()) {
        /* Only dlsym's own calls arrive here; it never moves the break.
         * Without glibc's record of the break there is no safe answer. */
        errno = ENOMEM;
        return (void *)-1;
    }
    if (inc == 0 || !hook_enter(0)) {
        return next.sbrk(inc);
    }
    uint64_t s = buffer_map_begin();
    void *old = next.sbrk(inc);
    int saved = errno;
    if (old != (void *)-1) {
        buffer_map_end(s, MEMFMT_W_BRK, MEMFMT_MK_BRK, (uintptr_t)old, 0, (uintptr_t)old + (uintptr_t)inc, 0);
    } else {
        buffer_map_cancel(s);
    }
    errno = saved;
    hook_leave();
    return old;
}
