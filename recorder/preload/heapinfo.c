// SPDX-License-Identifier: MIT
/* The allocator's own count of its heap, from glibc's mallinfo2(): how much
 * it holds from the system, how much of it is in use and how much lies
 * free in its arenas. Runs inside the target, in the service thread (and
 * once at attach): never allocates through the hooked malloc, and bounds
 * the time the allocator's locks are held for it (HEAPINFO_BUDGET). */
#define _GNU_SOURCE
#include "heapinfo.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "buffer.h"
#include "clock.h"
#include "options.h"
#include "resolve.h"
#include "conn.h"

typedef struct mallinfo2 (*mallinfo2_fn)(void);

/* 0: not looked up yet; 1: looked up, `info` may be NULL (none). */
static atomic_int looked_up;
static mallinfo2_fn info;
/* The service thread's: */
static uint64_t next_ns; /* no sample before this time */
static uint64_t last_chunks; /* free chunks the latest sample walked */
static uint64_t last_events; /* the event counter at that sample */

/* mallinfo2 describes glibc's heap only. With another allocator preloaded
 * (jemalloc, tcmalloc), RTLD_DEFAULT still finds glibc's mallinfo2, which
 * would describe arenas nobody uses: only the function of the object that
 * defines the malloc in use counts. */
static mallinfo2_fn look_up(void)
{
    mallinfo2_fn f = (mallinfo2_fn)dlsym(RTLD_DEFAULT, "mallinfo2");
    if (!f) {
        return NULL;
    }
    Dl_info a, b;
    if (!dladdr((void *)f, &a) || !dladdr((void *)real.malloc, &b) || a.dli_fbase != b.dli_fbase) {
        return NULL;
    }
    return f;
}

/* The start of the program break's area (where glibc's main heap
 * begins): field 47 of /proc/self/stat, start_brk, fixed for the
 * process image. 0 when it cannot be read. Read once, by the service
 * thread or at attach; no stdio, no allocation. */
static uint64_t brk_start;
static atomic_int brk_start_read;

static uint64_t read_brk_start(void)
{
    char buf[1024];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    size_t n = 0;
    while (n < sizeof buf - 1) {
        ssize_t k = read(fd, buf + n, sizeof buf - 1 - n);
        if (k <= 0) {
            break;
        }
        n += (size_t)k;
    }
    sys_close(fd);
    buf[n] = 0;
    /* The command name (field 2) may hold spaces and parentheses: the
     * fields are counted from the last ')'. */
    char *p = NULL;
    for (size_t i = 0; i < n; i++) {
        if (buf[i] == ')') {
            p = buf + i;
        }
    }
    if (!p) {
        return 0;
    }
    int field = 2;
    uint64_t v = 0;
    for (p++; *p; p++) {
        if (*p == ' ') {
            field++;
            v = 0;
            continue;
        }
        if (field == 47) {
            if (*p < '0' || *p > '9') {
                return 0;
            }
            v = v * 10 + (uint64_t)(*p - '0');
            if (p[1] == ' ' || p[1] == 0 || p[1] == '\n') {
                return v;
            }
        }
    }
    return 0;
}

int heapinfo_read(struct memfmt_record *out)
{
    /* Two threads may look it up at once (attach and the service thread):
     * both find the same answer. */
    if (!atomic_load_explicit(&looked_up, memory_order_acquire)) {
        if (!real.malloc) {
            return -2; /* no allocation yet: the malloc in use is not known */
        }
        info = look_up();
        atomic_store_explicit(&looked_up, 1, memory_order_release);
    }
    if (!info) {
        return -1;
    }
    uint64_t w0 = clock_read_ns(CLOCK_MONOTONIC), c0 = clock_read_ns(CLOCK_THREAD_CPUTIME_ID);
    struct mallinfo2 mi = info();
    uint64_t c1 = clock_read_ns(CLOCK_THREAD_CPUTIME_ID), w1 = clock_read_ns(CLOCK_MONOTONIC);
    *out = (struct memfmt_record){.tag = MEMFMT_REC_HEAPINFO};
    out->u.heapinfo.arena = mi.arena;
    out->u.heapinfo.ordblks = mi.ordblks;
    out->u.heapinfo.smblks = mi.smblks;
    out->u.heapinfo.fordblks = mi.fordblks;
    out->u.heapinfo.fsmblks = mi.fsmblks;
    out->u.heapinfo.uordblks = mi.uordblks;
    out->u.heapinfo.keepcost = mi.keepcost;
    out->u.heapinfo.hblks = mi.hblks;
    out->u.heapinfo.hblkhd = mi.hblkhd;
    out->u.heapinfo.cost_ns = c1 - c0;
    out->u.heapinfo.wall_ns = w1 - w0;
    /* The main heap's range at the sample, for memrec's layout of it
     * (docs/format.md, "Heap layout"): brk(0) changes nothing and returns
     * the break. */
    if (!atomic_load_explicit(&brk_start_read, memory_order_acquire)) {
        brk_start = read_brk_start();
        atomic_store_explicit(&brk_start_read, 1, memory_order_release);
    }
    long cur = syscall(SYS_brk, 0);
    if (brk_start && cur > 0 && (uint64_t)cur >= brk_start) {
        out->u.heapinfo.brk_start = brk_start;
        out->u.heapinfo.brk_end = (uint64_t)cur;
    }
    return 0;
}

void heapinfo_tick(void)
{
    if (!opts.heapinfo) {
        return;
    }
    uint64_t now = clock_read_ns(CLOCK_MONOTONIC);
    if (now < next_ns) {
        return;
    }
    uint64_t events = buffer_events_taken();
    if (events < last_events) {
        last_events = 0; /* the counter started over (a new recording after fork) */
    }
    if (events && last_chunks + (events - last_events) > HEAPINFO_MAX_CHUNKS) {
        return; /* the walk could be long: maybe never again (the bound only grows) */
    }
    struct memfmt_record rec;
    int rc = heapinfo_read(&rec);
    if (rc != 0) {
        if (rc == -1) {
            next_ns = UINT64_MAX; /* no mallinfo2: never again */
        }
        return;
    }
    last_chunks = rec.u.heapinfo.ordblks + rec.u.heapinfo.smblks;
    last_events = events;
    /* The budget counts the CPU time of the walk, which grows with the
     * free chunks: on a loaded machine the wall time of one call also
     * counts the time the thread waited for a CPU or for a busy arena's
     * lock (8 threads writing on 2 cores: 73 ms of wall time for 3 free
     * chunks), and one such call would stop the samples for seconds. */
    next_ns = rec.u.heapinfo.cost_ns > HEAPINFO_STOP_NS ? UINT64_MAX : now + rec.u.heapinfo.cost_ns * HEAPINFO_BUDGET;
    uint8_t out[160];
    int n = memfmt_encode(&rec, out, sizeof out);
    if (n > 0) {
        buffer_service_record(out, (size_t)n);
    }
}
