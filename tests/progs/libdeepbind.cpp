// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
/*
 * The library tests/progs/deepbind.c opens with RTLD_DEEPBIND. Its calls
 * to the allocator bind to libc and libstdc++ directly, past memrec's
 * preloaded definitions. deepbind_work, in order:
 *   free(the executable's 10001-byte block)
 *   malloc(11001), free it at once           temporary
 *   calloc(3, 4001) = 12003 bytes            reallocated at once: temporary
 *   realloc to 13001
 *   new char[14001], delete[] at once        temporary
 *   new Big (15001 bytes)                    leaked
 *   free(the 13001-byte block)
 *   malloc(16001)                            freed by the executable
 */
#include <cstdlib>

extern "C" {

/* The executable defines one too (returning 1); the library must get its
 * own. Default visibility and not inlined: the call goes through the PLT
 * and is bound by the loader, as RTLD_DEEPBIND says. */
__attribute__((noinline)) int which_impl(void)
{
    return 2;
}

int deepbind_which(void)
{
    return which_impl();
}

struct Big {
    char bytes[15001];
};

static void *volatile kept;
static Big *volatile kept_big;

/* Every pointer goes through a volatile, so no allocation is optimized
 * away and deepbind_work keeps its frame. */
__attribute__((noinline)) void *deepbind_work(void *from_exe)
{
    free(from_exe);
    kept = malloc(11001);
    free(kept);
    kept = calloc(3, 4001);
    kept = realloc(kept, 13001);
    char *block = static_cast<char *>(kept);
    kept = new char[14001];
    delete[] static_cast<char *>(kept);
    kept_big = new Big; /* LINE_LIB_LEAK */
    free(block);
    kept = malloc(16001);
    return kept;
}
}
