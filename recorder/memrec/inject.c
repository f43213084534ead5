// SPDX-License-Identifier: MIT
/* Running a function call inside a thread of another process (inject.h).
 *
 * The thread is stopped with PTRACE_SEIZE + PTRACE_INTERRUPT; only it is
 * stopped, the others run on. A call is made by pointing its registers at
 * the function with the arguments in rdi, rsi, rdx and a return address
 * pushed below its stack (past the red zone); orig_rax = -1 keeps the
 * kernel from restarting an interrupted system call on top of our call.
 *
 * The return address is a trampoline: 0x90 bytes memrec writes once into
 * the slack after the end of the C library's code, in the last page of its
 * executable mapping (ptrace writes there copy the page for this process
 * only; the file and other processes are untouched). It saves the result,
 * makes a getpid() system call, where memrec, tracing system calls during
 * the call, stops the thread and reads the result, and then restores every
 * register of the thread as it was when stopped (from a block below the
 * stack that memrec wrote first: the general registers, the flags, the
 * XSAVE area; an interrupted system call set up to restart) and jumps back.
 * So from the moment the first call starts, the thread never depends on
 * memrec to get its state back: a memrec killed at any instant leaves it
 * running (the kernel detaches a dead tracer's tracees and they go on),
 * and memrec ends an attach by just letting the thread go from the stop.
 * Where there is no room for the trampoline, the call returns to address
 * 0 instead: the thread faults there, which ptrace reports as a SIGSEGV
 * stop with rip == 0, and memrec puts the registers back itself (a memrec
 * killed meanwhile then kills the program).
 *
 * The injected code allocates (dlopen does), so the thread must not be
 * stopped while it holds an allocator lock: its instruction pointer and the
 * return addresses near its stack pointer are checked against the C
 * library's allocation functions, and a busy thread is let go and stopped
 * again a moment later. x86-64 only. */
#define _GNU_SOURCE
#include "inject.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- the trampoline ----
 *
 * At entry (the injected function's ret) rsp points at the block memrec
 * wrote: [0] the result, [8] the XSAVE area's address, then r15 r14 r13
 * r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi rflags (the order of the
 * pops). The thread's own rsp and rip are in the two slots after the code,
 * read rip-relative once every general register is back. */
static const uint8_t tramp_code[] = {
    0x48, 0x89, 0x04, 0x24, /* mov [rsp], rax: the result */
    0xb8, 0x27, 0x00, 0x00, 0x00, /* mov eax, 39 (getpid) */
    0x0f, 0x05, /* syscall: memrec's stop, at TRAMP_STOP */
    0x48, 0x8b, 0x5c, 0x24, 0x08, /* mov rbx, [rsp+8] */
    0xb8, 0xff, 0xff, 0xff, 0xff, /* mov eax, -1 */
    0xba, 0xff, 0xff, 0xff, 0xff, /* mov edx, -1 */
    0x48, 0x0f, 0xae, 0x2b, /* xrstor64 [rbx]: every vector register */
    0x48, 0x83, 0xc4, 0x10, /* add rsp, 16 */
    0x41, 0x5f, 0x41, 0x5e, 0x41, 0x5d, /* pop r15, r14, r13 */
    0x41, 0x5c, 0x5d, 0x5b, /* pop r12, rbp, rbx */
    0x41, 0x5b, 0x41, 0x5a, 0x41, 0x59, /* pop r11, r10, r9 */
    0x41, 0x58, 0x58, 0x59, 0x5a, /* pop r8, rax, rcx, rdx */
    0x5e, 0x5f, 0x9d, /* pop rsi, rdi; popfq */
    0x48, 0x8b, 0x25, 0x3f, 0x00, 0x00, 0x00, /* mov rsp, [rip + 0x3f]: TRAMP_SLOTS */
    0xff, 0x25, 0x41, 0x00, 0x00, 0x00, /* jmp [rip + 0x41]: TRAMP_SLOTS + 8 */
};
#define TRAMP_STOP 11 /* the instruction after the syscall */
#define TRAMP_SLOTS 0x80 /* the thread's rsp, then its rip */
#define TRAMP_SIZE (TRAMP_SLOTS + 16)
#define TRAMP_BLOCK (16 + 16 * 8) /* the block: result, XSAVE address, 16 registers */
/* The result slot before the call: no int or pointer a call returns. */
#define TRAMP_NO_RESULT 0xa5a5a5a5a5a5a5a5ull

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void nap_ms(int ms)
{
    struct timespec t = {0, (long)ms * 1000000L};
    nanosleep(&t, NULL);
}

/* ---- why not ---- */

static int read_small(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n < 0) {
        return -1;
    }
    buf[n] = 0;
    return (int)n;
}

