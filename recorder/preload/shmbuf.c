// SPDX-License-Identifier: MIT
/* The buffer area: the threads' buffers in one memfd mapping shared with
 * memrec, which reads them once the process is gone (a SIGKILL, the OOM
 * killer: nothing runs in the process to send them). Runs inside the
 * target: system calls only, no allocation, no lock (slots are claimed
 * with a compare-and-swap, thread creation is not the allocation path). */
#define _GNU_SOURCE
#include "shmbuf.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mem.h"
#include "memwire.h"

/* The header's page; the slots (SHMBUF_SLOTS, two pages each) follow. */
#define SHMBUF_FIRST 4096u

static uint8_t *area; /* NULL: no area in this image */
static size_t slot_size;
static atomic_uchar used[SHMBUF_SLOTS];
static atomic_uint hint; /* where the next search starts */
static int made; /* an area was made in this image (kept after shmbuf_forget()) */

static size_t area_size(void)
{
    return SHMBUF_FIRST + (size_t)SHMBUF_SLOTS * slot_size;
}

int shmbuf_setup(size_t obj_size, size_t done_at, size_t done_size, size_t data_at, size_t calls_at, size_t bytes_at,
                 size_t inflight_at)
{
    if (made) {
        /* A second attach: the threads' buffers are in the first area,
         * whose descriptor was closed once sent. That recording reads the
         * pipe only. */
        return -1;
    }
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || (size_t)page > SHMBUF_FIRST) {
        return -1;
    }
    slot_size = (obj_size + (size_t)page - 1) / (size_t)page * (size_t)page;
    int fd = (int)syscall(SYS_memfd_create, "memrec", MFD_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    if (syscall(SYS_ftruncate, fd, (off_t)area_size()) != 0) {
        syscall(SYS_close, fd); /* not our close() hook */
        return -1;
    }
    /* A direct system call: this library's mmap is a hook (maphooks.c). */
    void *p = (void *)syscall(SYS_mmap, NULL, area_size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        syscall(SYS_close, fd); /* not our close() hook */
        return -1;
    }
    /* Its batches hold block addresses on their way to memrec: no roots
     * of the program's for the reachability scan (roots.c). */
    mem_note_own(p, area_size());
    struct memfmt_area_header h = {
        .magic = MEMFMT_AREA_MAGIC,
        .slots = SHMBUF_SLOTS,
        .slot_size = (uint32_t)slot_size,
        .first = SHMBUF_FIRST,
        .done_at = (uint32_t)done_at,
        .done_size = (uint32_t)done_size,
        .data_at = (uint32_t)data_at,
        .calls_at = (uint32_t)calls_at,
        .bytes_at = (uint32_t)bytes_at,
        .inflight_at = (uint32_t)inflight_at,
    };
    memcpy(p, &h, sizeof h);
    area = p;
    made = 1;
    return fd;
}

void *shmbuf_take(void)
{
    if (!area) {
        return NULL;
    }
    unsigned start = atomic_load_explicit(&hint, memory_order_relaxed) % SHMBUF_SLOTS;
    for (unsigned k = 0; k < SHMBUF_SLOTS; k++) {
        unsigned i = (start + k) % SHMBUF_SLOTS;
        unsigned char free_slot = 0;
        if (atomic_load_explicit(&used[i], memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong(&used[i], &free_slot, 1)) {
            atomic_store_explicit(&hint, i + 1, memory_order_relaxed);
            return area + SHMBUF_FIRST + (size_t)i * slot_size; /* zeroed by shmbuf_give() */
        }
    }
    return NULL;
}

int shmbuf_give(void *p)
{
    uint8_t *s = p;
    uint8_t *lo = area ? area + SHMBUF_FIRST : NULL;
    if (!lo || s < lo || s >= lo + (size_t)SHMBUF_SLOTS * slot_size) {
        return 0;
    }
    size_t i = (size_t)(s - lo) / slot_size;
    /* Zeroed here, not when taken: a slot of no thread must read as
     * nothing to memrec (no counts of a stream that said goodbye). The
     * batch was flushed, so no moment of the zeroing shows events. The
     * pages go back to the system as they did when a private buffer was
     * unmapped (MADV_REMOVE frees a shared file's pages, which then read
     * as zeros): a program that makes many short-lived threads must not
     * keep a page pair per thread it ever had. */
    if (syscall(SYS_madvise, s, slot_size, MADV_REMOVE) != 0) {
        memset(s, 0, slot_size);
    }
    atomic_store_explicit(&used[i], 0, memory_order_release);
    return 1;
}

void shmbuf_forget(void)
{
    /* The mapping is left in place: a stale pointer into it must not
     * fault, and writing into it is what the fork hooks prevent. */
    area = NULL;
    made = 0;
    for (unsigned i = 0; i < SHMBUF_SLOTS; i++) {
        atomic_store_explicit(&used[i], 0, memory_order_relaxed);
    }
}
