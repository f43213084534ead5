// SPDX-License-Identifier: MIT
/* The interposed allocation functions: the malloc family and the C++
 * operators new/delete in all their forms. Each forwards to the next
 * definition in the chain and records the call; calls made while the
 * recorder itself is running on this thread (dlsym, libunwind, libstdc++'s
 * operator new calling malloc) pass straight through, so nothing is counted
 * twice and the recorder's own work never shows. Built with -fexceptions:
 * a throwing operator new must unwind through these frames. */
#define _GNU_SOURCE
#include "preload.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "callclock.h"
#include "buffer.h"
#include "guard.h"
#include "init.h"
#include "log.h"
#include "memfmt.h"
#include "options.h"
#include "resolve.h"
#include "sample.h"
#include "sigdefer.h"

#define EXPORT __attribute__((visibility("default")))

/* ---- entry and exit of a recorded call (hook_enter() in init.h) ---- */

/* Cleanup handler for the C++ operators: runs on return and on unwinding. */
static void leave_cleanup(int *recording)
{
    if (*recording == 1) {
        hook_leave();
    }
}

/* A call made by a signal handler that interrupted the recorder
 * (hook_enter_alloc() said HOOK_DEFER): queued, sent by the thread later.
 * Always inlined, so that the site is the exported function's caller. */
static inline __attribute__((always_inline)) void defer(unsigned op, unsigned kind, void *old, void *p, size_t size)
{
    sigdefer_add(op, kind, old, p, size, __builtin_return_address(0));
}

/* The real functions are unknown until dlsym has run; before that, and
 * while dlsym itself allocates, blocks come from the bootstrap pool. */
static inline int have_real(void)
{
    if (__builtin_expect(real.free != NULL, 1)) {
        return 1;
    }
    if (!resolve_in_progress()) {
        resolve_init();
    }
    return real.free != NULL;
}

/* An allocation made between hook_enter() and hook_leave(). When sampling,
 * most are only counted, inline (sample_skips() is never true otherwise);
 * the rest go to buffer_alloc(), which counts them and samples them.
 * Always inlined into the exported function, whose frame it notes for the
 * stack walk. */
static inline __attribute__((always_inline)) void record_alloc(unsigned kind, void *p, size_t size)
{
    if (__builtin_expect(sample_skips(size), 1)) {
        sample_count(size);
        return;
    }
    buffer_alloc(kind, p, size);
}

/* The sampling fast path of the allocation hooks: hook_enter() without
 * the start-up, options and frame it looks at, when sample_fast() says
 * none of them is needed. Then record_alloc() and fast_leave(). */
static inline __attribute__((always_inline)) int fast_enter(void)
{
    if (__builtin_expect(!sample_fast(), 0)) {
        return 0;
    }
    hook_mark_inside(__builtin_frame_address(0));
    return 1;
}

/* hook_leave() after fast_enter(). */
static inline __attribute__((always_inline)) void fast_leave(void)
{
    hook_leave();
}

/* ---- memrec --time: the forwarded calls, timed ----
 *
 * Only the call to the next allocator is timed, never the recorder's own
 * work. With --time off, each hook pays one predictable branch on
 * opts.time: the forwarded call is written out twice, timed and not, so
 * the untimed path is the one it was. The time goes to buffer_alloc() and
 * buffer_realloc_end() through tstate.ticks. */

/* Whether this allocation is timed: --time is on, it is recorded (rec is
 * 1), and, when sampling, it is sampled (sample_skips() says before the
 * call what record_alloc() decides after; it is never true when not
 * sampling, and the test of sample_rate keeps it out of that path). */
static inline __attribute__((always_inline)) int timed_alloc(int rec, size_t size)
{
    return __builtin_expect(opts.time, 0) && rec == 1 && !(opts.sample_rate && sample_skips(size));
}

static inline __attribute__((always_inline)) void *call_malloc(size_t size, int timed)
{
    if (timed) {
        uint64_t t0 = alloctime_now();
        void *p = real.malloc(size);
        tstate.ticks = alloctime_now() - t0;
        return p;
    }
    return real.malloc(size);
}

