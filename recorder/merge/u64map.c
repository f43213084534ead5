// SPDX-License-Identifier: MIT
/* The out-of-line parts of the hash map (u64map.h): big tables, growth and
 * release. Runs in memrec, never in the target. */
#include "u64map.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util.h"

#define BIG_TABLE (4u << 20)

void *u64map_table_alloc(size_t n, size_t size)
{
    size_t bytes = n * size;
    if (bytes < BIG_TABLE) {
        return xcalloc(n, size);
    }
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        die("out of memory (%zu bytes)", bytes);
    }
    madvise(p, bytes, MADV_HUGEPAGE);
    return p;
}

void u64map_table_free(void *p, size_t n, size_t size)
{
    if (!p) {
        return;
    }
    if (n * size < BIG_TABLE) {
        free(p);
    } else {
        munmap(p, n * size);
    }
}

void u64map_grow(struct u64map *m)
{
    struct u64map old = *m;
    m->cap = old.cap ? old.cap * 2 : 1024;
    m->cells = u64map_table_alloc(m->cap, sizeof *m->cells);
    m->count = 0;
    for (size_t i = 0; i < old.cap; i++) {
        if (old.cells[i].key) {
            u64map_put(m, old.cells[i].key, old.cells[i].val);
        }
    }
    u64map_table_free(old.cells, old.cap, sizeof *old.cells);
}

void u64map_release(struct u64map *m)
{
    u64map_table_free(m->cells, m->cap, sizeof *m->cells);
    memset(m, 0, sizeof *m);
}
