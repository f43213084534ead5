// SPDX-License-Identifier: MIT
/* The merge's table of (size, trace) pairs: look-up, growth and release
 * (the small block functions are inline in merge_internal.h). */
#include "merge.h"

#include "merge_internal.h"

void info_table_free(struct merge *m)
{
    u64map_table_free(m->info_table, m->info_table_cap, sizeof *m->info_table);
}

/* Double the pair table (4096 cells at first), keeping its pairs. */
static void info_table_grow(struct merge *m)
{
    size_t ncap = m->info_table_cap ? m->info_table_cap * 2 : 4096;
    struct info_cell *t = u64map_table_alloc(ncap, sizeof *t);
    for (size_t i = 0; i < m->info_table_cap; i++) {
        struct info_cell *c = &m->info_table[i];
        if (!c->id) {
            continue;
        }
        size_t j = pair_hash(c->size, c->trace) & (ncap - 1);
        while (t[j].id) {
            j = (j + 1) & (ncap - 1);
        }
        t[j] = *c;
    }
    u64map_table_free(m->info_table, m->info_table_cap, sizeof *m->info_table);
    m->info_table = t;
    m->info_table_cap = ncap;
}

/* The id of a (size, trace) pair; new pairs get the next id. */
uint32_t info_id(struct merge *m, uint64_t size, uint32_t trace)
{
    if ((m->ninfos + 1) * 2 > m->info_table_cap) {
        info_table_grow(m);
    }
    size_t mask = m->info_table_cap - 1;
    size_t j = pair_hash(size, trace) & mask;
    for (;;) {
        struct info_cell *c = &m->info_table[j];
        if (c->id == 0) {
            break;
        }
        if (c->size == size && c->trace == trace) {
            return c->id;
        }
        j = (j + 1) & mask;
    }
    uint32_t id = (uint32_t)++m->ninfos;
    if (id >= m->infos_cap) {
        xgrow((void **)&m->infos, &m->infos_cap, (size_t)id + 1, sizeof *m->infos);
    }
    m->infos[id].size = size;
    m->infos[id].trace = trace;
    m->info_table[j] = (struct info_cell){size, trace, id};
    return id;
}