static inline __attribute__((always_inline)) void *call_calloc(size_t n, size_t size, int timed)
{
    if (timed) {
        uint64_t t0 = alloctime_now();
        void *p = real.calloc(n, size);
        tstate.ticks = alloctime_now() - t0;
        return p;
    }
    return real.calloc(n, size);
}

/* ---- the C allocation functions ---- */

EXPORT void *malloc(size_t size)
{
    if (fast_enter()) {
        void *p = call_malloc(size, timed_alloc(1, size));
        if (p) {
            record_alloc(MEMFMT_K_MALLOC, p, size);
        }
        fast_leave();
        return p;
    }
    if (!have_real()) {
        return resolve_pool_alloc(size, 16);
    }
    int rec = hook_enter_alloc(1);
    if (!rec) {
        return real.malloc(size);
    }
    void *p = call_malloc(size, timed_alloc(rec, size));
    if (rec == HOOK_DEFER) {
        if (p) {
            defer(SIGDEFER_ALLOC, MEMFMT_K_MALLOC, NULL, p, size);
        }
        return p;
    }
    if (p) {
        buffer_alloc(MEMFMT_K_MALLOC, p, size);
    }
    hook_leave();
    return p;
}

/* The part of free() that may record: out of line, so that the sampling
 * fast path has no frame to set up. No stack is taken for a free, so the
 * frame hook_enter() notes here instead of free()'s is never walked. */
static __attribute__((noinline)) void free_hooked(void *p)
{
    if (!have_real()) {
        return;
    }
    int rec = hook_enter_alloc(1);
    if (!rec) {
        real.free(p);
        return;
    }
    if (rec == HOOK_DEFER) {
        real.free(p);
        defer(SIGDEFER_FREE, MEMFMT_K_FREE, p, NULL, 0);
        return;
    }
    if (__builtin_expect(opts.time, 0)) {
        /* Written before the real call with its number (as every free,
         * see buffer.h), its time added after it, all in one call. */
        buffer_free_timed(MEMFMT_K_FREE, p, real.free);
    } else {
        buffer_free(MEMFMT_K_FREE, p);
        real.free(p);
    }
    hook_leave();
}

EXPORT void free(void *p)
{
    if (!p || resolve_pool_owns(p)) {
        return;
    }
    /* Sampling, and not a sampled block: nothing to record. Unless a
     * signal handler's allocations wait in this thread's queue (sampled
     * only when sent): the block may be one of them. */
    if (sample_free_unseen(p) && real.free && !tstate.deferred) {
        real.free(p);
        return;
    }
    free_hooked(p);
}

EXPORT void *calloc(size_t n, size_t size)
{
    if (fast_enter()) {
        void *p = call_calloc(n, size, timed_alloc(1, n * size));
        if (p) {
            record_alloc(MEMFMT_K_CALLOC, p, n * size);
        }
        fast_leave();
        return p;
    }
    if (!have_real()) {
        size_t total;
        if (__builtin_mul_overflow(n, size, &total)) {
            return NULL;
        }
        return resolve_pool_alloc(total, 16); /* static storage is zeroed */
    }
    int rec = hook_enter_alloc(1);
    if (!rec) {
        return real.calloc(n, size);
    }
    void *p = call_calloc(n, size, timed_alloc(rec, n * size));
    if (rec == HOOK_DEFER) {
        if (p) {
            defer(SIGDEFER_ALLOC, MEMFMT_K_CALLOC, NULL, p, n * size);
        }
        return p;
    }
    if (p) {
        buffer_alloc(MEMFMT_K_CALLOC, p, n * size);
    }
    hook_leave();
    return p;
}

/* realloc of a block from the bootstrap pool: move it to the real heap. */
/* Move a bootstrap pool block's contents into its replacement p. */
static void *copy_from_pool(void *p, void *old, size_t size)
{
    if (p && old) {
        size_t keep = resolve_pool_size(old);
        memcpy(p, old, keep < size ? keep : size);
    }
    return p;
}