/* Whether another process traces `pid`, said in `buf`: another memrec
 * attaching at the same moment (the loser's ptrace fails, as root too),
 * or a debugger. */
static int traced_by(pid_t pid, char *buf, size_t cap)
{
    char path[64], st[4096], comm[64] = "";
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if (read_small(path, st, sizeof st) < 0) {
        return 0;
    }
    const char *t = strstr(st, "\nTracerPid:");
    int tracer = 0;
    if (!t || sscanf(t + 11, "%d", &tracer) != 1 || tracer == 0) {
        return 0;
    }
    snprintf(path, sizeof path, "/proc/%d/comm", tracer);
    if (read_small(path, comm, sizeof comm) > 0) {
        comm[strcspn(comm, "\n")] = 0;
    }
    if (strcmp(comm, "memrec") == 0) {
        snprintf(buf, cap, "another memrec (pid %d) is attaching to it", tracer);
    } else {
        snprintf(buf, cap, "not permitted: process %d (%s) is already tracing it", tracer, *comm ? comm : "?");
    }
    return 1;
}

const char *inject_obstacle(pid_t pid, char *buf, size_t cap)
{
    char path[64], st[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if (pid <= 0 || read_small(path, st, sizeof st) < 0) {
        snprintf(buf, cap, "no such process");
        return buf;
    }
    if (pid == getpid()) {
        snprintf(buf, cap, "that is memrec itself");
        return buf;
    }
    const char *u = strstr(st, "\nUid:");
    unsigned ruid = 0, euid = 0;
    if (u && sscanf(u + 5, "%u %u", &ruid, &euid) == 2 && geteuid() != 0 && (euid != geteuid() || ruid != getuid())) {
        snprintf(buf, cap, "not permitted: it belongs to another user (uid %u)", euid);
        return buf;
    }
    if (traced_by(pid, buf, cap)) {
        return buf;
    }
    const char *s = strstr(st, "\nState:");
    if (s && strstr(s, "(zombie)") && strstr(s, "(zombie)") < strchr(s + 1, '\n')) {
        snprintf(buf, cap, "it has exited (zombie)");
        return buf;
    }
    if (s && (strstr(s, "(stopped)") || strstr(s, "(tracing stop)")) && strstr(s, "stop)") < strchr(s + 1, '\n')) {
        /* Its threads would take the injected calls, but the recorder's own
         * thread could not run until it is continued: a detach would wait
         * for it. */
        snprintf(buf, cap, "it is stopped (SIGSTOP or job control); continue it first (kill -CONT %d)", (int)pid);
        return buf;
    }
    char scope[16];
    if (read_small("/proc/sys/kernel/yama/ptrace_scope", scope, sizeof scope) > 0 && geteuid() != 0) {
        int v = atoi(scope);
        if (v == 3) {
            snprintf(buf, cap, "not permitted: kernel.yama.ptrace_scope is 3 (no process may be traced)");
            return buf;
        }
        if (v == 2) {
            snprintf(buf, cap, "not permitted: kernel.yama.ptrace_scope is 2 (only with CAP_SYS_PTRACE, e.g. as root)");
            return buf;
        }
        /* 1: only descendants; a process may still allow us with
         * prctl(PR_SET_PTRACER): the attach itself tells. */
    }
    return NULL;
}

/* ---- the C library ---- */

struct elf_image {
    const uint8_t *p;
    size_t n;
};

static int sym_lookup(const struct elf_image *e, const char *name, uint64_t *value, uint64_t *size)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)e->p;
    if (e->n < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shoff == 0 || eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > e->n) {
        return -1;
    }
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(e->p + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum) {
            continue;
        }
        const Elf64_Shdr *strs = &sh[sh[i].sh_link];
        if (sh[i].sh_offset + sh[i].sh_size > e->n || strs->sh_offset + strs->sh_size > e->n) {
            return -1;
        }
        const Elf64_Sym *syms = (const Elf64_Sym *)(e->p + sh[i].sh_offset);
        size_t count = sh[i].sh_size / sizeof *syms;
        const char *str = (const char *)(e->p + strs->sh_offset);
        for (size_t k = 0; k < count; k++) {
            if (syms[k].st_name >= strs->sh_size || syms[k].st_value == 0 ||
                ELF64_ST_TYPE(syms[k].st_info) != STT_FUNC) {
                continue;
            }
            if (strcmp(str + syms[k].st_name, name) == 0) {
                *value = syms[k].st_value;
                *size = syms[k].st_size;
                return 0;
            }
        }
    }
    return -1;
}

