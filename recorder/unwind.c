// SPDX-License-Identifier: MIT
/* Stack capture with libunwind behind one small interface. Skips the
 * recorder's own frames, and keeps the outermost frames of very deep stacks
 * so that main() and thread entry points survive a depth limit. */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include "recorder_internal.h"

#include <dlfcn.h>
#include <elf.h>
#include <libunwind.h>
#include <link.h>

static uintptr_t self_lo, self_hi; /* our executable segment */

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t base = (uintptr_t)data;
    if (info->dlpi_addr != base) {
        return 0;
    }
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            self_lo = info->dlpi_addr + ph->p_vaddr;
            self_hi = self_lo + ph->p_memsz;
        }
    }
    return 1;
}

void unwind_init(void)
{
    Dl_info di;
    if (dladdr((void *)unwind_init, &di) && di.dli_fbase) {
        /* dli_fbase is the mapping start; for a shared object that is its
         * load bias, which dl_iterate_phdr reports as dlpi_addr. */
        dl_iterate_phdr(find_self, di.dli_fbase);
    }
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

static int is_self(uint64_t ip)
{
    return ip >= self_lo && ip < self_hi;
}

/* Slow path for stacks deeper than the limit: walk every frame, keep the
 * innermost quarter and a ring of the outermost rest. */
static int capture_deep(uint64_t *ips, int max)
{
    unw_context_t ctx;
    unw_cursor_t cur;
    if (unw_getcontext(&ctx) < 0 || unw_init_local(&cur, &ctx) < 0) {
        return 0;
    }
    int inner = max / 4;
    int ring_cap = max - inner - 1; /* one entry for the gap marker */
    uint64_t *ring = ips + inner + 1;
    int n_inner = 0;
    long n_outer = 0;
    int skipping = 1;
    do {
        unw_word_t ip;
        if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || ip == 0) {
            break;
        }
        if (skipping && is_self(ip)) {
            continue;
        }
        skipping = 0;
        if (n_inner < inner) {
            ips[n_inner++] = ip;
        } else {
            ring[n_outer % ring_cap] = ip;
            n_outer++;
        }
    } while (unw_step(&cur) > 0);
    if (n_outer <= ring_cap) {
        /* Not deeper than the limit after all: close the gap. */
        for (long i = 0; i < n_outer; i++) {
            ips[n_inner + i] = ring[i];
        }
        return n_inner + (int)n_outer;
    }
    /* Rotate the ring so it runs innermost to outermost. */
    uint64_t tmp[UNWIND_MAX_DEPTH];
    int start = (int)(n_outer % ring_cap);
    for (int i = 0; i < ring_cap; i++) {
        tmp[i] = ring[(start + i) % ring_cap];
    }
    for (int i = 0; i < ring_cap; i++) {
        ring[i] = tmp[i];
    }
    ips[inner] = 0; /* truncation marker */
    return max;
}

int unwind_capture(uint64_t *ips, int max)
{
    void *raw[UNWIND_MAX_DEPTH + 8];
    int want = max + 8 < (int)(sizeof raw / sizeof raw[0]) ? max + 8 : (int)(sizeof raw / sizeof raw[0]);
    int n = unw_backtrace(raw, want);
    if (n <= 0) {
        return 0;
    }
    int skip = 0;
    while (skip < n && is_self((uint64_t)(uintptr_t)raw[skip])) {
        skip++;
    }
    if (n == want && n - skip >= max) {
        return capture_deep(ips, max);
    }
    int k = 0;
    for (int i = skip; i < n && k < max; i++) {
        ips[k++] = (uint64_t)(uintptr_t)raw[i];
    }
    return k;
}