/* The next allocator's realloc or reallocarray (size is n * element). */
static void *next_realloc(void *old, size_t size, size_t n, int is_array)
{
    if (is_array && real.reallocarray) {
        return real.reallocarray(old, n, size / (n ? n : 1));
    }
    return real.realloc(old, size);
}

static inline __attribute__((always_inline)) void *call_realloc(void *old, size_t size, size_t n, int is_array,
                                                                int timed)
{
    if (timed) {
        uint64_t t0 = alloctime_now();
        void *p = next_realloc(old, size, n, is_array);
        tstate.ticks = alloctime_now() - t0;
        return p;
    }
    return next_realloc(old, size, n, is_array);
}

static inline __attribute__((always_inline)) void *do_realloc(unsigned kind, void *old, size_t size, size_t n,
                                                              int is_array)
{
    if (!have_real()) {
        return copy_from_pool(resolve_pool_alloc(size, 16), old, size);
    }
    if (old && resolve_pool_owns(old)) {
        /* A block from before dlsym worked: move it to the real heap. */
        return copy_from_pool(malloc(size), old, size);
    }
    int rec = hook_enter_alloc(1);
    if (rec == HOOK_DEFER) {
        void *p = next_realloc(old, size, n, is_array);
        if (p || (old && size == 0)) {
            defer(SIGDEFER_REALLOC, kind, old, p, size);
        }
        return p;
    }
    if (rec && opts.sample_rate) {
        /* Sampling: the old block's free (if it was sampled) and the new
         * block (if sampled) are recorded apart; the call is counted once.
         * Mostly neither is: then nothing is called, errno is untouched.
         * With --time, a call with either part sampled is timed, its time
         * on the allocation if that is sampled, else on the free. */
        if (__builtin_expect(tstate.deferred, 0)) {
            /* Handlers' queued calls first: old may be a block one of
             * them allocated, in the sampled set only once sent. */
            buffer_send_deferred();
        }
        int timed = opts.time && ((old && !sample_free_unseen(old)) || !sample_skips(size));
        void *p = call_realloc(old, size, n, is_array, timed);
        uint64_t ticks = timed ? tstate.ticks : 0;
        int free_seen = old && (p || size == 0) && !sample_free_unseen(old);
        int alloc_seen = p && !sample_skips(size);
        if (p && !alloc_seen) {
            sample_count(size);
        }
        if (free_seen || alloc_seen) {
            int saved = errno;
            if (free_seen) {
                tstate.ticks = alloc_seen ? 0 : ticks;
                buffer_free(kind, old);
            }
            if (alloc_seen) {
                tstate.ticks = ticks;
                buffer_alloc(kind, p, size);
            }
            errno = saved;
        }
        hook_leave();
        return p;
    }
    uint64_t seq_free = rec ? buffer_realloc_begin() : 0;
    void *p = call_realloc(old, size, n, is_array, __builtin_expect(opts.time, 0) && rec == 1);
    if (rec) {
        int saved = errno;
        buffer_realloc_end(seq_free, kind, old, p, size);
        errno = saved;
        hook_leave();
    }
    return p;
}

EXPORT void *realloc(void *old, size_t size)
{
    return do_realloc(MEMFMT_K_REALLOC, old, size, 0, 0);
}

