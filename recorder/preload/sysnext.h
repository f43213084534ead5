// SPDX-License-Identifier: MIT
/* The next definitions of the system functions syshooks.c interposes
 * (sysnext.c): the descriptor functions, the exec family, posix_spawn,
 * pipe2, system and popen/pclose. In the base layer, so that start-up
 * (init.c) resolves them without calling up into the hooks. */
#ifndef RECORDER_SYSNEXT_H
#define RECORDER_SYSNEXT_H

#include <spawn.h>
#include <stdio.h>
#include <sys/types.h>

#include "hidden.h"

/* NULL where no next definition was found: each hook says what it does
 * then. */
struct sysnext {
    int (*close)(int);
    int (*dup2)(int, int);
    int (*dup3)(int, int, int);
    int (*close_range)(unsigned, unsigned, int);
    void (*closefrom)(int);
    int (*execve)(const char *, char *const[], char *const[]);
    int (*execvpe)(const char *, char *const[], char *const[]);
    int (*fexecve)(int, char *const[], char *const[]);
    int (*execveat)(int, const char *, char *const[], char *const[], int);
    int (*posix_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
                       char *const[], char *const[]);
    int (*posix_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
                        char *const[], char *const[]);
    int (*pipe2)(int[2], int);
    int (*system)(const char *);
    FILE *(*popen)(const char *, const char *);
    int (*pclose)(FILE *);
};

/** The next definitions, filled by sysnext_resolve(); read by syshooks.c. */
HIDDEN extern struct sysnext sysnext;

/** Look up the next definitions (dlsym(RTLD_NEXT)). Called once per image
 * at start-up (init_start()), inside the recorder: dlsym may allocate. */
HIDDEN void sysnext_resolve(void);

#endif
