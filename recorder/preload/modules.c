// SPDX-License-Identifier: MIT
/* Tells memrec which modules are mapped where, so the analyzer can
 * symbolize offline: path, load bias, build-id and loadable segments of
 * each, sent at start and whenever the loader's counters change. */
#define _GNU_SOURCE
#include "modules.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "buffer.h"
#include "conn.h"
#include "mem.h"
#include "memfmt.h"
#include "memwire.h"
#include "options.h"
#include "preloaded.h"

#define MAX_MODULES 4096
#define MAX_PATH_SENT 1024

struct known {
    uintptr_t bias;
    const void *phdr; /* identifies one mapping of one object */
    uint64_t lo, hi; /* its loadable segments span [lo, hi) */
    uint32_t id;
    int seen;
};

static struct known *known; /* mmap'd table */
static int nknown;
static uint32_t next_id = 1;
static unsigned long long last_adds, last_subs;
static atomic_flag scan_lock = ATOMIC_FLAG_INIT;
static atomic_uint generation; /* bumped whenever the set of modules changes */

unsigned modules_generation(void)
{
    return atomic_load(&generation);
}

struct scan {
    int changed;
    int first;
    int unchanged;
};

static size_t build_id(const struct dl_phdr_info *info, const uint8_t **out)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE) {
            continue;
        }
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        const uint8_t *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            const uint8_t *name = p + sizeof *nh;
            const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3u);
            const uint8_t *next = desc + ((nh->n_descsz + 3) & ~3u);
            if (next > end) {
                break;
            }
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
                *out = desc;
                return nh->n_descsz;
            }
            p = next;
        }
    }
    return 0;
}

static void send_module(const struct dl_phdr_info *info, uint32_t id)
{
    static struct memfmt_record rec; /* large: keep it off the thread's stack */
    static uint8_t out[MEMFMT_WIRE_BATCH];
    char exe[MAX_PATH_SENT];
    const char *path = info->dlpi_name;
    if (!path || !*path) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = 0;
        path = exe;
    }
    memset(&rec, 0, sizeof rec);
    rec.tag = MEMFMT_REC_MODULE;
    rec.u.module.id = id;
    rec.u.module.bias = info->dlpi_addr;
    rec.u.module.path = path;
    size_t plen = strlen(path);
    rec.u.module.path_len = (uint32_t)(plen < MAX_PATH_SENT ? plen : MAX_PATH_SENT);
    const uint8_t *bid = NULL;
    size_t blen = build_id(info, &bid);
    rec.u.module.build_id = bid;
    rec.u.module.build_id_len = (uint32_t)(blen <= 64 ? blen : 0);
    for (int i = 0; i < info->dlpi_phnum && rec.u.module.nsegments < MEMFMT_MAX_SEGMENTS; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) {
            continue;
        }
        struct memfmt_segment *s = &rec.u.module.segments[rec.u.module.nsegments++];
        s->vaddr = ph->p_vaddr;
        s->memsz = ph->p_memsz;
        s->flags = ph->p_flags;
    }
    rec.u.module.flags = preloaded_flags(info->dlpi_addr, info->dlpi_phdr);
    int n = memfmt_encode(&rec, out, sizeof out - 64);
    if (n > 0) {
        buffer_record(out, (size_t)n);
    }
}

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    struct scan *sc = data;
    if (sc->first) {
        sc->first = 0;
        if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
            if (info->dlpi_adds == last_adds && info->dlpi_subs == last_subs && nknown > 0) {
                sc->unchanged = 1;
                return 1;
            }
            last_adds = info->dlpi_adds;
            last_subs = info->dlpi_subs;
        }
    }
    for (int i = 0; i < nknown; i++) {
        if (known[i].bias == info->dlpi_addr && known[i].phdr == info->dlpi_phdr) {
            known[i].seen = 1;
            return 0;
        }
    }
    if (nknown >= MAX_MODULES) {
        return 0;
    }
    struct known *k = &known[nknown++];
    k->bias = info->dlpi_addr;
    k->phdr = info->dlpi_phdr;
    k->lo = UINT64_MAX;
    k->hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD) {
            uint64_t lo = info->dlpi_addr + ph->p_vaddr;
            k->lo = lo < k->lo ? lo : k->lo;
            k->hi = lo + ph->p_memsz > k->hi ? lo + ph->p_memsz : k->hi;
        }
    }
    k->id = next_id++;
    k->seen = 1;
    send_module(info, k->id);
    sc->changed = 1;
    return 0;
}