EXPORT void *reallocarray(void *old, size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return do_realloc(MEMFMT_K_REALLOCARRAY, old, total, n, 1);
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    if (fast_enter()) {
        int rc;
        if (timed_alloc(1, size)) {
            uint64_t t0 = alloctime_now();
            rc = real.posix_memalign(out, align, size);
            tstate.ticks = alloctime_now() - t0;
        } else {
            rc = real.posix_memalign(out, align, size);
        }
        if (rc == 0) {
            record_alloc(MEMFMT_K_POSIX_MEMALIGN, *out, size);
        }
        fast_leave();
        return rc;
    }
    if (!have_real()) {
        void *p = resolve_pool_alloc(size, align);
        if (!p) {
            return ENOMEM;
        }
        *out = p;
        return 0;
    }
    int rec = hook_enter_alloc(1);
    if (!rec) {
        return real.posix_memalign(out, align, size);
    }
    int rc;
    if (timed_alloc(rec, size)) {
        uint64_t t0 = alloctime_now();
        rc = real.posix_memalign(out, align, size);
        tstate.ticks = alloctime_now() - t0;
    } else {
        rc = real.posix_memalign(out, align, size);
    }
    if (rec == HOOK_DEFER) {
        if (rc == 0) {
            defer(SIGDEFER_ALLOC, MEMFMT_K_POSIX_MEMALIGN, NULL, *out, size);
        }
        return rc;
    }
    if (rc == 0) {
        buffer_alloc(MEMFMT_K_POSIX_MEMALIGN, *out, size);
    }
    hook_leave();
    return rc;
}

/* aligned_alloc, memalign, valloc and pvalloc may be missing from another
 * malloc: then posix_memalign serves them. */
static inline __attribute__((always_inline)) void *aligned_via(unsigned kind, size_t align, size_t size)
{
    void *p = NULL;
    if (!have_real()) {
        return resolve_pool_alloc(size, align);
    }
    int rec = hook_enter_alloc(1);
    int timed = timed_alloc(rec, size);
    uint64_t t0 = timed ? alloctime_now() : 0;
    switch (kind) {
    case MEMFMT_K_ALIGNED_ALLOC: p = real.aligned_alloc ? real.aligned_alloc(align, size) : NULL; break;
    case MEMFMT_K_MEMALIGN: p = real.memalign ? real.memalign(align, size) : NULL; break;
    case MEMFMT_K_VALLOC: p = real.valloc ? real.valloc(size) : NULL; break;
    default: p = real.pvalloc ? real.pvalloc(size) : NULL; break;
    }
    int have = kind == MEMFMT_K_ALIGNED_ALLOC ? real.aligned_alloc != NULL
               : kind == MEMFMT_K_MEMALIGN    ? real.memalign != NULL
               : kind == MEMFMT_K_VALLOC      ? real.valloc != NULL
                                              : real.pvalloc != NULL;
    if (!p && !have && real.posix_memalign(&p, align, size) != 0) {
        p = NULL;
    }
    if (timed) {
        tstate.ticks = alloctime_now() - t0;
    }
    if (rec == HOOK_DEFER) {
        if (p) {
            defer(SIGDEFER_ALLOC, kind, NULL, p, size);
        }
    } else if (rec) {
        if (p && opts.sample_rate && sample_skips(size)) {
            sample_count(size);
        } else if (p) {
            int saved = errno;
            buffer_alloc(kind, p, size);
            errno = saved;
        }
        hook_leave();
    }
    return p;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
    return aligned_via(MEMFMT_K_ALIGNED_ALLOC, align, size);
}

EXPORT void *memalign(size_t align, size_t size)
{
    return aligned_via(MEMFMT_K_MEMALIGN, align, size);
}

EXPORT void *valloc(size_t size)
{
    return aligned_via(MEMFMT_K_VALLOC, (size_t)sysconf(_SC_PAGESIZE), size);
}

EXPORT void *pvalloc(size_t size)
{
    return aligned_via(MEMFMT_K_PVALLOC, (size_t)sysconf(_SC_PAGESIZE), size);
}

/* ---- C++ operators new and delete ---- */

/* The next definitions, normally libstdc++'s, looked up on first use. They
 * are called rather than malloc so that the new-handler loop, bad_alloc and
 * a replacement allocator (tcmalloc's operator new) all keep working. */
