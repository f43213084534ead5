// SPDX-License-Identifier: MIT
/* Are a recording's module files the recorded ones (modcheck.h)? Each
 * distinct path is opened once, without blocking (a recorded path may name
 * a FIFO here), and only a regular file is read. */
#include "modcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

size_t modcheck_build_id(Elf *elf, uint8_t *out, size_t cap)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE) {
            continue;
        }
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t off = 0, name_off, desc_off;
        GElf_Nhdr nh;
        while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                memcmp((const char *)d->d_buf + name_off, "GNU", 4) == 0 && nh.n_descsz <= cap) {
                memcpy(out, (const char *)d->d_buf + desc_off, nh.n_descsz);
                return nh.n_descsz;
            }
        }
    }
    return 0;
}

const char *modcheck_why_name(enum modcheck_why why)
{
    switch (why) {
    case MODCHECK_MISSING: return "missing";
    case MODCHECK_REBUILT: return "rebuilt: its build-id differs";
    default: return "unreadable";
    }
}

static int is_pseudo(const char *path)
{
    return path[0] != '/';
}

/* The separate debug file the symbolizer would take by build-id instead. */
static int has_debug_file(const struct model_module *mod)
{
    if (mod->build_id_len < 2) {
        return 0;
    }
    char path[64 + 2 * sizeof mod->build_id];
    int n = snprintf(path, sizeof path, "/usr/lib/debug/.build-id/%02x/", mod->build_id[0]);
    for (uint32_t i = 1; i < mod->build_id_len && n > 0 && (size_t)n < sizeof path; i++) {
        n += snprintf(path + n, sizeof path - (size_t)n, "%02x", mod->build_id[i]);
    }
    if (n <= 0 || (size_t)n + sizeof ".debug" > sizeof path) {
        return 0;
    }
    memcpy(path + n, ".debug", sizeof ".debug");
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* 0 when the file at the module's path is the recorded one, else why not. */
static enum modcheck_why check_file(const struct model_module *mod)
{
    int fd = open(mod->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        return errno == ENOENT || errno == ENOTDIR ? MODCHECK_MISSING : MODCHECK_UNREADABLE;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return MODCHECK_UNREADABLE;
    }
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    enum modcheck_why why = 0;
    if (!elf || elf_kind(elf) != ELF_K_ELF) {
        why = MODCHECK_UNREADABLE;
    } else if (mod->build_id_len) {
        uint8_t id[64];
        size_t n = modcheck_build_id(elf, id, sizeof id);
        if (n != mod->build_id_len || memcmp(id, mod->build_id, n) != 0) {
            why = MODCHECK_REBUILT;
        }
    }
    elf_end(elf);
    close(fd);
    return why;
}

static int by_path(const void *a, const void *b)
{
    const struct model_module *const *x = a, *const *y = b;
    int c = strcmp((*x)->path, (*y)->path);
    /* Equal paths: the first module first, so the order is the model's. */
    return c ? c : ((*x)->id > (*y)->id) - ((*x)->id < (*y)->id);
}

void modcheck_run(const struct model *m, struct modcheck *out)
{
    if (m->pack || m->nmodules == 0) {
        return;
    }
    /* Each path once: a library mapped at several addresses, or loaded
     * again after a dlclose, is one file. Sorting keeps this O(n log n)
     * for a recording that claims many modules. */
    const struct model_module **v = xmalloc(m->nmodules * sizeof *v);
    size_t n = 0;
    for (uint32_t i = 0; i < m->nmodules; i++) {
        if (m->modules[i].path && !is_pseudo(m->modules[i].path)) {
            v[n++] = &m->modules[i];
        }
    }
    qsort(v, n, sizeof *v, by_path);
    uint8_t *bad = xcalloc(m->nmodules, 1);
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && strcmp(v[i]->path, v[i - 1]->path) == 0) {
            continue;
        }
        enum modcheck_why why = check_file(v[i]);
        if (why && !has_debug_file(v[i])) {
            bad[v[i] - m->modules] = (uint8_t)why;
        }
    }
    for (uint32_t i = 0; i < m->nmodules; i++) {
        if (bad[i]) {
            xgrow((void **)&out->v, &out->cap, out->n + 1, sizeof *out->v);
            out->v[out->n++] = (struct modcheck_entry){m->modules[i].path, (enum modcheck_why)bad[i]};
        }
    }
    free(bad);
    free(v);
}

void modcheck_release(struct modcheck *c)
{
    free(c->v);
    *c = (struct modcheck)MODCHECK_INIT;
}