int modules_scan(void)
{
    if (atomic_flag_test_and_set(&scan_lock)) {
        return 0;
    }
    if (!known) {
        known = mem_map(MAX_MODULES * sizeof *known);
        if (!known) {
            atomic_flag_clear(&scan_lock);
            return 0;
        }
    }
    for (int i = 0; i < nknown; i++) {
        known[i].seen = 0;
    }
    /* The first scan runs at the first intercepted call or in our
     * constructor: the loader has mapped every start-up object before it
     * runs any initializer, and nothing was dlopen'd yet. */
    preloaded_classify();
    struct scan sc = {0, 1, 0};
    dl_iterate_phdr(visit, &sc);
    int gone = 0;
    if (!sc.unchanged) {
        /* Drop modules no longer mapped and tell memrec. */
        int j = 0;
        for (int i = 0; i < nknown; i++) {
            if (known[i].seen) {
                known[j++] = known[i];
                continue;
            }
            struct memfmt_record rec = {.tag = MEMFMT_REC_UNMODULE};
            uint8_t out[32];
            rec.u.unmodule.id = known[i].id;
            int n = memfmt_encode(&rec, out, sizeof out);
            if (n > 0) {
                buffer_record(out, (size_t)n);
            }
            gone = 1;
        }
        nknown = j;
    }
    atomic_flag_clear(&scan_lock);
    if (gone || sc.changed) {
        atomic_fetch_add(&generation, 1);
    }
    if (gone) {
        buffer_modules_gone();
    }
    return gone;
}

void modules_relearn(void)
{
    if (atomic_flag_test_and_set(&scan_lock)) {
        return; /* a scan runs: the caller tries again at its next round */
    }
    /* Forgotten as known; the ids go on, so that memrec sees each module
     * announced anew, never an id it already has with another meaning. */
    nknown = 0;
    last_adds = last_subs = 0;
    atomic_flag_clear(&scan_lock);
}

void modules_forget(void)
{
    nknown = 0;
    last_adds = last_subs = 0;
    atomic_flag_clear(&scan_lock);
}

/* Whether ip lies in a module already announced. */
static int modules_contains(uint64_t ip)
{
    if (atomic_flag_test_and_set(&scan_lock)) {
        return 1; /* a scan is running right now: it will announce what is new */
    }
    int found = 0;
    for (int i = 0; i < nknown && !found; i++) {
        found = ip >= known[i].lo && ip < known[i].hi;
    }
    atomic_flag_clear(&scan_lock);
    return found;
}

void modules_note_frame(uint64_t ip)
{
    if (!modules_contains(ip)) {
        modules_scan();
    }
}

static size_t read_file(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    size_t n = 0;
    while (n < cap) {
        ssize_t k = read(fd, buf + n, cap - n);
        if (k <= 0) {
            break;
        }
        n += (size_t)k;
    }
    sys_close(fd);
    return n;
}

void modules_send_process(char **envp)
{
    (void)envp;
    static char exe[MAX_PATH_SENT];
    static char cmd[2048];
    static uint8_t out[MEMFMT_WIRE_BATCH];
    struct memfmt_record rec = {.tag = MEMFMT_REC_PROCESS};
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    rec.u.process.pid = (uint32_t)getpid();
    rec.u.process.ppid = (uint32_t)getppid();
    rec.u.process.start_unix_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    rec.u.process.sample_rate = (uint64_t)opts.sample_rate;
    rec.u.process.exe = exe;
    rec.u.process.exe_len = (uint32_t)strlen(exe);
    rec.u.process.cmdline = cmd;
    rec.u.process.cmdline_len = (uint32_t)read_file("/proc/self/cmdline", cmd, sizeof cmd);
    int k = memfmt_encode(&rec, out, sizeof out - 64);
    if (k > 0) {
        buffer_record(out, (size_t)k);
    }
}