enum next_op {
    OP_NEW,
    OP_NEW_ARR,
    OP_NEW_NT,
    OP_NEW_ARR_NT,
    OP_NEW_AL,
    OP_NEW_ARR_AL,
    OP_NEW_AL_NT,
    OP_NEW_ARR_AL_NT,
    OP_DEL,
    OP_DEL_ARR,
    OP_DEL_SZ,
    OP_DEL_ARR_SZ,
    OP_DEL_AL,
    OP_DEL_ARR_AL,
    OP_DEL_SZ_AL,
    OP_DEL_ARR_SZ_AL,
    OP_DEL_NT,
    OP_DEL_ARR_NT,
    OP_DEL_AL_NT,
    OP_DEL_ARR_AL_NT,
    OP_COUNT
};

static const char *const op_names[OP_COUNT] = {
    "_Znwm",
    "_Znam",
    "_ZnwmRKSt9nothrow_t",
    "_ZnamRKSt9nothrow_t",
    "_ZnwmSt11align_val_t",
    "_ZnamSt11align_val_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t",
    "_ZnamSt11align_val_tRKSt9nothrow_t",
    "_ZdlPv",
    "_ZdaPv",
    "_ZdlPvm",
    "_ZdaPvm",
    "_ZdlPvSt11align_val_t",
    "_ZdaPvSt11align_val_t",
    "_ZdlPvmSt11align_val_t",
    "_ZdaPvmSt11align_val_t",
    "_ZdlPvRKSt9nothrow_t",
    "_ZdaPvRKSt9nothrow_t",
    "_ZdlPvSt11align_val_tRKSt9nothrow_t",
    "_ZdaPvSt11align_val_tRKSt9nothrow_t",
};

static void *_Atomic next_ops[OP_COUNT];

static __attribute__((noinline)) void *look_up_op(enum next_op op)
{
    int saved = tstate.in_hook;
    tstate.in_hook = 1;
    resolve_init();
    void *f = resolve_next(op_names[op]);
    tstate.in_hook = saved;
    atomic_store_explicit(&next_ops[op], f, memory_order_release);
    return f;
}

/* Inline: every new and delete asks; only the first looks it up. */
static inline void *next_op(enum next_op op)
{
    void *f = atomic_load_explicit(&next_ops[op], memory_order_acquire);
    return f ? f : look_up_op(op);
}

typedef void *(*new_fn)(size_t);
typedef void *(*new_nt_fn)(size_t, const void *);
typedef void *(*new_al_fn)(size_t, size_t);
typedef void *(*new_al_nt_fn)(size_t, size_t, const void *);

static inline __attribute__((always_inline)) void *new_common(enum next_op op, unsigned kind, size_t size, size_t align,
                                                              const void *nt)
{
    int rec __attribute__((cleanup(leave_cleanup))) = fast_enter();
    if (!rec) {
        rec = hook_enter_alloc(1);
    }
    void *f = next_op(op);
    void *p;
    int timed = timed_alloc(rec, size);
    uint64_t t0 = timed ? alloctime_now() : 0;
    if (!f) {
        /* No C++ runtime after us: serve from the C allocator. */
        if (align) {
            p = real.posix_memalign(&p, align, size) == 0 ? p : NULL;
        } else {
            p = real.malloc(size ? size : 1);
        }
        if (!p && !nt) {
            log_msg("operator new failed with no C++ runtime to throw", NULL);
            abort();
        }
    } else if (op == OP_NEW || op == OP_NEW_ARR) {
        p = ((new_fn)f)(size);
    } else if (op == OP_NEW_NT || op == OP_NEW_ARR_NT) {
        p = ((new_nt_fn)f)(size, nt);
    } else if (op == OP_NEW_AL || op == OP_NEW_ARR_AL) {
        p = ((new_al_fn)f)(size, align);
    } else {
        p = ((new_al_nt_fn)f)(size, align, nt);
    }
    if (timed) {
        tstate.ticks = alloctime_now() - t0;
    }
    if (rec == 1 && p) {
        record_alloc(kind, p, size);
    } else if (rec == HOOK_DEFER && p) {
        defer(SIGDEFER_ALLOC, kind, NULL, p, size);
    }
    return p;
}

