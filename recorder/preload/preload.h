// SPDX-License-Identifier: MIT
/* The interposed functions of preload.c, by number: their names and the next definitions
 * they forward to. */
#ifndef RECORDER_PRELOAD_H
#define RECORDER_PRELOAD_H

#include "hidden.h"

#define PRELOAD_C_HOOKS 10 /* malloc ... pvalloc, in the order of struct real_funcs */
#define PRELOAD_HOOKS (PRELOAD_C_HOOKS + 20) /* then the twenty C++ operators new and delete */

/** Symbol name of interposed function i, 0 <= i < PRELOAD_HOOKS. */
HIDDEN const char *preload_hook_name(int i);
/** The function that interposed function i forwards to (the next
 * definition: glibc's, or a malloc preloaded after us), NULL when none is
 * loaded. May call dlsym: the caller holds tstate.in_hook. */
HIDDEN void *preload_hook_next(int i);

#endif
