// SPDX-License-Identifier: MIT
/* The suppressions a program embeds by defining
 * `const char *__lsan_default_suppressions(void)`, read from its
 * executable without running it (running an untrusted or stale binary to
 * learn a string is out of the question): find the function's symbol,
 * decode the few instructions compilers emit for `return "...";` on
 * x86-64, and read the string they point to (suppress.c parses it). What
 * is decoded, and what is not, is listed in docs/suppressions.md. */
#include "suppress.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "modcheck.h"
#include "util.h"

#define LSAN_FN "__lsan_default_suppressions"

/* The bytes of the loaded image at address `va`: up to `*len` of them,
 * from the allocated section holding it (only what the file holds: no
 * .bss). Returns NULL when no section holds `va`. */
static const uint8_t *image_at(Elf *elf, uint64_t va, size_t *len)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) || sh.sh_type == SHT_NOBITS) {
            continue;
        }
        if (va < sh.sh_addr || va - sh.sh_addr >= sh.sh_size) {
            continue;
        }
        Elf_Data *d = elf_rawdata(scn, NULL);
        if (!d || !d->d_buf || d->d_size != sh.sh_size) {
            return NULL;
        }
        size_t off = (size_t)(va - sh.sh_addr);
        size_t left = d->d_size - off;
        *len = *len < left ? *len : left;
        return (const uint8_t *)d->d_buf + off;
    }
    return NULL;
}

/* The address of the function's symbol, from .symtab or else .dynsym. */
static int find_symbol(Elf *elf, uint64_t *va)
{
    for (int pass = 0; pass < 2; pass++) {
        Elf_Scn *scn = NULL;
        while ((scn = elf_nextscn(elf, scn)) != NULL) {
            GElf_Shdr sh;
            if (!gelf_getshdr(scn, &sh) || sh.sh_type != (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM) || !sh.sh_entsize) {
                continue;
            }
            Elf_Data *d = elf_getdata(scn, NULL);
            size_t n = d ? d->d_size / sh.sh_entsize : 0;
            for (size_t i = 0; i < n; i++) {
                GElf_Sym sym;
                if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
                    GELF_ST_TYPE(sym.st_info) != STT_FUNC) {
                    continue;
                }
                const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
                if (name && strcmp(name, LSAN_FN) == 0) {
                    *va = sym.st_value;
                    return 1;
                }
            }
        }
    }
    return 0;
}