EXPORT void *_Znwm(size_t size)
{
    return new_common(OP_NEW, MEMFMT_K_NEW, size, 0, NULL);
}

EXPORT void *_Znam(size_t size)
{
    return new_common(OP_NEW_ARR, MEMFMT_K_NEW_ARRAY, size, 0, NULL);
}

EXPORT void *_ZnwmRKSt9nothrow_t(size_t size, const void *nt)
{
    return new_common(OP_NEW_NT, MEMFMT_K_NEW, size, 0, nt);
}

EXPORT void *_ZnamRKSt9nothrow_t(size_t size, const void *nt)
{
    return new_common(OP_NEW_ARR_NT, MEMFMT_K_NEW_ARRAY, size, 0, nt);
}

EXPORT void *_ZnwmSt11align_val_t(size_t size, size_t align)
{
    return new_common(OP_NEW_AL, MEMFMT_K_NEW, size, align, NULL);
}

EXPORT void *_ZnamSt11align_val_t(size_t size, size_t align)
{
    return new_common(OP_NEW_ARR_AL, MEMFMT_K_NEW_ARRAY, size, align, NULL);
}

EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, size_t align, const void *nt)
{
    return new_common(OP_NEW_AL_NT, MEMFMT_K_NEW, size, align, nt);
}

EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t size, size_t align, const void *nt)
{
    return new_common(OP_NEW_ARR_AL_NT, MEMFMT_K_NEW_ARRAY, size, align, nt);
}

typedef void (*del_fn)(void *);
typedef void (*del_x_fn)(void *, size_t);
typedef void (*del_xy_fn)(void *, size_t, size_t);
typedef void (*del_nt_fn)(void *, const void *);
typedef void (*del_al_nt_fn)(void *, size_t, const void *);

/* `shape` says which extra arguments the next delete takes. */
enum del_shape { DS_PLAIN, DS_ONE, DS_TWO, DS_NT, DS_AL_NT };

/* Hand p to the next operator delete. */
static inline __attribute__((always_inline)) void next_delete(enum next_op op, enum del_shape shape, unsigned kind,
                                                              void *p, size_t a, size_t b, const void *nt)
{
    void *f = next_op(op);
    if (!f && op != OP_DEL && op != OP_DEL_ARR) {
        /* An older runtime without sized or aligned forms. */
        f = next_op(kind == MEMFMT_K_DELETE ? OP_DEL : OP_DEL_ARR);
        shape = DS_PLAIN;
    }
    if (!f) {
        real.free(p);
        return;
    }
    switch (shape) {
    case DS_PLAIN: ((del_fn)f)(p); break;
    case DS_ONE: ((del_x_fn)f)(p, a); break;
    case DS_TWO: ((del_xy_fn)f)(p, a, b); break;
    case DS_NT: ((del_nt_fn)f)(p, nt); break;
    case DS_AL_NT: ((del_al_nt_fn)f)(p, a, nt); break;
    }
}

static inline __attribute__((always_inline)) void delete_common(enum next_op op, enum del_shape shape, unsigned kind,
                                                                void *p, size_t a, size_t b, const void *nt)
{
    if (!p) {
        return;
    }
    if (sample_free_unseen(p) && init_is_ready() && !tstate.deferred) {
        /* Sampling, and not a sampled block: nothing to record, as in
         * free(). (Before start-up, the full path below starts it.) */
        next_delete(op, shape, kind, p, a, b, nt);
        return;
    }
    int rec __attribute__((cleanup(leave_cleanup))) = hook_enter_alloc(1);
    if (__builtin_expect(opts.time, 0) && rec == 1) {
        /* As buffer_free_timed(), for the deletes' several signatures. */
        if (!buffer_free_begin(kind, p)) {
            next_delete(op, shape, kind, p, a, b, nt);
            return;
        }
        uint64_t t0 = alloctime_now();
        next_delete(op, shape, kind, p, a, b, nt);
        buffer_free_end(alloctime_now() - t0);
        return;
    }
    if (rec == 1) {
        buffer_free(kind, p);
    }
    next_delete(op, shape, kind, p, a, b, nt);
    if (rec == HOOK_DEFER) {
        defer(SIGDEFER_FREE, kind, p, NULL, 0);
    }
}

