// SPDX-License-Identifier: MIT
/* Stack capture (unwind.c): the fast CFI walker with libunwind behind it, per thread, skipping
 * the recorder's own frames. */
#ifndef RECORDER_UNWIND_H
#define RECORDER_UNWIND_H

#include <stdint.h>

#include "cfi.h" /* UNWIND_MAX_DEPTH, struct cfi_cache, the stack hash */
#include "hidden.h"

/** In a signal handler that interrupted the recorder: the stack with
 * libunwind, without the recorder's frames, or 0 frames when the
 * interrupted code was itself inside libunwind (not reentrant) or
 * libunwind is not used. Async-signal-safe otherwise. */
HIDDEN int unwind_capture_in_signal(uint64_t *ips, int max);
/** Set up libunwind (caching policy) and learn our own text range and
 * libunwind's. */
HIDDEN void unwind_init(void);
/** Whether return address `ret` lies in libunwind's code. */
HIDDEN int unwind_is_caller(const void *ret);
/** pipe2() for libunwind's address checks: the pair goes near the top of
 * the program's descriptor range, and `fds` (libunwind's array) is
 * remembered for unwind_fd_closing(). -1 with errno when there is no room. */
HIDDEN int unwind_pipe2(int fds[2], int flags);
/** The program closes or replaces descriptors lo..hi: if libunwind's pair
 * is among them, it is dropped (libunwind opens another when it needs one). */
HIDDEN void unwind_fd_closing(int lo, int hi);
/** Never use libunwind (attached: it would leave descriptors behind);
 * stacks the fast walker cannot take are recorded without frames. */
HIDDEN void unwind_without_libunwind(void);
/* Per-thread unwinding state: the rule cache and the top of the stack. */
struct unwind_ctx {
    struct cfi_cache *cache; /* NULL: use libunwind only */
    uintptr_t stack_lo, stack_hi; /* this thread's stack, from pthread_getattr_np */
};

/** Prepare `u` for the calling thread (maps its cache). */
HIDDEN void unwind_thread_init(struct unwind_ctx *u);
/** Print the MEMREC_CHECK_UNWIND result, if that check is on. */
HIDDEN void unwind_report(void);
/** Release what unwind_thread_init() took. */
HIDDEN void unwind_thread_release(struct unwind_ctx *u);
/** Capture the caller's stack into `ips`, innermost first, skipping the
 * recorder's own frames wherever they are (deepbind_dlopen() between the
 * program's dlopen() and the loader). At most `max` entries; when the stack is deeper,
 * keeps the innermost quarter and the outermost rest, with a 0 entry marking
 * the gap. Returns the number of entries; *hash gets the stack's hash.
 * The addresses may be left for unwind_fill(): *deferred says whether they
 * were (most stacks are known by their hash alone). */
HIDDEN int unwind_capture_hash(struct unwind_ctx *u, uint64_t *ips, int max, uint64_t *hash, int *deferred);
/** Write the addresses unwind_capture_hash() deferred (n of them). */
HIDDEN void unwind_fill(struct unwind_ctx *u, uint64_t *ips, int n);

#endif