static int32_t le32(const uint8_t *p)
{
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

/* Decode `return <address of a string>;` at `va` (the code bytes `c`, `n`
 * of them): an optional endbr64, an optional frame set-up (push rbp; mov
 * rbp,rsp), one instruction that puts an address in rax, then an optional
 * pop rbp or leave, then ret. Returns 0 with *addr, or -1. */
static int decode_return(const uint8_t *c, size_t n, uint64_t va, uint64_t *addr)
{
    size_t i = 0;
    if (n >= 4 && c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa) {
        i += 4; /* endbr64 */
    }
    if (i < n && c[i] == 0x55) {
        i++; /* push rbp */
        if (i + 3 <= n && c[i] == 0x48 && c[i + 1] == 0x89 && c[i + 2] == 0xe5) {
            i += 3; /* mov rbp, rsp */
        } else {
            return -1;
        }
    }
    if (i + 7 <= n && c[i] == 0x48 && c[i + 1] == 0x8d && c[i + 2] == 0x05) {
        /* lea rax, [rip + disp32]: position-independent code */
        *addr = va + i + 7 + (uint64_t)(int64_t)le32(c + i + 3);
        i += 7;
    } else if (i + 5 <= n && c[i] == 0xb8) {
        /* mov eax, imm32 (zero-extended): a non-PIE executable */
        *addr = (uint32_t)le32(c + i + 1);
        i += 5;
    } else if (i + 7 <= n && c[i] == 0x48 && c[i + 1] == 0xc7 && c[i + 2] == 0xc0) {
        /* mov rax, simm32 */
        *addr = (uint64_t)(int64_t)le32(c + i + 3);
        i += 7;
    } else if (i + 10 <= n && c[i] == 0x48 && c[i + 1] == 0xb8) {
        /* movabs rax, imm64 */
        uint64_t v = 0;
        for (int k = 7; k >= 0; k--) {
            v = v << 8 | c[i + 2 + k];
        }
        *addr = v;
        i += 10;
    } else {
        return -1;
    }
    if (i < n && (c[i] == 0x5d || c[i] == 0xc9)) {
        i++; /* pop rbp, or leave */
    }
    if (i < n && c[i] == 0xc3) {
        return 0;
    }
    if (i + 1 < n && c[i] == 0xf3 && c[i + 1] == 0xc3) {
        return 0; /* rep ret */
    }
    return -1;
}

/* The embedded text of the ELF file `elf`: 1 with *text and *len (pointing
 * into the file's data), 0 when the function is not defined, -1 with a
 * reason in `err`. */
static int embedded_text(Elf *elf, const struct model_module *mod, const char **text, size_t *len, const char *path,
                         char *err, size_t cap)
{
    GElf_Ehdr eh;
    if (!gelf_getehdr(elf, &eh)) {
        snprintf(err, cap, "'%s' is not an ELF file", path);
        return -1;
    }
    uint64_t fn;
    if (!find_symbol(elf, &fn)) {
        return 0;
    }
    if (mod && mod->build_id_len) {
        uint8_t id[64];
        size_t n = modcheck_build_id(elf, id, sizeof id);
        if (n != mod->build_id_len || memcmp(id, mod->build_id, n) != 0) {
            snprintf(err, cap,
                     "'%s' is not the executable that was recorded (its build-id differs): its "
                     "__lsan_default_suppressions() is not read",
                     path);
            return -1;
        }
    }
    if (eh.e_machine != EM_X86_64) {
        snprintf(err, cap, "'%s': __lsan_default_suppressions() is read on x86-64 only", path);
        return -1;
    }
    size_t n = 32;
    const uint8_t *code = image_at(elf, fn, &n);
    uint64_t addr;
    if (!code || decode_return(code, n, fn, &addr) < 0) {
        snprintf(err, cap,
                 "'%s': __lsan_default_suppressions() is not a plain 'return \"...\";' memprint can decode: "
                 "its patterns are not read",
                 path);
        return -1;
    }
    size_t max = SUPPRESS_MAX_BYTES;
    const char *s = (const char *)image_at(elf, addr, &max);
    const char *nul = s ? memchr(s, 0, max) : NULL;
    if (!nul) {
        snprintf(err, cap, "'%s': the string __lsan_default_suppressions() returns is not in the file", path);
        return -1;
    }
    *text = s;
    *len = (size_t)(nul - s);
    return 1;
}

int suppress_program_text(const struct model *m, char **text, size_t *len, char *err, size_t cap)
{
    *text = NULL;
    *len = 0;
    /* A packed recording reads the same on every machine and opens no
     * module file (docs/format.md, "Packed recordings"): the executable,
     * here or not, is not read for it either. */
    if (!m->exe || !*m->exe || m->pack) {
        return 0;
    }
    const struct model_module *mod = NULL;
    for (uint32_t i = 0; i < m->nmodules; i++) {
        if (m->modules[i].path && strcmp(m->modules[i].path, m->exe) == 0) {
            mod = &m->modules[i];
            break;
        }
    }
    /* The path comes from the recording: it may name a FIFO or a device
     * here, whose open or read would block for ever. O_NONBLOCK makes the
     * open return at once whatever it names, and only a regular file is
     * read (the check is on what was opened, so nothing can swap it). */
    int fd = open(m->exe, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        int e = errno;
        snprintf(err, cap, "cannot read the recorded executable '%s' for its __lsan_default_suppressions(): %s", m->exe,
                 strerror(e));
        return e == ENOENT ? SUPPRESS_E_NOEXE : -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        snprintf(err, cap,
                 "the recorded executable '%s' is not a regular file: its __lsan_default_suppressions() are "
                 "not read",
                 m->exe);
        return -1;
    }
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    int rc;
    if (!elf || elf_kind(elf) != ELF_K_ELF) {
        snprintf(err, cap, "'%s' is not an ELF file", m->exe);
        rc = -1;
    } else {
        const char *found;
        size_t n;
        rc = embedded_text(elf, mod, &found, &n, m->exe, err, cap);
        if (rc == 1) {
            /* A copy: the text lives in the file's mapping, which elf_end() drops. */
            *text = xmalloc(n + 1);
            memcpy(*text, found, n);
            (*text)[n] = 0;
            *len = n;
        }
    }
    elf_end(elf);
    close(fd);
    return rc;
}