/* Where the trampoline fits in the object of image `e` loaded at `base`:
 * after the end of its executable segment, in the slack of its last page
 * (the mapping is whole pages; there the file holds padding). 0 when the
 * slack is too small. */
static uint64_t tramp_place(const struct elf_image *e, uint64_t base)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)e->p;
    if (eh->e_phoff == 0 || eh->e_phentsize != sizeof(Elf64_Phdr) ||
        eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > e->n) {
        return 0;
    }
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(e->p + eh->e_phoff);
    uint64_t at = 0;
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X)) {
            continue;
        }
        uint64_t end = base + ph[i].p_vaddr + ph[i].p_memsz;
        uint64_t page_end = (end + 4095) & ~(uint64_t)4095;
        uint64_t t = (end + 64 + 63) & ~(uint64_t)63;
        if (t + TRAMP_SIZE <= page_end) {
            at = t; /* the last one: the end of the code */
        }
    }
    return at;
}

/* The load bias of the object mapped from `path` in `pid`: the start of
 * its mapping at file offset 0 (shared libraries link at address 0). */
static int find_mapping(pid_t pid, const char *want, char *path, size_t cap, uint64_t *base)
{
    char mp[64];
    snprintf(mp, sizeof mp, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(mp, "re");
    if (!f) {
        return -1;
    }
    char line[4096 + 128];
    int found = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long long lo, off;
        int pos = 0;
        if (sscanf(line, "%llx-%*x %*s %llx %*s %*s %n", &lo, &off, &pos) < 2 || pos == 0) {
            continue;
        }
        char *p = line + pos;
        p[strcspn(p, "\n")] = 0;
        const char *b = strrchr(p, '/');
        if (!b || off != 0) {
            continue;
        }
        b++;
        if (strncmp(b, want, strlen(want)) == 0) {
            snprintf(path, cap, "%s", p);
            *base = lo;
            found = 0;
            break;
        }
    }
    fclose(f);
    return found;
}

static int map_file(pid_t pid, const char *path, struct elf_image *e)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        /* Another mount namespace: through the process's root. */
        char alt[4200];
        snprintf(alt, sizeof alt, "/proc/%d/root%s", (int)pid, path);
        fd = open(alt, O_RDONLY | O_CLOEXEC);
    }
    if (fd < 0) {
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        return -1;
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        return -1;
    }
    e->p = p;
    e->n = (size_t)st.st_size;
    return 0;
}

int inject_find_libc(pid_t pid, struct inject_libc *lc, char *err, size_t cap)
{
    memset(lc, 0, sizeof *lc);
    uint64_t base;
    if (find_mapping(pid, "libc.so.6", lc->path, sizeof lc->path, &base) != 0 &&
        find_mapping(pid, "libc-", lc->path, sizeof lc->path, &base) != 0) {
        char path[64], st[256];
        snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
        if (read_small(path, st, sizeof st) < 0 || strstr(st, "(zombie)")) {
            snprintf(err, cap, "it exited during the attach");
        } else {
            snprintf(err, cap, "it has no C library loaded (a static executable?)");
        }
        return -1;
    }
    struct elf_image e;
    if (map_file(pid, lc->path, &e) != 0) {
        snprintf(err, cap, "cannot read its C library %s: %s", lc->path, strerror(errno));
        return -1;
    }
    uint64_t v, n;
    if (sym_lookup(&e, "dlopen", &v, &n) == 0) {
        lc->dlopen = base + v;
    }
    if (sym_lookup(&e, "dlsym", &v, &n) == 0) {
        lc->dlsym = base + v;
    }
    if (sym_lookup(&e, "dlerror", &v, &n) == 0) {
        lc->dlerror = base + v;
    }
    static const char *const busy[] = {"malloc",       "free",     "calloc",         "realloc",
                                       "reallocarray", "memalign", "posix_memalign", "aligned_alloc",
                                       "valloc",       "pvalloc",  "malloc_trim",    "pthread_create",
                                       "fork",         "dlopen",   "dlclose",        "exit"};
    for (size_t i = 0; i < sizeof busy / sizeof *busy && lc->nbusy < 16; i++) {
        if (sym_lookup(&e, busy[i], &v, &n) == 0 && n > 0) {
            lc->busy_lo[lc->nbusy] = base + v;
            lc->busy_hi[lc->nbusy] = base + v + n;
            lc->nbusy++;
        }
    }
    lc->tramp_at = tramp_place(&e, base);
    munmap((void *)e.p, e.n);
    if (!lc->dlopen || !lc->dlsym) {
        /* glibc before 2.34 keeps them in libdl, loaded only on demand. */
        char dl[4096];
        struct elf_image d;
        if (find_mapping(pid, "libdl.so.2", dl, sizeof dl, &base) == 0 && map_file(pid, dl, &d) == 0) {
            if (sym_lookup(&d, "dlopen", &v, &n) == 0) {
                lc->dlopen = base + v;
            }
            if (sym_lookup(&d, "dlsym", &v, &n) == 0) {
                lc->dlsym = base + v;
            }
            if (sym_lookup(&d, "dlerror", &v, &n) == 0) {
                lc->dlerror = base + v;
            }
            munmap((void *)d.p, d.n);
        }
    }
    if (!lc->dlopen || !lc->dlsym) {
        snprintf(err, cap, "its C library %s has no dlopen/dlsym memrec can call", lc->path);
        return -1;
    }
    return 0;
}

