// SPDX-License-Identifier: MIT
/* Opening a recorded module for the symbolizer: its file on disk when the
 * build-id agrees, else its debug file by build-id under the debuginfo
 * path; pseudo modules ([vdso]) and anything unreadable give module +
 * offset. Never prints; a missing or foreign file is not an error. */
#include "symbolize_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gelf.h>

#include "util.h"

#define DEFAULT_DEBUG_DIR "/usr/lib/debug"

static bool is_pseudo_path(const char *path)
{
    /* Kernel-provided mappings have no file behind them. */
    return path[0] == '\0' || path[0] == '[' || strncmp(path, "linux-vdso", 10) == 0 ||
           strncmp(path, "linux-gate", 10) == 0;
}

/* Report one ELF file to the shared Dwfl at the module's bias. */
static Dwfl_Module *report_file(struct symbolizer *s, const char *file, uint64_t bias)
{
    /* libdwfl merges reports that share a name and address range, and on a file mismatch marks
     * the existing module for removal; modules of one recording may overlap (dlclose, then
     * dlopen of another library at the same address), so every report gets a unique name. */
    char name[32];
    snprintf(name, sizeof(name), "memrec-%llu", (unsigned long long)s->nr_reports++);

    dwfl_report_begin_add(s->dwfl);
    /* add_p_vaddr = true: `bias` is dlpi_addr, the difference between run-time and link-time
     * addresses, not the address of the first segment (they differ when p_vaddr != 0). */
    Dwfl_Module *mod = dwfl_report_elf(s->dwfl, name, file, -1, (GElf_Addr)bias, true);
    if (dwfl_report_end(s->dwfl, NULL, NULL) != 0) {
        return NULL;
    }
    if (!mod) {
        return NULL;
    }
    GElf_Addr elf_bias = 0;
    Elf *elf = dwfl_module_getelf(mod, &elf_bias);
    GElf_Ehdr ehdr_mem;
    GElf_Ehdr *ehdr = elf ? gelf_getehdr(elf, &ehdr_mem) : NULL;
    /* Only loadable objects have the addresses a stack holds; a relocatable object or a core
     * file at this path would be laid out by libdwfl and give wrong answers. */
    if (!ehdr || (ehdr->e_type != ET_EXEC && ehdr->e_type != ET_DYN)) {
        return NULL;
    }
    return mod;
}

/* 1 if the file's build-id contradicts the recorded one, 0 if it matches or cannot be told. */
static int build_id_mismatch(const struct module *m, Dwfl_Module *mod)
{
    if (m->build_id_len == 0) {
        return 0;
    }
    const unsigned char *bits = NULL;
    GElf_Addr vaddr = 0;
    int len = dwfl_module_build_id(mod, &bits, &vaddr);
    if (len <= 0 || !bits) {
        return 0;
    }
    return (size_t)len != m->build_id_len || memcmp(bits, m->build_id, m->build_id_len) != 0;
}

/* Try DIR/.build-id/xx/rest.debug for every absolute DIR of the debuginfo path. */
static Dwfl_Module *report_by_build_id(struct symbolizer *s, const struct module *m)
{
    if (m->build_id_len < 2) {
        return NULL;
    }
    char hex[2 * MAX_BUILD_ID + 1];
    for (size_t i = 0; i < m->build_id_len; i++) {
        snprintf(hex + 2 * i, 3, "%02x", m->build_id[i]);
    }
    const char *list = s->debuginfo_path ? s->debuginfo_path : DEFAULT_DEBUG_DIR;
    /* libdwfl's syntax allows a leading '+' or '-' (CRC checking) before the list. */
    if (*list == '+' || *list == '-') {
        list++;
    }
    while (*list) {
        const char *colon = strchr(list, ':');
        size_t dir_len = colon ? (size_t)(colon - list) : strlen(list);
        if (dir_len > 0 && list[0] == '/' && dir_len < 4096) {
            size_t size = dir_len + sizeof("/.build-id/") + sizeof(hex) + sizeof(".debug");
            char *file = xmalloc(size);
            snprintf(file, size, "%.*s/.build-id/%.2s/%s.debug", (int)dir_len, list, hex, hex + 2);
            Dwfl_Module *mod = report_file(s, file, m->bias);
            free(file);
            if (mod && !build_id_mismatch(m, mod)) {
                return mod;
            }
        }
        if (!colon) {
            break;
        }
        list = colon + 1;
    }
    return NULL;
}

void sym_open_module(struct symbolizer *s, int index)
{
    struct module *m = &s->modules[index];
    Dwfl_Module *mod = NULL;

    if (!is_pseudo_path(m->path)) {
        mod = report_file(s, m->path, m->bias);
        if (mod && build_id_mismatch(m, mod)) {
            /* The file was replaced after recording: its symbols would be wrong. The module
             * object stays inside the Dwfl, unused, because libdwfl cannot drop one module. */
            mod = NULL;
        }
        if (!mod) {
            mod = report_by_build_id(s, m);
        }
    }
    if (!mod) {
        m->state = MODULE_OFFSET_ONLY;
        s->stats.modules_failed++;
        return;
    }
    Dwarf_Addr start = 0;
    Dwarf_Addr end = 0;
    dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL, NULL);
    m->dwmod = mod;
    m->start = start;
    m->end = end;
    m->state = MODULE_OPEN;
    s->stats.modules_opened++;
}
