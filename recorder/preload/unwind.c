// SPDX-License-Identifier: MIT
/* Stack capture with libunwind behind one small interface. Skips the
 * recorder's own frames, and keeps the outermost frames of very deep stacks
 * so that main() and thread entry points survive a depth limit. */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include "unwind.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cfi.h"
#include "conn.h"
#include "guard.h"
#include "log.h"
#include "mem.h"
#include "options.h"

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

/* Attached to a running process (memrec --pid): libunwind opens a pipe of
 * its own on first use and never closes it, which would leave two
 * descriptors in the program after detach; the fast walker does without. */
static int no_libunwind;

void unwind_without_libunwind(void)
{
    no_libunwind = 1;
}

/* ---- libunwind's descriptors ---- */

/* libunwind 1.6 checks that an address is readable (in frames without
 * unwind tables) by write(2)ing a byte from it into a pipe it opens at
 * start-up, and reopens that pipe whenever a read from it fails. Left
 * alone, that pipe takes the program's lowest free descriptors (3 and 4),
 * and a program that closed them and opened its own files there would see
 * libunwind read from them and then close them. So its pipe2() call (told
 * apart by its return address, in libunwind's text) gets descriptors near
 * the top of the program's range, and the array it fills is remembered:
 * when the program closes or replaces one of them, the pair is forgotten
 * (both -1 in libunwind's array), and libunwind opens a new pair, up
 * there too, at its next check. */
static uintptr_t unw_lo, unw_hi; /* libunwind's executable segment */
static int *_Atomic unw_pipe; /* libunwind's array of the pair */

static int find_text(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t *range = data;
    if (info->dlpi_addr != range[0]) {
        return 0;
    }
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            range[0] = info->dlpi_addr + ph->p_vaddr;
            range[1] = range[0] + ph->p_memsz;
        }
    }
    return 1;
}

int unwind_is_caller(const void *ret)
{
    return (uintptr_t)ret >= unw_lo && (uintptr_t)ret < unw_hi;
}

int unwind_pipe2(int fds[2], int flags)
{
    int tmp[2];
    if (syscall(SYS_pipe2, tmp, flags) != 0) {
        return -1;
    }
    int r = conn_move_high(tmp[0]);
    int w = r < 0 ? -1 : conn_move_high(tmp[1]);
    if (w < 0) {
        sys_close(r < 0 ? tmp[0] : r);
        sys_close(tmp[1]);
        errno = EMFILE; /* libunwind then takes every address as unreadable */
        return -1;
    }
    fds[0] = r;
    fds[1] = w;
    atomic_store(&unw_pipe, fds);
    return 0;
}

void unwind_fd_closing(int lo, int hi)
{
    int *p = atomic_load(&unw_pipe);
    if (!p) {
        return;
    }
    volatile int *v = p;
    int r = v[0], w = v[1];
    int hit_r = r >= 0 && r >= lo && r <= hi, hit_w = w >= 0 && w >= lo && w <= hi;
    if (!hit_r && !hit_w) {
        return;
    }
    v[0] = -1;
    v[1] = -1;
    /* The one the program closes is its business; the other is ours. */
    if (!hit_r && r >= 0) {
        sys_close(r);
    }
    if (!hit_w && w >= 0) {
        sys_close(w);
    }
}

/* ---- set-up ---- */

