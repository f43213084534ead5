// SPDX-License-Identifier: MIT
/* Libraries opened with RTLD_DEEPBIND look symbols up in their own
 * dependencies (libc among them) before the global scope, so their calls
 * to malloc, free, new and delete reach libc directly and bypass the
 * preloaded hooks. dlopen is interposed to redirect, after such an open,
 * the GOT slots of the newly loaded objects that bypassed the hooks
 * (got.c); the flags are passed on unchanged, so the library still binds
 * its own symbols first. Its own memory comes from mem_map; the loader's
 * allocations for its look-ups run with tstate.in_hook set, unrecorded. */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "buffer.h"
#include "got.h"
#include "guard.h"
#include "hidden.h"
#include "init.h"
#include "log.h"
#include "mem.h"
#include "pipe.h"
#include "preload.h"

typedef void *(*dlopen_fn)(const char *, int);

/* Read by the stub below: the next dlopen (glibc's), set at our
 * constructor or by the first call that finds it unset. */
HIDDEN dlopen_fn deepbind_next_dlopen;
HIDDEN void *deepbind_dlopen(const char *file, int flags);

_Static_assert(RTLD_DEEPBIND == 8, "the stub tests bit 3 of the flags");

/* dlopen itself. glibc finds the namespace and resolves $ORIGIN and RUNPATH
 * from the caller of dlopen, its return address; a C wrapper calling on
 * would make the recorder that caller. So the entry is a jump, which leaves
 * the return address alone: without RTLD_DEEPBIND straight to glibc's
 * dlopen; with it (or before glibc's is known), to deepbind_dlopen(), which
 * sees the program's return address and resolves the name from there. */
__asm__(".text\n"
        ".globl dlopen\n"
        ".type dlopen, @function\n"
        "dlopen:\n"
        "    endbr64\n"
        "    testl $8, %esi\n"
        "    jnz 1f\n"
        "    movq deepbind_next_dlopen(%rip), %rax\n"
        "    testq %rax, %rax\n"
        "    jz 1f\n"
        "    jmp *%rax\n"
        "1:  jmp deepbind_dlopen\n"
        ".size dlopen, .-dlopen\n");

static void resolve_dlopen(void)
{
    if (!deepbind_next_dlopen) {
        __atomic_store_n(&deepbind_next_dlopen, (dlopen_fn)dlsym(RTLD_NEXT, "dlopen"), __ATOMIC_RELEASE);
    }
}

__attribute__((constructor)) static void deepbind_on_load(void)
{
    int saved = tstate.in_hook;
    tstate.in_hook = 1; /* dlsym may allocate */
    resolve_dlopen();
    tstate.in_hook = saved;
}

/* ---- opening a name as the program's caller would ---- */

struct caller {
    struct link_map *lm; /* the object that called dlopen; NULL if unknown (generated code) */
    Lmid_t lmid; /* its namespace */
};

static void find_caller(void *ra, struct caller *c)
{
    Dl_info info;
    c->lm = NULL;
    c->lmid = LM_ID_BASE;
    if (!dladdr1(ra, &info, (void **)&c->lm, RTLD_DL_LINKMAP)) {
        c->lm = NULL;
    }
    if (c->lm && dlinfo(c->lm, RTLD_DI_LMID, &c->lmid) != 0) {
        c->lmid = LM_ID_BASE;
    }
}

/* The directory of `lm`'s file, as $ORIGIN means it. */
static size_t origin_of(const struct link_map *lm, char *buf, size_t cap)
{
    size_t n;
    if (!lm->l_name || !lm->l_name[0]) {
        ssize_t k = readlink("/proc/self/exe", buf, cap - 1);
        if (k <= 0) {
            return 0;
        }
        n = (size_t)k;
    } else {
        n = strlen(lm->l_name);
        if (n >= cap) {
            return 0;
        }
        memcpy(buf, lm->l_name, n);
    }
    while (n > 0 && buf[n - 1] != '/') {
        n--;
    }
    if (n > 1) {
        n--; /* drop the trailing slash, keep "/" alone */
    }
    buf[n] = 0;
    return n;
}

static int ident_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
}

/* Replace $ORIGIN and ${ORIGIN} by the caller's directory. $LIB and
 * $PLATFORM mean the same from any caller: glibc expands them. Returns 0
 * when the result does not fit. */
static int expand_origin(const struct link_map *lm, const char *file, char *out, size_t cap)
{
    char origin[PATH_MAX];
    size_t olen = origin_of(lm, origin, sizeof origin);
    size_t n = 0;
    while (*file) {
        size_t tok = 0;
        if (strncmp(file, "$ORIGIN", 7) == 0 && !ident_char(file[7])) {
            tok = 7;
        } else if (strncmp(file, "${ORIGIN}", 9) == 0) {
            tok = 9;
        }
        const char *src = tok ? origin : file;
        size_t len = tok ? olen : 1;
        if (n + len >= cap) {
            return 0;
        }
        memcpy(out + n, src, len);
        n += len;
        file += tok ? tok : 1;
    }
    out[n] = 0;
    return 1;
}

