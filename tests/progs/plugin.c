// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
/*
 * A library that tests/progs/dlopener.c loads with dlopen: its constructor
 * allocates 40001 bytes (freed by plugin_work), plugin_work allocates 50001
 * bytes and leaks them.
 */
#include <stdlib.h>

static void *volatile kept;

__attribute__((constructor)) static void plugin_init(void)
{
    kept = malloc(40001); /* LINE_PLUGIN_INIT */
}

/* The result goes through a volatile, so malloc is not a tail call and
 * plugin_work keeps its frame. */
__attribute__((visibility("default"), noinline)) void *plugin_work(void)
{
    free(kept);
    kept = malloc(50001); /* LINE_PLUGIN_WORK */
    void *p = kept;
    kept = NULL;
    return p;
}
