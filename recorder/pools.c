// SPDX-License-Identifier: MIT
/* The recorder's side of include/memrec.h: the table memrec_pool_api_v1,
 * which a program finds with dlsym, and the three calls behind it. Each
 * records one pool event in the calling thread's buffer, with a stack for
 * an allocation, as preload.c does for malloc. Runs inside the target:
 * never calls malloc, takes no process-wide lock. */
#include "init.h"
#include "memfmt_internal.h"
#include "memrec.h"
#include "recorder_internal.h"

#define EXPORT __attribute__((visibility("default")))

/* The same entry test as preload.c's enter(): a call made while this
 * thread is inside the recorder (a pool used by a malloc hook) passes
 * through unrecorded. Inlined, so that the frame noted for the stack walk
 * is the one of the function the program called. */
static inline __attribute__((always_inline)) int enter(void)
{
    if (tstate.in_hook) {
        return 0;
    }
    if (__builtin_expect(!init_is_ready(), 0)) {
        init_start();
        if (!init_is_ready()) {
            return 0;
        }
    }
    if (!atomic_load_explicit(&rec_enabled, memory_order_relaxed)) {
        return 0;
    }
    tstate.in_hook = 1;
    tstate.frame = __builtin_frame_address(0);
    return 1;
}

static inline void leave(void)
{
    tstate.frame = NULL;
    tstate.in_hook = 0;
}

static void pool_alloc(const void *pool, const void *ptr, size_t size)
{
    if (enter()) {
        buffer_pool(MEMFMT_W_POOL_ALLOC, pool, ptr, size);
        leave();
    }
}

static void pool_free(const void *pool, const void *ptr)
{
    if (enter()) {
        buffer_pool(MEMFMT_W_POOL_FREE, pool, ptr, 0);
        leave();
    }
}

static void pool_reset(const void *pool)
{
    if (enter()) {
        buffer_pool(MEMFMT_W_POOL_RESET, pool, NULL, 0);
        leave();
    }
}

/* The only symbol of this file the program sees; its name carries the
 * version, so an incompatible change gets a new name, not a crash. */
EXPORT const struct memrec_pool_api memrec_pool_api_v1 = {
    .version = 1,
    .size = sizeof(struct memrec_pool_api),
    .pool_alloc = pool_alloc,
    .pool_free = pool_free,
    .pool_reset = pool_reset,
};
