// SPDX-License-Identifier: MIT
/* Symbolizer: resolves (module, ip) to inline chains, names and file:line
 * with elfutils libdwfl/libdw, caching every result. This file holds the
 * public API, the result cache and the resolution of one ip; sym_module.c,
 * sym_names.c, sym_scopes.c and sym_strings.c do the rest. Runs in the
 * offline analyzer only; it never prints and must not crash on stripped,
 * missing, foreign or garbage input. */
#include "symbolize.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>

#include "symbolize_internal.h"
#include "util.h"

/* ---- frame vectors ---- */

static void frame_vec_push(struct frame_vec *fv, const struct sym_frame *f)
{
    if (fv->nr == fv->alloc) {
        size_t alloc = fv->alloc ? fv->alloc * 2 : 64;
        fv->v = xrealloc(fv->v, alloc * sizeof(*fv->v));
        fv->alloc = alloc;
    }
    fv->v[fv->nr++] = *f;
}

/* ---- result cache ---- */

static size_t slot_index(const struct symbolizer *s, uint32_t module1, uint64_t ip)
{
    return sym_mix64(ip ^ ((uint64_t)module1 << 48) ^ module1) & s->slot_mask;
}

static const struct cache_slot *cache_find(const struct symbolizer *s, int module, uint64_t ip)
{
    if (!s->slots) {
        return NULL;
    }
    uint32_t module1 = (uint32_t)module + 1;
    size_t i = slot_index(s, module1, ip);
    while (s->slots[i].module1 != 0) {
        if (s->slots[i].module1 == module1 && s->slots[i].ip == ip) {
            return &s->slots[i];
        }
        i = (i + 1) & s->slot_mask;
    }
    return NULL;
}

static void grow_cache(struct symbolizer *s)
{
    size_t old_size = s->slots ? s->slot_mask + 1 : 0;
    size_t new_size = old_size ? old_size * 2 : 1024;
    struct cache_slot *old = s->slots;
    s->slots = xcalloc(new_size, sizeof(*s->slots));
    s->slot_mask = new_size - 1;
    for (size_t i = 0; i < old_size; i++) {
        if (old[i].module1 == 0) {
            continue;
        }
        size_t j = slot_index(s, old[i].module1, old[i].ip);
        while (s->slots[j].module1 != 0) {
            j = (j + 1) & s->slot_mask;
        }
        s->slots[j] = old[i];
    }
    free(old);
}

/* Move the scratch frames into the pool and remember them under (module, ip). */
static int cache_insert(struct symbolizer *s, int module, uint64_t ip, const struct cache_slot **out)
{
    if (s->pool.nr + s->scratch.nr > UINT32_MAX) {
        return -EOVERFLOW;
    }
    /* Keep the load factor at or below 1/2 so probe chains stay short. */
    if (!s->slots || (s->slots_used + 1) * 2 > s->slot_mask + 1) {
        grow_cache(s);
    }
    size_t first = s->pool.nr;
    for (size_t k = 0; k < s->scratch.nr; k++) {
        frame_vec_push(&s->pool, &s->scratch.v[k]);
    }
    uint32_t module1 = (uint32_t)module + 1;
    size_t i = slot_index(s, module1, ip);
    while (s->slots[i].module1 != 0) {
        i = (i + 1) & s->slot_mask;
    }
    s->slots[i].module1 = module1;
    s->slots[i].ip = ip;
    s->slots[i].first = (uint32_t)first;
    s->slots[i].count = (uint32_t)s->scratch.nr;
    s->slots_used++;
    *out = &s->slots[i];
    return 0;
}

/* ---- resolving one ip ---- */

static void push_frame(struct symbolizer *s, const struct module *m, uint64_t ip, const char *function,
                       const char *file, unsigned line, int inlined)
{
    struct sym_frame f = {
        .function = function,
        .file = sym_intern(s, file),
        .module = m->path,
        .module_offset = ip - m->bias,
        .line = line,
        .inlined = inlined,
    };
    frame_vec_push(&s->scratch, &f);
}

/* The line table row for addr in the CU: its file (NULL if none) and line (0 if none). */
static const char *line_row(Dwarf_Die *cu, Dwarf_Addr addr, unsigned *line)
{
    *line = 0;
    Dwarf_Line *row = dwarf_getsrc_die(cu, addr);
    if (!row) {
        return NULL;
    }
    int lineno = 0;
    if (dwarf_lineno(row, &lineno) == 0 && lineno > 0) {
        *line = (unsigned)lineno;
    }
    return dwarf_linesrc(row, NULL, NULL);
}

/*
 * Frames from the scope path: innermost inlined subroutines first, then the nearest enclosing
 * subprogram. The innermost frame's location is the line table row for ip; each outer frame's
 * is the call site of the inlined subroutine it contains.
 */
