// SPDX-License-Identifier: MIT
/* The next definitions of the system functions syshooks.c interposes,
 * looked up once at start-up. Runs inside the target: dlsym may allocate,
 * so the caller is inside the recorder. */
#define _GNU_SOURCE
#include "sysnext.h"

#include <dlfcn.h>

HIDDEN struct sysnext sysnext;

void sysnext_resolve(void)
{
    sysnext.close = (int (*)(int))dlsym(RTLD_NEXT, "close");
    sysnext.dup2 = (int (*)(int, int))dlsym(RTLD_NEXT, "dup2");
    sysnext.dup3 = (int (*)(int, int, int))dlsym(RTLD_NEXT, "dup3");
    sysnext.close_range = (int (*)(unsigned, unsigned, int))dlsym(RTLD_NEXT, "close_range");
    sysnext.closefrom = (void (*)(int))dlsym(RTLD_NEXT, "closefrom");
    sysnext.execve = (int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execve");
    sysnext.execvpe = (int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execvpe");
    sysnext.fexecve = (int (*)(int, char *const[], char *const[]))dlsym(RTLD_NEXT, "fexecve");
    sysnext.execveat = (int (*)(int, const char *, char *const[], char *const[], int))dlsym(RTLD_NEXT, "execveat");
    *(void **)&sysnext.posix_spawn = dlsym(RTLD_NEXT, "posix_spawn");
    *(void **)&sysnext.posix_spawnp = dlsym(RTLD_NEXT, "posix_spawnp");
    sysnext.pipe2 = (int (*)(int[2], int))dlsym(RTLD_NEXT, "pipe2");
    sysnext.system = (int (*)(const char *))dlsym(RTLD_NEXT, "system");
    sysnext.popen = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "popen");
    sysnext.pclose = (int (*)(FILE *))dlsym(RTLD_NEXT, "pclose");
}
