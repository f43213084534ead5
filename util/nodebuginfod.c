// SPDX-License-Identifier: MIT
/* libdw asks debuginfod servers for the debug file of a module that has
 * none on this machine, and to do so loads libdebuginfod the first time,
 * with curl and some twenty libraries behind it, and initializes them:
 * several milliseconds of a run that takes a hundred, even where no server
 * is configured (elfutils 0.188 loads it without looking). memprint's own
 * dlopen lets the loading happen only when DEBUGINFOD_URLS names a server,
 * the variable libdebuginfod itself reads; any other dlopen passes through.
 * Linked into memprint only, and exported from it (CMakeLists.txt), so
 * that libdw's call lands here. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

void *dlopen(const char *file, int mode)
{
    static void *(*next)(const char *, int);
    if (file && strncmp(file, "libdebuginfod", strlen("libdebuginfod")) == 0) {
        const char *urls = getenv("DEBUGINFOD_URLS");
        if (!urls || !*urls) {
            return NULL;
        }
    }
    if (!next) {
        next = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
        if (!next) {
            return NULL;
        }
    }
    return next(file, mode);
}