static void frames_from_path(struct symbolizer *s, const struct module *m, uint64_t ip, const char *symbol,
                             const char *file, unsigned line)
{
    struct die_vec *path = &s->path;
    for (size_t i = path->nr; i-- > 0;) {
        Dwarf_Die *die = &path->v[i];
        int tag = dwarf_tag(die);
        if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) {
            continue;
        }
        bool real = tag == DW_TAG_subprogram;
        push_frame(s, m, ip, sym_frame_name(s, die, real ? symbol : NULL), file, line, !real);
        if (real) {
            return;
        }
        sym_call_site(die, &file, &line);
    }
    /* Inlined code with no enclosing subprogram DIE, or no scope at all: close the chain with
     * the symbol table's idea of the real function. */
    push_frame(s, m, ip, sym_frame_name(s, NULL, symbol), file, line, 0);
}

static void resolve(struct symbolizer *s, int index, uint64_t ip)
{
    struct module *m = &s->modules[index];
    s->scratch.nr = 0;
    s->path.nr = 0;
    if (m->state == MODULE_UNOPENED) {
        sym_open_module(s, index);
    }
    if (m->state != MODULE_OPEN || ip < m->start || ip >= m->end) {
        push_frame(s, m, ip, NULL, NULL, 0, 0);
        return;
    }

    if (!m->symtab_built) {
        m->symtab = sym_symtab_build(m->dwmod);
        m->symtab_built = true;
    }
    const char *symbol = NULL;
    if (m->symtab) {
        symbol = sym_symtab_lookup(m->symtab, ip);
    } else {
        GElf_Off sym_off = 0;
        GElf_Sym sym;
        symbol = dwfl_module_addrinfo(m->dwmod, ip, &sym_off, &sym, NULL, NULL, NULL);
    }

    Dwarf_Die cu;
    Dwarf_Addr dwbias = 0;
    if (!sym_find_cu(m, ip, &cu, &dwbias)) {
        frames_from_path(s, m, ip, symbol, NULL, 0);
        return;
    }
    /* Be careful: DWARF addresses are relative to the debug file's own bias, which differs
     * from the module's when the separate debug file was linked at other addresses. */
    Dwarf_Addr addr = ip - dwbias;
    unsigned line = 0;
    const char *file = line_row(&cu, addr, &line);

    /* With split DWARF the skeleton CU has no children; its split unit has the scopes. */
    Dwarf_Die root = cu;
    Dwarf_Die split;
    uint8_t unit_type = 0;
    if (dwarf_cu_info(cu.cu, NULL, &unit_type, NULL, &split, NULL, NULL, NULL) == 0 && unit_type == DW_UT_skeleton &&
        dwarf_tag(&split) == DW_TAG_compile_unit) {
        root = split;
    }
    Dwarf_Die *fn = sym_find_function(m, &root, addr);
    if (fn) {
        sym_die_vec_push(&s->path, fn);
        sym_find_scopes(fn, addr, &s->path);
    }
    frames_from_path(s, m, ip, symbol, file, line);
}

/* ---- the cache on disk ---- */

struct cached_module {
    struct symbolizer *s;
    int index;
};

/* sym_cache_load()'s callback: one address's frames into the result cache. */
static void add_cached(void *ctx, uint64_t offset, const struct sym_frame *frames, int count)
{
    struct cached_module *c = ctx;
    struct symbolizer *s = c->s;
    const struct module *m = &s->modules[c->index];
    uint64_t ip = offset + m->bias;
    if (cache_find(s, c->index, ip)) {
        return;
    }
    s->scratch.nr = 0;
    for (int i = 0; i < count; i++) {
        struct sym_frame f = frames[i];
        f.function = sym_intern(s, f.function);
        f.file = sym_intern(s, f.file);
        f.module = m->path;
        f.module_offset = offset;
        frame_vec_push(&s->scratch, &f);
    }
    const struct cache_slot *slot;
    cache_insert(s, c->index, ip, &slot);
}

/* Before a module's first lookup: its frames from the cache on disk, if valid. */
static void load_cached(struct symbolizer *s, int index)
{
    struct module *m = &s->modules[index];
    m->cache_checked = true;
    m->cache_stamped = sym_cache_stamp(m->path, &m->cache_stamp) == 0;
    if (m->cache_stamped) {
        struct cached_module c = {s, index};
        sym_cache_load(s->cache_dir, m, s->debuginfo_path, add_cached, &c);
    }
}

