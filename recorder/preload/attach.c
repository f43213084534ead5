// SPDX-License-Identifier: MIT
/* memrec --pid: the recorder loaded into a running process. memrec's
 * injector (inject.c) makes one of the process's threads dlopen this
 * library and call memrec_attach(). To detach, memrec sets
 * memrec_detach_request (writing into this process's memory; no thread is
 * stopped) and the service thread undoes the attach; it does the same by
 * itself when memrec is gone (a write fails).
 *
 * The program's calls do not reach our exported functions by themselves
 * (they were bound long ago, and we are not even in the global scope), so
 * attaching rewrites the GOT slots of every loaded object that name the
 * functions we hook (got.c), and detaching puts the old values back.
 * Objects loaded later are patched by the service thread's module scan
 * (within one flush period). memrec_attach() runs in a thread stopped by
 * ptrace while the others run on: nothing there may wait for another
 * thread of the program. The detach runs in the service thread, which owns
 * no buffer: it may wait for the owners (a detach run by a program thread
 * would wait for its own buffer if that thread was stopped inside it). */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "buffer.h"
#include "conn.h"
#include "got.h"
#include "guard.h"
#include "heapinfo.h"
#include "init.h"
#include "memfmt.h"
#include "memwire.h"
#include "modules.h"
#include "options.h"
#include "pipe.h"
#include "preload.h"
#include "resolve.h"
#include "service.h"
#include "unwind.h"

#define EXPORT __attribute__((visibility("default")))

/* The functions rewritten: the allocation functions, the direct mapping
 * functions (maphooks.c), the descriptor functions that protect our pipe
 * (syshooks.c), and _exit and _Exit (init.c), which skip the destructor
 * that sends the last events: hooked, they send them and the status.
 * exec is not: its hooks hand the recorder's variables on to the new
 * image, which memrec did not start and does not record. */
static const char *const sys_names[] = {"mmap", "mmap64", "munmap",      "mremap",    "brk",   "sbrk", "close",
                                        "dup2", "dup3",   "close_range", "closefrom", "_exit", "_Exit"};
#define NSYS ((int)(sizeof sys_names / sizeof *sys_names))
#define NHOOKS (PRELOAD_HOOKS + NSYS)

static const char *names[NHOOKS];
static void *ours[NHOOKS];
static uintptr_t self_base; /* our own load bias: never patched */
static atomic_int attached;
/* Set to 1 by memrec (process_vm_writev) to ask for a detach; exported so
 * that memrec finds it with dlsym. */
EXPORT atomic_int memrec_detach_request;
/* memrec_attach()'s result, for memrec: the call runs free and returns
 * into the program, whose stack soon covers the slot the trampoline leaves
 * its result in, so memrec reads it here (it sets a value no result has
 * before the call). */
EXPORT _Atomic int64_t memrec_attach_result;
static unsigned patched_gen; /* modules_generation() at the last patching */

static void *choose(void *ctx, const struct got_module *m, const struct got_slot *slot)
{
    (void)ctx;
    (void)m;
    if (slot->name < 0 || slot->name >= NHOOKS || !ours[slot->name] || slot->cur == ours[slot->name]) {
        return NULL;
    }
    return ours[slot->name];
}

static int patch_one(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    if (info->dlpi_addr == self_base && self_base) {
        return 0;
    }
    struct got_module m;
    got_module_from_phdr(&m, info);
    if (m.dynamic) {
        got_patch(&m, names, NHOOKS, choose, NULL);
    }
    return 0;
}

static void patch_all(void)
{
    patched_gen = modules_generation();
    dl_iterate_phdr(patch_one, NULL);
}

/* Attached: hook the objects loaded since the last call (service thread).
 * Returns 1 when memrec asked for the detach (then call attach_disarm()). */
static int attach_poll(void)
{
    if (!atomic_load(&attached)) {
        return 0;
    }
    init_watch_exit(); /* here, in the service thread: see init.h */
    if (atomic_load(&memrec_detach_request)) {
        return 1;
    }
    if (modules_generation() != patched_gen) {
        patch_all();
    }
    return 0;
}

/* Undo the attach: GOT slots back, every buffer sent, recording off, the
 * pipe closed (buffer_detach()); first, when memrec asked for it (request
 * 2), the reachability scan of the blocks live then. Only the service thread calls it, at a
 * detach request or when it ends because memrec is gone; idempotent. */