/* The directories glibc searches for a bare name loaded from `lm` (its
 * RPATHs, LD_LIBRARY_PATH, its RUNPATH, the system directories; not the
 * cache), in mmap'd memory the caller releases with mem_unmap(*si, *bytes). */
static int search_list(struct link_map *lm, Dl_serinfo **si, size_t *bytes)
{
    Dl_serinfo size;
    if (dlinfo(lm, RTLD_DI_SERINFOSIZE, &size) != 0) {
        return 0;
    }
    *bytes = size.dls_size;
    *si = mem_map(size.dls_size);
    if (!*si) {
        return 0;
    }
    (*si)->dls_size = size.dls_size;
    (*si)->dls_cnt = size.dls_cnt;
    if (dlinfo(lm, RTLD_DI_SERINFO, *si) != 0) {
        mem_unmap(*si, *bytes);
        return 0;
    }
    return 1;
}

static int listed(const Dl_serinfo *si, const char *dir)
{
    for (unsigned i = 0; si && i < si->dls_cnt; i++) {
        if (strcmp(si->dls_serpath[i].dls_name, dir) == 0) {
            return 1;
        }
    }
    return 0;
}

/* An object glibc would accept on this machine: ELF, 64-bit, x86-64. */
static int loadable(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    ElfW(Ehdr) eh;
    ssize_t n = read(fd, &eh, sizeof eh);
    close(fd);
    return n == (ssize_t)sizeof eh && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
           eh.e_machine == EM_X86_64;
}

/* A bare name is searched in the caller's directories in glibc's order.
 * The first that holds the file decides: one that glibc also searches when
 * the recorder is the caller (LD_LIBRARY_PATH, the system directories)
 * leaves the name bare, glibc finds the same file from here; one only the
 * caller has (its RUNPATH or RPATH) gives the full path. */
static int search_as_caller(struct link_map *caller, const char *file, char *out, size_t cap)
{
    static char self_anchor;
    Dl_info info;
    struct link_map *self = NULL;
    Dl_serinfo *theirs = NULL, *ours = NULL;
    size_t their_bytes = 0, our_bytes = 0;
    int found = 0;
    if (!dladdr1(&self_anchor, &info, (void **)&self, RTLD_DL_LINKMAP) || !self) {
        return 0;
    }
    if (!search_list(caller, &theirs, &their_bytes)) {
        return 0;
    }
    if (!search_list(self, &ours, &our_bytes)) {
        ours = NULL;
    }
    size_t flen = strlen(file);
    for (unsigned i = 0; i < theirs->dls_cnt; i++) {
        const char *dir = theirs->dls_serpath[i].dls_name;
        size_t dlen = strlen(dir);
        if (dlen + 1 + flen >= cap) {
            continue;
        }
        memcpy(out, dir, dlen);
        out[dlen] = '/';
        memcpy(out + dlen + 1, file, flen + 1);
        if (loadable(out)) {
            found = !listed(ours, dir);
            break;
        }
    }
    mem_unmap(theirs, their_bytes);
    if (ours) {
        mem_unmap(ours, our_bytes);
    }
    return found;
}

/* The name to hand glibc so that, called from the recorder, it opens what
 * it would have opened called from `c`. Writes into out when it changes. */
static const char *as_caller(const struct caller *c, const char *file, char *out, size_t cap)
{
    if (!file || !c->lm) {
        return file;
    }
    if (strchr(file, '$')) {
        return expand_origin(c->lm, file, out, cap) ? out : file;
    }
    if (strchr(file, '/')) {
        return file;
    }
    /* A name already loaded (matched by soname) is found before any search. */
    void *h = deepbind_next_dlopen(file, RTLD_LAZY | RTLD_NOLOAD);
    if (h) {
        dlclose(h);
        return file;
    }
    return search_as_caller(c->lm, file, out, cap) ? out : file;
}

/* ---- which objects were loaded, and patching them ---- */

#define SNAPSHOT_MAX 4096

struct snapshot {
    struct got_module *mods;
    int n;
};

static int note_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct snapshot *s = data;
    if (s->n < SNAPSHOT_MAX) {
        got_module_from_phdr(&s->mods[s->n++], info);
    }
    return 0;
}

static int take_snapshot(struct snapshot *s)
{
    s->n = 0;
    s->mods = mem_map(SNAPSHOT_MAX * sizeof *s->mods);
    if (!s->mods) {
        return 0;
    }
    dl_iterate_phdr(note_module, s);
    return 1;
}

static void drop_snapshot(struct snapshot *s)
{
    mem_unmap(s->mods, SNAPSHOT_MAX * sizeof *s->mods);
    s->mods = NULL;
}

static int in_snapshot(const struct snapshot *s, const struct got_module *m)
{
    for (int i = 0; i < s->n; i++) {
        if (s->mods[i].bias == m->bias && s->mods[i].phdr == m->phdr) {
            return 1;
        }
    }
    return 0;
}

/* What got.c needs to decide each slot, looked up before it takes its
 * lock. */