/* At the end: the modules that had to be resolved write their cache files. */
static void store_cached(struct symbolizer *s)
{
    size_t *count = xcalloc(s->nr_modules + 1, sizeof *count);
    size_t dirty = 0;
    for (size_t i = 0; s->slots && i <= s->slot_mask; i++) {
        uint32_t m1 = s->slots[i].module1;
        if (m1 != 0 && s->modules[m1 - 1].cache_dirty) {
            count[m1]++;
            dirty++;
        }
    }
    if (dirty > 0) {
        /* Counting sort of the slots by module. */
        size_t *at = xcalloc(s->nr_modules + 1, sizeof *at);
        for (size_t k = 1; k <= s->nr_modules; k++) {
            at[k] = at[k - 1] + count[k - 1];
        }
        struct sym_cache_item *items = xmalloc(dirty * sizeof *items);
        for (size_t i = 0; i <= s->slot_mask; i++) {
            const struct cache_slot *c = &s->slots[i];
            if (c->module1 == 0 || !s->modules[c->module1 - 1].cache_dirty) {
                continue;
            }
            const struct module *m = &s->modules[c->module1 - 1];
            items[at[c->module1]++] = (struct sym_cache_item){c->ip - m->bias, &s->pool.v[c->first], c->count};
        }
        size_t first = 0;
        for (size_t k = 1; k <= s->nr_modules; k++) {
            if (count[k] > 0) {
                sym_cache_store(s->cache_dir, &s->modules[k - 1], s->debuginfo_path, items + first, count[k]);
            }
            first += count[k];
        }
        free(items);
        free(at);
    }
    free(count);
}

/* ---- public API ---- */

struct symbolizer *symbolize_new(void)
{
    struct symbolizer *s = xcalloc(1, sizeof(*s));
    s->callbacks.find_elf = dwfl_build_id_find_elf;
    s->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
    s->callbacks.section_address = dwfl_offline_section_address;
    s->callbacks.debuginfo_path = &s->debuginfo_path;
    s->dwfl = dwfl_begin(&s->callbacks);
    if (!s->dwfl) {
        free(s);
        return NULL;
    }
    const char *dir = sym_cache_default();
    s->cache_dir = dir ? xstrdup(dir) : NULL;
    return s;
}

void symbolize_free(struct symbolizer *s)
{
    if (!s) {
        return;
    }
    if (s->cache_dir) {
        store_cached(s);
    }
    dwfl_end(s->dwfl);
    for (size_t i = 0; i < s->nr_modules; i++) {
        struct module *m = &s->modules[i];
        free(m->path);
        free(m->build_id);
        sym_release_indexes(m);
        sym_symtab_free(m->symtab);
    }
    free(s->modules);
    sym_strings_release(s);
    free(s->names);
    free(s->slots);
    free(s->pool.v);
    free(s->scratch.v);
    free(s->path.v);
    free(s->debuginfo_path);
    free(s->cache_dir);
    free(s);
}

void symbolize_set_debuginfo_path(struct symbolizer *s, const char *path)
{
    free(s->debuginfo_path);
    s->debuginfo_path = path ? xstrdup(path) : NULL;
}

int symbolize_add_module(struct symbolizer *s, const char *path, uint64_t bias, const uint8_t *build_id,
                         size_t build_id_len)
{
    if (!path || (build_id_len > 0 && !build_id) || build_id_len > MAX_BUILD_ID) {
        return -EINVAL;
    }
    if (s->nr_modules >= INT_MAX) {
        return -EOVERFLOW;
    }
    if (s->nr_modules == s->alloc_modules) {
        size_t alloc = s->alloc_modules ? s->alloc_modules * 2 : 16;
        s->modules = xrealloc(s->modules, alloc * sizeof(*s->modules));
        s->alloc_modules = alloc;
    }
    struct module m = {.bias = bias, .state = MODULE_UNOPENED};
    m.path = xstrdup(path);
    if (build_id_len > 0) {
        m.build_id = xmalloc(build_id_len);
        memcpy(m.build_id, build_id, build_id_len);
        m.build_id_len = build_id_len;
    }
    s->modules[s->nr_modules] = m;
    return (int)s->nr_modules++;
}

int symbolize_lookup(struct symbolizer *s, int module_index, uint64_t ip, struct sym_frame *out, int max)
{
    if (module_index < 0 || (size_t)module_index >= s->nr_modules || !out || max < 1) {
        return -EINVAL;
    }
    const struct cache_slot *slot = cache_find(s, module_index, ip);
    if (!slot && s->cache_dir && !s->modules[module_index].cache_checked) {
        load_cached(s, module_index);
        slot = cache_find(s, module_index, ip);
    }
    if (!slot) {
        s->stats.misses++;
        resolve(s, module_index, ip);
        int rc = cache_insert(s, module_index, ip, &slot);
        if (rc < 0) {
            return rc;
        }
        if (s->cache_dir && s->modules[module_index].state == MODULE_OPEN) {
            s->modules[module_index].cache_dirty = true;
        }
    }
    s->stats.lookups++;
    int n = slot->count < (uint32_t)max ? (int)slot->count : max;
    memcpy(out, &s->pool.v[slot->first], (size_t)n * sizeof(*out));
    return n;
}

void symbolize_get_stats(const struct symbolizer *s, struct symbolize_stats *stats)
{
    *stats = s->stats;
}