static void attach_disarm(void)
{
    if (!atomic_exchange(&attached, 0)) {
        return;
    }
    /* First no new call reaches a hook, then the events of the calls
     * already inside one are sent, then the pipe is closed: memrec reads
     * its end of file as the end of the detach. Silent until the pipe is
     * closed: a memrec killed during the detach is no news for the
     * program's stderr either. */
    if (atomic_load(&memrec_detach_request) == 2 && atomic_load(&rec_enabled)) {
        /* memrec --reachability: while the hooks are still in, so that the
         * live blocks memrec knows are the program's, every event goes
         * out at once and memrec scans (it stops the program's threads,
         * this one waits in conn_reach()); then the detach as always. */
        buffer_go_direct();
        conn_reach(init_reach_ack_ms(), 30, service_tid());
    }
    got_restore(NULL);
    service_stop();
    buffer_detach();
    pipe_silent(0);
    atomic_store(&memrec_detach_request, 0);
}

static int find_ours(void)
{
    Dl_info info;
    struct link_map *lm = NULL;
    if (!dladdr1((void *)find_ours, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm) {
        return -1;
    }
    self_base = lm->l_addr;
    for (int i = 0; i < PRELOAD_HOOKS; i++) {
        names[i] = preload_hook_name(i);
    }
    for (int i = 0; i < NSYS; i++) {
        names[PRELOAD_HOOKS + i] = sys_names[i];
    }
    /* A link_map is a handle: dlsym looks in our object first. */
    for (int i = 0; i < NHOOKS; i++) {
        ours[i] = dlsym(lm, names[i]);
    }
    return ours[0] ? 0 : -1;
}

/* What the allocator itself counts as in use at attach: blocks made before
 * the attach are unknown to the recording, so this is the baseline they
 * sit on. An allocator without mallinfo2 gives no baseline. */
static void send_baseline(void)
{
    struct memfmt_record mi;
    if (heapinfo_read(&mi) != 0) {
        return;
    }
    struct memfmt_record rec = {.tag = MEMFMT_REC_BASELINE};
    rec.u.baseline.in_use = mi.u.heapinfo.uordblks + mi.u.heapinfo.hblkhd;
    rec.u.baseline.arena = mi.u.heapinfo.arena + mi.u.heapinfo.hblkhd;
    uint8_t out[64];
    int n = memfmt_encode(&rec, out, sizeof out);
    if (n > 0) {
        buffer_record(out, (size_t)n);
    }
}

/* envp: MEMREC_SOCK, MEMREC_TARGET and options, as memrec would set them
 * in the environment of a program it starts. Returns 0, -1 when memrec
 * cannot be reached or the hooks cannot be found, -2 when already attached,
 * -3 when the thread was stopped inside the recorder (still running a
 * hook of an earlier attach, maybe holding its locks): memrec lets it go
 * and tries again. */
static int attach_here(char **envp);

EXPORT int memrec_attach(char **envp)
{
    int rc = attach_here(envp);
    atomic_store_explicit(&memrec_attach_result, rc, memory_order_release);
    return rc;
}

static int attach_here(char **envp)
{
    if (atomic_load(&attached)) {
        return -2;
    }
    int saved = tstate.in_hook;
    if (saved) {
        return -3;
    }
    tstate.in_hook = 1;
    int rc = -1;
    resolve_use_default();
    resolve_init();
    options_init(envp);
    conn_init(envp);
    if (!names[0] && find_ours() != 0) {
        goto out;
    }
    static int unwind_ready;
    if (!unwind_ready) {
        unwind_without_libunwind();
        unwind_init();
        unwind_ready = 1;
    }
    init_attached();
    int fd = conn_open(MEMFMT_CONN_START);
    if (fd < 0) {
        goto out;
    }
    /* A second attach: every module and stack is new to this recording. */
    modules_forget();
    buffer_modules_gone();
    if (buffer_setup(fd, modules_note_frame) != 0) {
        sys_close(fd);
        goto out;
    }
    init_watch_forks();
    modules_send_process(envp);
    modules_scan();
    send_baseline();
    atomic_store(&attached, 1);
    pipe_silent(1);
    patch_all();
    service_set_attach(attach_poll, attach_disarm);
    service_start();
    rc = 0;
out:
    tstate.in_hook = saved;
    return rc;
}

/* Ask for the detach (the same as setting memrec_detach_request): the
 * service thread does it within one flush period. Never waits, so it may
 * be called from any thread, even one stopped inside the recorder. The
 * library stays loaded (threads may still be returning through our hooks). */
EXPORT int memrec_detach(void)
{
    if (!atomic_load(&attached)) {
        return -1;
    }
    atomic_store(&memrec_detach_request, 1);
    return 0;
}