void inject_add_busy_object(pid_t pid, struct inject_libc *lc, const char *base)
{
    char mp[64];
    snprintf(mp, sizeof mp, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(mp, "re");
    if (!f) {
        return;
    }
    char line[4096 + 128];
    int max = (int)(sizeof lc->busy_lo / sizeof *lc->busy_lo);
    while (fgets(line, sizeof line, f) && lc->nbusy < max) {
        unsigned long long lo, hi;
        char perms[8];
        int pos = 0;
        if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %n", &lo, &hi, perms, &pos) < 3 || pos == 0 ||
            !strchr(perms, 'x')) {
            continue;
        }
        char *p = line + pos;
        p[strcspn(p, "\n")] = 0;
        const char *b = strrchr(p, '/');
        if (b && strcmp(b + 1, base) == 0) {
            lc->busy_lo[lc->nbusy] = lo;
            lc->busy_hi[lc->nbusy] = hi;
            lc->nbusy++;
        }
    }
    fclose(f);
}

/* ---- stopping, calling, resuming ---- */

static int wait_stop(const struct inject *in, pid_t tid, int *status, int timeout_ms)
{
    uint64_t end = now_ns() + (uint64_t)timeout_ms * 1000000u;
    int polls = 0;
    for (;;) {
        pid_t r = waitpid(tid, status, __WALL | WNOHANG);
        if (r == tid) {
            return 0;
        }
        if (r < 0 && errno != EINTR) {
            return -1;
        }
        if (now_ns() > end) {
            errno = ETIMEDOUT;
            return -1;
        }
        if (in && in->idle) {
            in->idle(in->idle_ctx);
        }
        /* Short naps first: during a call every system call of the thread
         * is a stop (see inject_call()), each one waiting for us. */
        if (++polls < 200) {
            struct timespec t = {0, 20 * 1000};
            nanosleep(&t, NULL);
        } else {
            nap_ms(1);
        }
    }
}

static int in_busy(const struct inject_libc *lc, uint64_t a)
{
    for (int i = 0; i < lc->nbusy; i++) {
        if (a >= lc->busy_lo[i] && a < lc->busy_hi[i]) {
            return 1;
        }
    }
    return 0;
}

/* Whether the thread was stopped while blocked in a system call that
 * waits for the outside world: glibc's allocator never makes one of these
 * (it maps, unmaps, protects and waits for its own locks with futex, and
 * a thread waiting for a lock holds none of the allocator's), so such a
 * thread is outside it, whatever its stack holds. The stack words above
 * the stack pointer are not enough to tell: a frame's unwritten slots keep
 * return addresses of calls that ended long ago (bash blocked in open() on
 * a FIFO holds some of malloc's). */
static int blocked_outside(const struct user_regs_struct *r)
{
    static const long waits[] = {
        SYS_read,     SYS_readv,      SYS_pread64,     SYS_preadv,        SYS_recvfrom,
        SYS_recvmsg,  SYS_recvmmsg,   SYS_accept,      SYS_accept4,       SYS_connect,
        SYS_open,     SYS_openat,     SYS_poll,        SYS_ppoll,         SYS_select,
        SYS_pselect6, SYS_epoll_wait, SYS_epoll_pwait, SYS_nanosleep,     SYS_clock_nanosleep,
        SYS_wait4,    SYS_waitid,     SYS_pause,       SYS_rt_sigsuspend, SYS_rt_sigtimedwait,
        SYS_futex,    SYS_msgrcv,     SYS_semtimedop,  SYS_flock,         SYS_sendto,
        SYS_sendmsg,
    };
    long nr = (long)r->orig_rax;
    long rc = (long)r->rax;
    /* Interrupted in a system call, the kernel leaves its number in
     * orig_rax and a restart code (or -EINTR) in rax. */
    if (nr < 0 || !(rc == -4 || (rc <= -512 && rc >= -516))) {
        return 0;
    }
    for (size_t i = 0; i < sizeof waits / sizeof *waits; i++) {
        if (waits[i] == nr) {
            return 1;
        }
    }
    return 0;
}

