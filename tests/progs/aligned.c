// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
/*
 * Target program: every aligned allocation form of glibc, some freed, some
 * leaked. Single-threaded, no stdio, exit 0 (1 if a call misbehaves).
 *
 * Steps, with the live requested bytes after each:
 *    1  posix_memalign(64, 10001)        10001   leaked
 *    2  aligned_alloc(64, 20001)         30002   freed in step 7
 *    3  memalign(4096, 30001)            60003   freed in step 8
 *    4  valloc(40001)                    100004  leaked
 *    5  pvalloc(50001)                   150005  peak; leaked (glibc rounds
 *                                                it up to whole pages; the
 *                                                requested size is 50001)
 *    6  posix_memalign(24, 10) -> EINVAL 150005  not an allocation
 *    7  free(aligned_alloc block)        130004
 *    8  free(memalign block)             100003
 *    9  one temporary per form, each freed right away:
 *       posix_memalign(128, 10011), aligned_alloc(32, 10012),
 *       memalign(256, 10013), valloc(10014), pvalloc(10015)
 *
 * Expected (memrec definitions): allocations 10, temporary 5, peak 150005,
 * leaked 100003 bytes in 3 blocks (10001 + 40001 + 50001), allocated in
 * total 200070 bytes. heaptrack does not hook memalign and pvalloc; see
 * EXPECTED.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>

/* GCC deletes a malloc/free pair whose memory is never used; an empty asm
 * that claims to read the pointer and all memory keeps every call real. */
static inline void keep(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

static int aligned_to(const void *p, uintptr_t alignment)
{
    return p != NULL && (uintptr_t)p % alignment == 0;
}

static void *volatile leaked_blocks[3];

static int temporaries(void)
{
    void *t = NULL;
    if (posix_memalign(&t, 128, 10011) != 0 || !aligned_to(t, 128)) {
        return -1;
    }
    keep(t);
    free(t);

    t = aligned_alloc(32, 10012);
    if (!aligned_to(t, 32)) {
        return -1;
    }
    keep(t);
    free(t);

    t = memalign(256, 10013);
    if (!aligned_to(t, 256)) {
        return -1;
    }
    keep(t);
    free(t);

    t = valloc(10014);
    if (!aligned_to(t, 4096)) {
        return -1;
    }
    keep(t);
    free(t);

    t = pvalloc(10015);
    if (!aligned_to(t, 4096)) {
        return -1;
    }
    keep(t);
    free(t);
    return 0;
}

int main(void)
{
    void *pm = NULL;
    if (posix_memalign(&pm, 64, 10001) != 0 || !aligned_to(pm, 64)) {
        return 1;
    }
    leaked_blocks[0] = pm;

    /* C17 (DR 460) dropped the rule that the size be a multiple of the
     * alignment; glibc never enforced it. */
    void *aa = aligned_alloc(64, 20001);
    if (!aligned_to(aa, 64)) {
        return 1;
    }
    keep(aa);

    void *ma = memalign(4096, 30001);
    if (!aligned_to(ma, 4096)) {
        return 1;
    }
    keep(ma);

    void *va = valloc(40001);
    if (!aligned_to(va, 4096)) {
        return 1;
    }
    leaked_blocks[1] = va;

    void *pv = pvalloc(50001);
    if (!aligned_to(pv, 4096)) {
        return 1;
    }
    leaked_blocks[2] = pv;

    /* 24 is not a power of two: posix_memalign fails and allocates nothing. */
    void *bad = NULL;
    if (posix_memalign(&bad, 24, 10) != EINVAL) {
        return 1;
    }

    free(aa);
    free(ma);

    if (temporaries() < 0) {
        return 1;
    }
    return 0;
}
