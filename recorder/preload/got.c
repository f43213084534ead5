// SPDX-License-Identifier: MIT
/* Rewrites GOT slots of loaded objects and remembers their old values, so
 * that hooks can be installed in an object whose calls bypass the preload
 * (RTLD_DEEPBIND) and later removed (detaching). x86-64 only. Runs inside
 * the target: the remembered values live in mmap'd memory, never malloc. */
#define _GNU_SOURCE
#include "got.h"

#include <elf.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mem.h"

#define GOT_MAX_SAVED 16384

/* One rewritten slot. The module is identified as modules.c does, by its
 * load bias and program headers, plus its dynamic section. */
struct saved {
    uintptr_t slot;
    void *old; /* the value before our first write */
    void *now; /* the value we wrote last */
    uintptr_t bias;
    const void *phdr;
    const void *dynamic;
    int relro; /* the slot lies in a page the loader made read-only */
};

static struct saved *saved; /* GOT_MAX_SAVED entries, mmap'd on first use */
static int nsaved;

/* Patching is rare (a dlopen, an attach): one mutex, never on the
 * allocation path. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* A fork while another thread holds the lock would leave the child's copy
 * locked for ever: hold it across fork instead. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

static void fork_release(void)
{
    pthread_mutex_unlock(&lock);
}

static void register_atfork(void)
{
    pthread_atfork(fork_prepare, fork_release, fork_release);
}

void got_module_from_phdr(struct got_module *m, const struct dl_phdr_info *info)
{
    memset(m, 0, sizeof *m);
    m->bias = info->dlpi_addr;
    m->phdr = info->dlpi_phdr;
    m->phnum = info->dlpi_phnum;
    m->name = info->dlpi_name;
    m->lo = UINTPTR_MAX;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_DYNAMIC) {
            m->dynamic = (const ElfW(Dyn) *)start;
        } else if (ph->p_type == PT_LOAD) {
            m->lo = start < m->lo ? start : m->lo;
            m->hi = start + ph->p_memsz > m->hi ? start + ph->p_memsz : m->hi;
        }
    }
}

/* The loader relocates most d_ptr values of the dynamic section in place,
 * but not everywhere (the vDSO's is read-only): an address already inside
 * the object is taken as it is, anything else is relative to the bias. */
static uintptr_t dyn_addr(const struct got_module *m, uintptr_t ptr)
{
    if (ptr >= m->lo && ptr < m->hi) {
        return ptr;
    }
    return ptr + m->bias;
}

struct dyn_tables {
    const ElfW(Rela) * jmprel, *rela;
    size_t njmprel, nrela;
    const ElfW(Sym) * symtab;
    const char *strtab;
    size_t strsz;
};

static int read_dynamic(const struct got_module *m, struct dyn_tables *t)
{
    memset(t, 0, sizeof *t);
    size_t jmprel_bytes = 0, rela_bytes = 0;
    long pltrel = DT_RELA;
    for (const ElfW(Dyn) *d = m->dynamic; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_JMPREL: t->jmprel = (const ElfW(Rela) *)dyn_addr(m, d->d_un.d_ptr); break;
        case DT_PLTRELSZ: jmprel_bytes = d->d_un.d_val; break;
        case DT_PLTREL: pltrel = (long)d->d_un.d_val; break;
        case DT_RELA: t->rela = (const ElfW(Rela) *)dyn_addr(m, d->d_un.d_ptr); break;
        case DT_RELASZ: rela_bytes = d->d_un.d_val; break;
        case DT_SYMTAB: t->symtab = (const ElfW(Sym) *)dyn_addr(m, d->d_un.d_ptr); break;
        case DT_STRTAB: t->strtab = (const char *)dyn_addr(m, d->d_un.d_ptr); break;
        case DT_STRSZ: t->strsz = d->d_un.d_val; break;
        default: break;
        }
    }
    if (pltrel != DT_RELA || !t->symtab || !t->strtab) {
        return GOT_E_FORMAT;
    }
    t->njmprel = t->jmprel ? jmprel_bytes / sizeof(ElfW(Rela)) : 0;
    t->nrela = t->rela ? rela_bytes / sizeof(ElfW(Rela)) : 0;
    return 0;
}

/* The range the loader made read-only after relocating (PT_GNU_RELRO),
 * rounded the way glibc rounds it: whole pages from the start's page to the
 * page holding the end, exclusive. */
static void relro_range(const struct got_module *m, uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    *lo = *hi = 0;
    for (int i = 0; i < m->phnum; i++) {
        if (m->phdr[i].p_type == PT_GNU_RELRO) {
            uintptr_t start = m->bias + m->phdr[i].p_vaddr;
            *lo = start & ~(page - 1);
            *hi = (start + m->phdr[i].p_memsz) & ~(page - 1);
        }
    }
}

static int store(uintptr_t slot, void *value, int relro)
{
    uintptr_t page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    void *page = (void *)(slot & ~(page_size - 1));
    if (relro && mprotect(page, page_size, PROT_READ | PROT_WRITE) != 0) {
        return GOT_E_PROTECT;
    }
    /* One aligned store: a concurrent call through the slot sees the old
     * function or the new one, never half of each. */
    __atomic_store_n((void **)slot, value, __ATOMIC_RELEASE);
    if (relro) {
        mprotect(page, page_size, PROT_READ);
    }
    return 0;
}