struct plan {
    void *ours[PRELOAD_HOOKS]; /* our definitions */
    void *next[PRELOAD_HOOKS]; /* what each of them forwards to */
    void *scope[PRELOAD_HOOKS]; /* what the opened library's dependency tree defines */
};

static const char *hook_names[PRELOAD_HOOKS];
static void *hook_ours[PRELOAD_HOOKS];
static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

/* Our own definitions, looked up through a handle of our own library:
 * taking their addresses in C would give whichever definition the global
 * scope offers first. (A link_map is no handle for dlsym here: an object
 * that was never dlopen'ed has no search list.) */
static void find_hooks(void)
{
    static char self_anchor;
    Dl_info info;
    void *self = NULL;
    if (dladdr(&self_anchor, &info) && info.dli_fname) {
        self = deepbind_next_dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    }
    for (int i = 0; i < PRELOAD_HOOKS; i++) {
        hook_names[i] = preload_hook_name(i);
        hook_ours[i] = self ? dlsym(self, hook_names[i]) : NULL;
    }
    /* Kept open: the recorder is never unloaded (-z nodelete) anyway. */
}

/* A slot is redirected to our hook only when it leads to the very function
 * our hook forwards to: that call bypassed us. A slot bound to a function
 * the object defines itself, or to an allocator among its private
 * dependencies, stays as RTLD_DEEPBIND made it. A slot still pointing into
 * the object is not bound yet (lazy binding, its PLT entry): the loader
 * will bind it to what the opened library's dependency tree defines. */
static void *choose(void *ctx, const struct got_module *m, const struct got_slot *slot)
{
    const struct plan *p = ctx;
    int i = slot->name;
    void *bound = slot->cur;
    if (slot->defined_here || !p->ours[i] || !p->next[i]) {
        return NULL;
    }
    if ((uintptr_t)bound >= m->lo && (uintptr_t)bound < m->hi) {
        bound = p->scope[i];
    }
    return bound == p->next[i] ? p->ours[i] : NULL;
}

static void patch_one(struct plan *p, const struct got_module *m)
{
    Dl_info info;
    struct link_map *lm = NULL;
    Lmid_t lmid = LM_ID_BASE;
    if (!m->dynamic || !dladdr1((void *)m->lo, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm) {
        return;
    }
    /* Another namespace has its own libc: our hooks forward to the base
     * namespace's allocator, which must never see its blocks. */
    if (dlinfo(lm, RTLD_DI_LMID, &lmid) != 0 || lmid != LM_ID_BASE) {
        return;
    }
    int rc = got_patch(m, hook_names, PRELOAD_HOOKS, choose, p);
    if (rc < 0) {
        log_msg("cannot route a RTLD_DEEPBIND library's allocations through memrec", m->name);
    }
}

/* Patch every object loaded since `before` by the open that returned
 * `handle`. Another thread's dlopen may have loaded some of them too:
 * patching an object that binds to our hooks already changes nothing. No
 * lock of ours is held while the loader is asked anything: a library
 * constructor calling dlopen holds the loader's lock and may be waiting
 * for ours. */
static void patch_new(void *handle, const struct snapshot *before)
{
    struct snapshot after;
    struct plan *plan = mem_map(sizeof *plan); /* one per call: no lock needed */
    pthread_once(&hooks_once, find_hooks);
    got_forget_unloaded();
    if (plan && take_snapshot(&after)) {
        for (int i = 0; i < PRELOAD_HOOKS; i++) {
            plan->ours[i] = hook_ours[i];
            plan->next[i] = preload_hook_next(i);
            plan->scope[i] = dlsym(handle, hook_names[i]);
        }
        for (int k = 0; k < after.n; k++) {
            if (!in_snapshot(before, &after.mods[k])) {
                patch_one(plan, &after.mods[k]);
            }
        }
        drop_snapshot(&after);
    }
    mem_unmap(plan, sizeof *plan);
    dlerror(); /* our failed look-ups are no error of the program's */
}

void *deepbind_dlopen(const char *file, int flags)
{
    void *ra = __builtin_return_address(0);
    int saved = tstate.in_hook;
    tstate.in_hook = 1; /* the look-ups below allocate: pass them through */
    resolve_dlopen();
    if (!deepbind_next_dlopen) {
        tstate.in_hook = saved;
        return NULL; /* no dlopen after us: nothing can be opened */
    }
    struct caller c;
    find_caller(ra, &c);
    char path[PATH_MAX];
    const char *name = as_caller(&c, file, path, sizeof path);
    struct snapshot before = {NULL, 0};
    int deep = (flags & RTLD_DEEPBIND) && c.lmid == LM_ID_BASE && take_snapshot(&before);
    tstate.in_hook = saved;

    /* Outside the hook: the loader's allocations and the constructors'
     * are the program's, as in any dlopen. */
    void *h = c.lmid == LM_ID_BASE ? deepbind_next_dlopen(name, flags) : dlmopen(c.lmid, name, flags);

    if (deep) {
        tstate.in_hook = 1;
        if (h && init_is_ready() && atomic_load(&rec_enabled)) {
            patch_new(h, &before);
        }
        drop_snapshot(&before);
        tstate.in_hook = saved;
    }
    return h;
}