void unwind_init(void)
{
    Dl_info di;
    if (dladdr((void *)unwind_init, &di) && di.dli_fbase) {
        /* dli_fbase is the mapping start; for a shared object that is its
         * load bias, which dl_iterate_phdr reports as dlpi_addr. */
        dl_iterate_phdr(find_self, di.dli_fbase);
    }
    if (dladdr((void *)unw_backtrace, &di) && di.dli_fbase) {
        uintptr_t range[2] = {(uintptr_t)di.dli_fbase, 0};
        dl_iterate_phdr(find_text, range);
        if (range[1]) {
            unw_lo = range[0];
            unw_hi = range[1];
        }
    }
    if (!no_libunwind) {
        unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    }
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
    do {
        unw_word_t ip;
        if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || ip == 0) {
            break;
        }
        if (is_self(ip)) {
            continue; /* the recorder's frames, wherever they are */
        }
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

static int capture_libunwind(uint64_t *ips, int max);

/* MEMREC_CHECK_UNWIND=1: compare every fast walk with libunwind's and say
 * how many differ (a debugging aid; it costs both walks). */
static atomic_ulong checked, differed;

static void check_against_libunwind(const uint64_t *ips, int n, int max)
{
    uint64_t ref[UNWIND_MAX_DEPTH];
    int k = capture_libunwind(ref, max);
    atomic_fetch_add(&checked, 1);
    if (k != n || memcmp(ref, ips, sizeof *ips * (size_t)n) != 0) {
        if (atomic_fetch_add(&differed, 1) < 5) {
            log_msg("fast unwind differs from libunwind", NULL);
        }
    }
}

void unwind_report(void)
{
    if (opts.check_unwind) {
        char line[2 * LOG_U64_CHARS];
        size_t len = log_fmt_u64(line, atomic_load(&checked));
        line[len++] = '/';
        log_fmt_u64(line + len, atomic_load(&differed));
        log_msg("unwind check (checked/differing)", line);
    }
}

void unwind_thread_init(struct unwind_ctx *u)
{
    pthread_attr_t attr;
    void *lo;
    size_t size;
    u->cache = NULL;
    u->stack_hi = 0;
    /* The fast walker needs to know where this thread's stack ends. */
    if (pthread_getattr_np(pthread_self(), &attr) != 0) {
        return;
    }
    if (pthread_attr_getstack(&attr, &lo, &size) == 0) {
        u->stack_lo = (uintptr_t)lo;
        u->stack_hi = (uintptr_t)lo + size;
    }
    pthread_attr_destroy(&attr);
    if (u->stack_hi && opts.fast_unwind) {
        u->cache = mem_map(sizeof *u->cache);
        if (u->cache) {
            cfi_cache_init(u->cache);
        }
    }
}

void unwind_thread_release(struct unwind_ctx *u)
{
    mem_unmap(u->cache, sizeof *u->cache);
    u->cache = NULL;
}

static uint64_t hash_of(const uint64_t *ips, int n)
{
    uint64_t h = STACK_HASH_SEED;
    for (int i = n; i-- > 0;) {
        h = stack_hash_step(h, ips[i]);
    }
    return h;
}

int unwind_capture_hash(struct unwind_ctx *u, uint64_t *ips, int max, uint64_t *hash, int *deferred)
{
    *deferred = 0;
    if (u->cache) {
        uint64_t rip, rsp, rbp;
        int is_return = 0;
        const uint64_t *fp = tstate.frame;
        if (fp) {
            /* Start at the caller of the interposed function: it was built
             * with a frame pointer, so its frame holds the caller's rbp and
             * the return address, and the caller's rsp is just above. */
            rbp = fp[0];
            rip = fp[1];
            rsp = (uint64_t)(uintptr_t)(fp + 2);
            is_return = 1;
        } else {
            /* This function's own state; its CFI takes the walk from here. */
            __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" : "=r"(rip), "=r"(rsp), "=r"(rbp));
        }
        /* Only on the thread's own stack are the walker's bounds right: on
         * a coroutine or signal stack, leave the walk to libunwind. */
        int n = -1;
        if (rsp >= u->stack_lo && rsp < u->stack_hi) {
            /* The addresses are read from the walk only if the caller needs
             * them (the check needs them at once). */
            int defer = !opts.check_unwind;
            n = cfi_backtrace(u->cache, rip, rsp, rbp, u->stack_hi, is_return, is_self, defer ? NULL : ips, max, hash);
            *deferred = defer && n >= 0;
        }
        if (n >= 0 && opts.check_unwind && !no_libunwind) {
            check_against_libunwind(ips, n, max);
        }
        if (n >= 0) {
            return n;
        }
        if (n == -2 && !no_libunwind) {
            n = capture_deep(ips, max);
            *hash = hash_of(ips, n);
            return n;
        }
    }
    if (no_libunwind) {
        /* The walker could not (no CFI, or deeper than max): no stack. */
        *hash = hash_of(ips, 0);
        return 0;
    }
    int n = capture_libunwind(ips, max);
    *hash = hash_of(ips, n);
    return n;
}

void unwind_fill(struct unwind_ctx *u, uint64_t *ips, int n)
{
    cfi_last_ips(u->cache, ips, n);
}

static int capture_libunwind(uint64_t *ips, int max)
{
    void *raw[UNWIND_MAX_DEPTH + 8];
    int want = max + 8 < (int)(sizeof raw / sizeof raw[0]) ? max + 8 : (int)(sizeof raw / sizeof raw[0]);
    int n = unw_backtrace(raw, want);
    if (n <= 0) {
        return 0;
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (is_self((uint64_t)(uintptr_t)raw[i])) {
            continue; /* the recorder's frames, wherever they are */
        }
        if (k == max) {
            return capture_deep(ips, max);
        }
        ips[k++] = (uint64_t)(uintptr_t)raw[i];
    }
    if (n == want && k == max) {
        return capture_deep(ips, max);
    }
    return k;
}