static struct saved *find_saved(uintptr_t slot)
{
    for (int i = 0; i < nsaved; i++) {
        if (saved[i].slot == slot) {
            return &saved[i];
        }
    }
    return NULL;
}

static int name_index(const char *name, const char *const *names, int n)
{
    for (int i = 0; i < n; i++) {
        if (name[0] == names[i][0] && strcmp(name, names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

/* Handles one relocation table; returns slots written or a GOT_E_* code. */
static int patch_table(const struct got_module *m, const struct dyn_tables *t, const ElfW(Rela) * rel, size_t nrel,
                       const char *const *names, int n, got_choose_fn choose, void *ctx)
{
    uintptr_t relro_lo, relro_hi;
    relro_range(m, &relro_lo, &relro_hi);
    int written = 0;
    for (size_t r = 0; r < nrel; r++) {
        unsigned type = (unsigned)ELF64_R_TYPE(rel[r].r_info);
        if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) {
            continue;
        }
        const ElfW(Sym) *sym = &t->symtab[ELF64_R_SYM(rel[r].r_info)];
        if (sym->st_name == 0 || (t->strsz && sym->st_name >= t->strsz)) {
            continue;
        }
        int i = name_index(t->strtab + sym->st_name, names, n);
        if (i < 0) {
            continue;
        }
        uintptr_t slot = m->bias + rel[r].r_offset;
        void *cur = __atomic_load_n((void **)slot, __ATOMIC_ACQUIRE);
        struct got_slot gs = {slot, cur, i, sym->st_shndx != SHN_UNDEF};
        void *value = choose(ctx, m, &gs);
        if (!value || value == cur) {
            continue;
        }
        struct saved *s = find_saved(slot);
        if (!s) {
            if (nsaved >= GOT_MAX_SAVED) {
                return GOT_E_FULL;
            }
            s = &saved[nsaved];
            s->slot = slot;
            s->old = cur;
            s->bias = m->bias;
            s->phdr = m->phdr;
            s->dynamic = m->dynamic;
            s->relro = slot >= relro_lo && slot < relro_hi;
        }
        int rc = store(slot, value, s->relro);
        if (rc < 0) {
            return rc;
        }
        if (s == &saved[nsaved]) {
            nsaved++;
        }
        s->now = value;
        written++;
    }
    return written;
}

int got_patch(const struct got_module *m, const char *const *names, int n, got_choose_fn choose, void *ctx)
{
    if (!m->dynamic) {
        return 0;
    }
    struct dyn_tables t;
    int rc = read_dynamic(m, &t);
    if (rc < 0) {
        return rc;
    }
    pthread_once(&atfork_once, register_atfork);
    pthread_mutex_lock(&lock);
    if (!saved) {
        saved = mem_map(GOT_MAX_SAVED * sizeof *saved);
    }
    int total = 0;
    if (!saved) {
        total = GOT_E_FULL;
    }
    if (total == 0) {
        rc = patch_table(m, &t, t.jmprel, t.njmprel, names, n, choose, ctx);
        total = rc;
    }
    if (total >= 0) {
        rc = patch_table(m, &t, t.rela, t.nrela, names, n, choose, ctx);
        total = rc < 0 ? rc : total + rc;
    }
    pthread_mutex_unlock(&lock);
    return total;
}

/* ---- what is still loaded ---- */

struct loaded_check {
    const struct saved *s;
    int found;
};

static int find_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct loaded_check *c = data;
    if (info->dlpi_addr != c->s->bias || (const void *)info->dlpi_phdr != c->s->phdr) {
        return 0;
    }
    struct got_module m;
    got_module_from_phdr(&m, info);
    c->found = (const void *)m.dynamic == c->s->dynamic;
    return c->found;
}

static int still_loaded(const struct saved *s)
{
    struct loaded_check c = {s, 0};
    dl_iterate_phdr(find_loaded, &c);
    return c.found;
}

static int in_module(const struct saved *s, const struct got_module *m)
{
    return !m || (s->bias == m->bias && s->phdr == (const void *)m->phdr);
}

/* Under the lock: restore (when `restore`) and forget the slots of m, and
 * forget those of unloaded modules. Returns the number restored. */
static int sweep(const struct got_module *m, int restore)
{
    int restored = 0, j = 0;
    for (int i = 0; i < nsaved; i++) {
        struct saved *s = &saved[i];
        int loaded = still_loaded(s);
        if (loaded && !(restore && in_module(s, m))) {
            saved[j++] = *s;
            continue;
        }
        /* Only a slot that still holds our value is put back: if the
         * program or the loader rewrote it since, theirs is the one to keep. */
        if (loaded && __atomic_load_n((void **)s->slot, __ATOMIC_ACQUIRE) == s->now &&
            store(s->slot, s->old, s->relro) == 0) {
            restored++;
        }
    }
    nsaved = j;
    return restored;
}

int got_restore(const struct got_module *m)
{
    pthread_mutex_lock(&lock);
    int n = sweep(m, 1);
    pthread_mutex_unlock(&lock);
    return n;
}

void got_forget_unloaded(void)
{
    pthread_mutex_lock(&lock);
    sweep(NULL, 0);
    pthread_mutex_unlock(&lock);
}

int got_count(void)
{
    pthread_mutex_lock(&lock);
    int n = nsaved;
    pthread_mutex_unlock(&lock);
    return n;
}