EXPORT void _ZdlPv(void *p)
{
    delete_common(OP_DEL, DS_PLAIN, MEMFMT_K_DELETE, p, 0, 0, NULL);
}

EXPORT void _ZdaPv(void *p)
{
    delete_common(OP_DEL_ARR, DS_PLAIN, MEMFMT_K_DELETE_ARRAY, p, 0, 0, NULL);
}

EXPORT void _ZdlPvm(void *p, size_t size)
{
    delete_common(OP_DEL_SZ, DS_ONE, MEMFMT_K_DELETE, p, size, 0, NULL);
}

EXPORT void _ZdaPvm(void *p, size_t size)
{
    delete_common(OP_DEL_ARR_SZ, DS_ONE, MEMFMT_K_DELETE_ARRAY, p, size, 0, NULL);
}

EXPORT void _ZdlPvSt11align_val_t(void *p, size_t align)
{
    delete_common(OP_DEL_AL, DS_ONE, MEMFMT_K_DELETE, p, align, 0, NULL);
}

EXPORT void _ZdaPvSt11align_val_t(void *p, size_t align)
{
    delete_common(OP_DEL_ARR_AL, DS_ONE, MEMFMT_K_DELETE_ARRAY, p, align, 0, NULL);
}

EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t size, size_t align)
{
    delete_common(OP_DEL_SZ_AL, DS_TWO, MEMFMT_K_DELETE, p, size, align, NULL);
}

EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t size, size_t align)
{
    delete_common(OP_DEL_ARR_SZ_AL, DS_TWO, MEMFMT_K_DELETE_ARRAY, p, size, align, NULL);
}

EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *nt)
{
    delete_common(OP_DEL_NT, DS_NT, MEMFMT_K_DELETE, p, 0, 0, nt);
}

EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *nt)
{
    delete_common(OP_DEL_ARR_NT, DS_NT, MEMFMT_K_DELETE_ARRAY, p, 0, 0, nt);
}

EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t align, const void *nt)
{
    delete_common(OP_DEL_AL_NT, DS_AL_NT, MEMFMT_K_DELETE, p, align, 0, nt);
}

EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t align, const void *nt)
{
    delete_common(OP_DEL_ARR_AL_NT, DS_AL_NT, MEMFMT_K_DELETE_ARRAY, p, align, 0, nt);
}

/* ---- the interposed names, for got.c and dlopen_hook.c ---- */

_Static_assert(OP_COUNT == PRELOAD_HOOKS - PRELOAD_C_HOOKS, "every C++ operator has a hook number");

/* In the order of the fields of struct real_funcs. */
static const char *const c_names[PRELOAD_C_HOOKS] = {
    "malloc",         "free",          "calloc",   "realloc", "reallocarray",
    "posix_memalign", "aligned_alloc", "memalign", "valloc",  "pvalloc",
};

const char *preload_hook_name(int i)
{
    return i < PRELOAD_C_HOOKS ? c_names[i] : op_names[i - PRELOAD_C_HOOKS];
}

void *preload_hook_next(int i)
{
    resolve_init();
    switch (i) {
    case 0: return (void *)real.malloc;
    case 1: return (void *)real.free;
    case 2: return (void *)real.calloc;
    case 3: return (void *)real.realloc;
    case 4: return (void *)real.reallocarray;
    case 5: return (void *)real.posix_memalign;
    case 6: return (void *)real.aligned_alloc;
    case 7: return (void *)real.memalign;
    case 8: return (void *)real.valloc;
    case 9: return (void *)real.pvalloc;
    default: return next_op((enum next_op)(i - PRELOAD_C_HOOKS));
    }
}