/* Whether the stopped thread may be inside an allocator function. */
static int thread_busy(pid_t pid, const struct inject_libc *lc, const struct user_regs_struct *r)
{
    if (in_busy(lc, r->rip)) {
        return 1;
    }
    if (blocked_outside(r)) {
        return 0;
    }
    uint64_t words[512];
    struct iovec local = {words, sizeof words};
    struct iovec remote = {(void *)(uintptr_t)r->rsp, sizeof words};
    ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    for (ssize_t i = 0; i < n / 8; i++) {
        if (in_busy(lc, words[i])) {
            return 1;
        }
    }
    return 0;
}

static void note_signal(struct inject *in, int sig)
{
    if (in->npending < (int)(sizeof in->pending / sizeof *in->pending)) {
        in->pending[in->npending++] = sig;
    }
}

static int save_fp(struct inject *in)
{
    struct iovec v = {in->xstate, sizeof in->xstate};
    if (ptrace(PTRACE_GETREGSET, in->tid, (void *)(uintptr_t)NT_X86_XSTATE, &v) == 0) {
        in->xstate_len = v.iov_len;
        return 0;
    }
    in->xstate_len = 0;
    return ptrace(PTRACE_GETFPREGS, in->tid, 0, &in->fpregs) == 0 ? 0 : -1;
}

static void restore_fp(struct inject *in)
{
    if (in->xstate_len) {
        struct iovec v = {in->xstate, in->xstate_len};
        ptrace(PTRACE_SETREGSET, in->tid, (void *)(uintptr_t)NT_X86_XSTATE, &v);
    } else {
        ptrace(PTRACE_SETFPREGS, in->tid, 0, &in->fpregs);
    }
}

/* Write `len` bytes at `at` in the target: process_vm_writev, or word by
 * word with ptrace where the pages are not writable (the code's). */
static int poke(const struct inject *in, uint64_t at, const void *data, size_t len)
{
    struct iovec local = {(void *)data, len};
    struct iovec remote = {(void *)(uintptr_t)at, len};
    if (process_vm_writev(in->pid, &local, 1, &remote, 1, 0) == (ssize_t)len) {
        return 0;
    }
    for (size_t i = 0; i < len; i += 8) {
        uint64_t w = 0;
        if (i + 8 > len) {
            errno = 0;
            w = (uint64_t)ptrace(PTRACE_PEEKDATA, in->tid, (void *)(uintptr_t)(at + i), 0);
            if (errno) {
                return -1;
            }
        }
        memcpy(&w, (const uint8_t *)data + i, len - i < 8 ? len - i : 8);
        if (ptrace(PTRACE_POKEDATA, in->tid, (void *)(uintptr_t)(at + i), (void *)(uintptr_t)w) != 0) {
            return -1;
        }
    }
    return 0;
}

/* The registers the thread resumes with: the saved ones, and if it was
 * stopped inside an interrupted system call that the kernel would have
 * restarted, set up as the kernel sets them up to restart it (rip back
 * over the syscall instruction, the number back in rax), since the
 * trampoline's jump does not pass through the kernel. */
static struct user_regs_struct resume_regs(const struct user_regs_struct *r)
{
    struct user_regs_struct x = *r;
    if ((int64_t)r->orig_rax >= 0) {
        switch ((int64_t)r->rax) {
        case -512: /* ERESTARTSYS */
        case -513: /* ERESTARTNOINTR */
        case -514: /* ERESTARTNOHAND: no handler runs here */
            x.rax = r->orig_rax;
            x.rip -= 2;
            break;
        case -516: /* ERESTART_RESTARTBLOCK: nanosleep and the like go on */
            x.rax = SYS_restart_syscall;
            x.rip -= 2;
            break;
        default: break;
        }
    }
    return x;
}

/* Put the trampoline in place for this attach: its code (once per
 * process: an earlier attach may have left it), the thread's XSAVE area
 * below its red zone, and the rsp and rip to resume at. Without room for
 * it, or without the XSAVE area, in->tramp stays 0: the old way. */
