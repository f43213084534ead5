// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
/*
 * Opens the library named by argv[1] (libdeepbind.so, by path, by bare
 * name through this program's RUNPATH $ORIGIN, or as "$ORIGIN/...") with
 * RTLD_NOW | RTLD_DEEPBIND | RTLD_LOCAL. Both define which_impl(): this
 * program's (exported, built with -rdynamic) returns 1, the library's 2.
 * RTLD_DEEPBIND makes the library call its own; the program checks that.
 * Blocks cross the boundary both ways: 10001 bytes allocated here are
 * freed in the library, 16001 allocated there are freed here.
 *
 * The program's own calls, in order (see libdeepbind.cpp for the middle):
 *   malloc(10001)                here, freed by the library
 *   [library: 7 allocations, see libdeepbind.cpp]
 *   malloc(17001)                here, leaked
 *   free(16001 from the library) here
 * Exit status: 0, or 2-6 naming what went wrong (no memrec message needed).
 */
#include <dlfcn.h>
#include <stdlib.h>

/* The global scope's which_impl, found by the library only if
 * RTLD_DEEPBIND lost its meaning. */
__attribute__((noinline)) int which_impl(void)
{
    return 1;
}

static void *volatile sink;

int main(int argc, char **argv)
{
    if (argc < 2) {
        return 2;
    }
    void *mine = malloc(10001);
    sink = mine;
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_DEEPBIND | RTLD_LOCAL);
    if (!lib) {
        return 3;
    }
    int (*which)(void) = (int (*)(void))dlsym(lib, "deepbind_which");
    void *(*work)(void *) = (void *(*)(void *))dlsym(lib, "deepbind_work");
    if (!which || !work) {
        return 4;
    }
    if (which() != 2) {
        return 5; /* the library called the program's which_impl */
    }
    void *theirs = work(mine);
    sink = malloc(17001);
    free(theirs);
    dlclose(lib);
    return which_impl() == 1 ? 0 : 6;
}
