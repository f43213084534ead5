// SPDX-License-Identifier: MIT
/* The recorder's side of include/memrec.h: the table memrec_pool_api_v1,
 * which a program finds with dlsym, and the three calls behind it. Each
 * records one pool event in the calling thread's buffer, with a stack for
 * an allocation, as preload.c does for malloc. Runs inside the target:
 * never calls malloc, takes no process-wide lock. */
#include <stddef.h>

#include "buffer.h"
#include "init.h"
#include "memrec.h"
#include "memwire.h"

#define EXPORT __attribute__((visibility("default")))

static void pool_alloc(const void *pool, const void *ptr, size_t size)
{
    if (hook_enter(1)) {
        buffer_pool(MEMFMT_W_POOL_ALLOC, pool, ptr, size);
        hook_leave();
    }
}

static void pool_free(const void *pool, const void *ptr)
{
    if (hook_enter(1)) {
        buffer_pool(MEMFMT_W_POOL_FREE, pool, ptr, 0);
        hook_leave();
    }
}

static void pool_reset(const void *pool)
{
    if (hook_enter(1)) {
        buffer_pool(MEMFMT_W_POOL_RESET, pool, NULL, 0);
        hook_leave();
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