static void tramp_setup(struct inject *in, const struct inject_libc *lc)
{
    in->tramp = 0;
    if (!lc->tramp_at || !in->xstate_len) {
        return;
    }
    uint8_t have[TRAMP_SIZE];
    struct iovec local = {have, sizeof have};
    struct iovec remote = {(void *)(uintptr_t)lc->tramp_at, sizeof have};
    if (process_vm_readv(in->pid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof have) {
        return;
    }
    if (memcmp(have, tramp_code, sizeof tramp_code) != 0) {
        for (size_t i = 0; i < TRAMP_SIZE; i++) {
            if (have[i]) {
                return; /* not padding: leave it alone */
            }
        }
        if (poke(in, lc->tramp_at, tramp_code, sizeof tramp_code) != 0) {
            return;
        }
    }
    in->resume = resume_regs(&in->saved);
    uint64_t x = (in->saved.rsp - 256 - in->xstate_len) & ~(uint64_t)63;
    uint64_t slots[2] = {in->resume.rsp, in->resume.rip};
    if (poke(in, x, in->xstate, in->xstate_len) != 0 ||
        poke(in, lc->tramp_at + TRAMP_SLOTS, slots, sizeof slots) != 0) {
        return;
    }
    in->xsave_at = x;
    in->scratch = x & ~(uint64_t)15;
    in->tramp = lc->tramp_at;
}

int inject_begin(struct inject *in, pid_t pid, const struct inject_libc *lc, int timeout_ms, char *err, size_t cap)
{
    void (*idle)(void *) = in->idle;
    void *idle_ctx = in->idle_ctx;
    const volatile int *cancel = in->cancel;
    memset(in, 0, sizeof *in);
    in->idle = idle;
    in->idle_ctx = idle_ctx;
    in->cancel = cancel;
    in->pid = pid;
    in->tid = pid;
    if (ptrace(PTRACE_SEIZE, in->tid, 0, (void *)(uintptr_t)PTRACE_O_TRACESYSGOOD) != 0) {
        int e = errno;
        if (e == EPERM) {
            char scope[16] = "";
            read_small("/proc/sys/kernel/yama/ptrace_scope", scope, sizeof scope);
            if (atoi(scope) == 1) {
                snprintf(err, cap,
                         "not permitted: kernel.yama.ptrace_scope is 1 (only a parent may trace; run memrec as "
                         "root or with CAP_SYS_PTRACE, or set it to 0)");
            } else if (!traced_by(pid, err, cap)) {
                snprintf(err, cap, "not permitted to trace it (no CAP_SYS_PTRACE, or it is not dumpable)");
            }
        } else if (e == ESRCH) {
            snprintf(err, cap, "no such process");
        } else {
            snprintf(err, cap, "cannot trace it: %s", strerror(e));
        }
        return -1;
    }
    uint64_t end = now_ns() + (uint64_t)timeout_ms * 1000000u;
    for (int attempt = 0;; attempt++) {
        int st;
        if (ptrace(PTRACE_INTERRUPT, in->tid, 0, 0) != 0 || wait_stop(NULL, in->tid, &st, 2000) != 0) {
            snprintf(err, cap, "cannot stop it: %s", strerror(errno));
            ptrace(PTRACE_DETACH, in->tid, 0, 0);
            return -1;
        }
        if (WIFEXITED(st) || WIFSIGNALED(st)) {
            snprintf(err, cap, "it exited while memrec attached");
            return -1;
        }
        uint64_t t0 = now_ns();
        int event = st >> 16;
        if (event != PTRACE_EVENT_STOP && WIFSTOPPED(st)) {
            /* A signal of the program's own stopped it first: hand it over. */
            ptrace(PTRACE_CONT, in->tid, 0, (void *)(uintptr_t)WSTOPSIG(st));
            continue;
        }
        if (ptrace(PTRACE_GETREGS, in->tid, 0, &in->saved) != 0) {
            snprintf(err, cap, "cannot read its registers: %s", strerror(errno));
            ptrace(PTRACE_DETACH, in->tid, 0, 0);
            return -1;
        }
        if (!thread_busy(pid, lc, &in->saved)) {
            if (save_fp(in) != 0) {
                snprintf(err, cap, "cannot read its floating-point registers: %s", strerror(errno));
                ptrace(PTRACE_DETACH, in->tid, 0, 0);
                return -1;
            }
            in->t0 = t0;
            /* Below the red zone, 16-byte aligned, with room for strings. */
            in->scratch = (in->saved.rsp - 256) & ~(uint64_t)15;
            tramp_setup(in, lc);
            return 0;
        }
        if (now_ns() > end) {
            snprintf(err, cap, "it stayed inside its allocator for %d ms; try again", timeout_ms);
            ptrace(PTRACE_DETACH, in->tid, 0, 0);
            return -1;
        }
        if (in->cancel && *in->cancel) {
            snprintf(err, cap, "interrupted");
            ptrace(PTRACE_DETACH, in->tid, 0, 0);
            return -2;
        }
        ptrace(PTRACE_CONT, in->tid, 0, 0);
        if (in->idle) {
            in->idle(in->idle_ctx);
        }
        nap_ms(attempt < 10 ? 1 : 5);
    }
}

uint64_t inject_put(struct inject *in, const void *data, size_t len)
{
    uint64_t at = (in->scratch - len) & ~(uint64_t)15;
    if (poke(in, at, data, len) != 0) {
        return 0;
    }
    in->scratch = at;
    return at;
}

/* The thread's return address and the trampoline's block for a call made
 * with its stack at `blk` (see tramp_code). */
static int put_block(const struct inject *in, uint64_t blk)
{
    const struct user_regs_struct *r = &in->resume;
    uint64_t w[1 + 2 + 16] = {
        in->tramp, TRAMP_NO_RESULT, in->xsave_at, r->r15, r->r14, r->r13, r->r12, r->rbp, r->rbx,    r->r11,
        r->r10,    r->r9,           r->r8,        r->rax, r->rcx, r->rdx, r->rsi, r->rdi, r->eflags,
    };
    return poke(in, blk - 8, w, sizeof w);
}

static uint64_t read_word(const struct inject *in, uint64_t at)
{
    uint64_t w = 0;
    struct iovec local = {&w, 8};
    struct iovec remote = {(void *)(uintptr_t)at, 8};
    if (process_vm_readv(in->pid, &local, 1, &remote, 1, 0) != 8) {
        errno = 0;
        w = (uint64_t)ptrace(PTRACE_PEEKDATA, in->tid, (void *)(uintptr_t)at, 0);
    }
    return w;
}

/* A free-running call (see inject_call()): wait for its result slot,
 * serving `idle`, and for stops: a signal of the program's while the call
 * runs is kept for later, like a stopped call's. */
static int free_call(struct inject *in, uint64_t *ret, int timeout_ms, char *err, size_t cap)
{
    uint64_t end = now_ns() + (uint64_t)timeout_ms * 1000000u;
    for (int polls = 0;; polls++) {
        uint64_t res = read_word(in, in->result_at);
        if (res != TRAMP_NO_RESULT) {
            *ret = res;
            in->running = 0;
            in->released = 1;
            return 0;
        }
        int st;
        pid_t r = waitpid(in->tid, &st, __WALL | WNOHANG);
        if (r == in->tid) {
            if (WIFEXITED(st) || WIFSIGNALED(st)) {
                in->running = 0;
                snprintf(err, cap, "the process ended during the call");
                return -1;
            }
            int sig = WSTOPSIG(st);
            if ((st >> 16) != PTRACE_EVENT_STOP && sig == SIGSEGV) {
                in->running = 0;
                in->crashed = 1;
                snprintf(err, cap, "the call crashed (SIGSEGV)");
                return -1;
            }
            if ((st >> 16) != PTRACE_EVENT_STOP && sig != (SIGTRAP | 0x80)) {
                note_signal(in, sig);
            }
            ptrace(PTRACE_CONT, in->tid, 0, 0);
            continue;
        }
        if (now_ns() > end) {
            snprintf(err, cap, "the call did not return within %d ms", timeout_ms);
            return -1;
        }
        in->idle(in->idle_ctx);
        struct timespec t = {0, polls < 200 ? 20 * 1000 : 1000 * 1000};
        nanosleep(&t, NULL);
    }
}

int inject_call(struct inject *in, uint64_t fn, uint64_t a, uint64_t b, uint64_t c, uint64_t *ret, int timeout_ms,
                char *err, size_t cap)
{
    struct user_regs_struct r = in->saved;
    uint64_t sp, blk = 0;
    if (in->tramp) {
        /* At the function's entry, rsp + 8 is 16-byte aligned. */
        blk = (in->scratch - 64 - TRAMP_BLOCK) & ~(uint64_t)15;
        sp = blk - 8;
        if (put_block(in, blk) != 0) {
            snprintf(err, cap, "cannot write to its stack: %s", strerror(errno));
            return -1;
        }
    } else {
        uint64_t zero = 0;
        sp = ((in->scratch - 64) & ~(uint64_t)15) - 8;
        if (poke(in, sp, &zero, 8) != 0) {
            snprintf(err, cap, "cannot write to its stack: %s", strerror(errno));
            return -1;
        }
    }
    r.rsp = sp;
    r.rip = fn;
    r.rdi = a;
    r.rsi = b;
    r.rdx = c;
    r.rax = 0;
    r.orig_rax = (uint64_t)-1;
    /* With the trampoline, every system call of the thread stops it until
     * the trampoline's own: the call's end. But not a call that talks to
     * us (`idle` answers it): stopped in its connect() while we wait for
     * its request, it would wait for us. That call runs free instead, to
     * the end of the trampoline and back into the program, and its end is
     * seen in the result slot: it must be the last call (inject.h). */
    int free_run = in->tramp && in->idle;
    if (free_run) {
        uint64_t none = TRAMP_NO_RESULT;
        if (!in->result_at || poke(in, in->result_at, &none, 8) != 0) {
            snprintf(err, cap, "cannot prepare the call's result: %s", in->result_at ? strerror(errno) : "no slot");
            return -1;
        }
    }
    enum __ptrace_request go = in->tramp && !free_run ? PTRACE_SYSCALL : PTRACE_CONT;
    if (ptrace(PTRACE_SETREGS, in->tid, 0, &r) != 0 || ptrace(go, in->tid, 0, 0) != 0) {
        snprintf(err, cap, "cannot start the call: %s", strerror(errno));
        return -1;
    }
    in->at_tramp = 0;
    in->running = 1;
    if (free_run) {
        return free_call(in, ret, timeout_ms, err, cap);
    }
    for (;;) {
        int st;
        if (wait_stop(in, in->tid, &st, timeout_ms) != 0) {
            snprintf(err, cap, "the call did not return within %d ms", timeout_ms);
            return -1;
        }
        if (WIFEXITED(st) || WIFSIGNALED(st)) {
            in->running = 0;
            snprintf(err, cap, "the process ended during the call");
            return -1;
        }
        int sig = WSTOPSIG(st);
        if ((st >> 16) == PTRACE_EVENT_STOP) {
            ptrace(go, in->tid, 0, 0);
            continue;
        }
        struct user_regs_struct now;
        if (sig == (SIGTRAP | 0x80)) {
            if (ptrace(PTRACE_GETREGS, in->tid, 0, &now) == 0 && now.rip == in->tramp + TRAMP_STOP &&
                now.orig_rax == SYS_getpid && now.rsp == blk) {
                *ret = read_word(in, blk);
                in->running = 0;
                in->at_tramp = 1;
                return 0;
            }
            ptrace(go, in->tid, 0, 0); /* a system call of the function's */
            continue;
        }
        if (sig == SIGSEGV) {
            if (ptrace(PTRACE_GETREGS, in->tid, 0, &now) == 0 && now.rip == 0 && !in->tramp) {
                *ret = now.rax;
                in->running = 0;
                return 0;
            }
            in->running = 0;
            in->crashed = 1;
            snprintf(err, cap, "the call crashed (SIGSEGV at %#llx)", (unsigned long long)now.rip);
            return -1;
        }
        /* The program's signal, for later: the thread is not its own now. */
        note_signal(in, sig);
        ptrace(go, in->tid, 0, 0);
    }
}

void inject_end(struct inject *in)
{
    if (in->tramp && !in->crashed) {
        /* A call that did not return in time runs on to the trampoline by
         * itself, and a free-running one is back in the program: stop the
         * thread where it is, to detach. Back in the program, a signal
         * that stops it first is its own: delivered. */
        if (in->running || in->released) {
            int st;
            if (ptrace(PTRACE_INTERRUPT, in->tid, 0, 0) != 0) {
                return; /* gone, or we end and the kernel lets it go */
            }
            for (;;) {
                if (wait_stop(NULL, in->tid, &st, 2000) != 0 || WIFEXITED(st) || WIFSIGNALED(st)) {
                    return;
                }
                int sig = WSTOPSIG(st);
                if ((st >> 16) == PTRACE_EVENT_STOP || sig == (SIGTRAP | 0x80)) {
                    break;
                }
                ptrace(PTRACE_CONT, in->tid, 0, (void *)(uintptr_t)(in->released ? sig : 0));
                if (!in->released) {
                    note_signal(in, sig);
                }
            }
        } else if (!in->at_tramp) {
            /* No call was made: its registers are its own. */
            ptrace(PTRACE_SETREGS, in->tid, 0, &in->saved);
        }
        /* At the trampoline's stop, or inside the call: the trampoline
         * puts every register back. */
    } else {
        ptrace(PTRACE_SETREGS, in->tid, 0, &in->saved);
        restore_fp(in);
    }
    in->stopped_ns = now_ns() - in->t0;
    ptrace(PTRACE_DETACH, in->tid, 0, 0);
    for (int i = 0; i < in->npending; i++) {
        syscall(SYS_tgkill, in->pid, in->tid, in->pending[i]);
    }
}
