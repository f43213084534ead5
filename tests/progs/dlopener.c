// SPDX-License-Identifier: MIT
/*
 * Loads the library given as argv[1] with dlopen after allocating, calls
 * its plugin_work (which leaks 50001 bytes), unloads it with dlclose, and
 * allocates again. Expected from the program and the library: 10001 bytes
 * before (freed), 40001 in the library's constructor (freed), 50001 leaked
 * from plugin_work, 20001 after (leaked). The leak's stack must name
 * plugin_work in libplugin.so, although the library is gone by the end.
 */
#include <dlfcn.h>
#include <stdlib.h>

static void *volatile sink;

int main(int argc, char **argv)
{
    if (argc < 2) {
        return 2;
    }
    void *before = malloc(10001);
    sink = before;
    free(before);
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        return 1;
    }
    void *(*work)(void) = (void *(*)(void))dlsym(lib, "plugin_work");
    if (!work) {
        return 1;
    }
    sink = work();
    dlclose(lib);
    sink = malloc(20001);
    return 0;
}
