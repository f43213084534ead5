// SPDX-License-Identifier: MIT
/* memrec's variables, out of the program's sight (envhide.c): taken out of environ at start-up
 * and put back for an exec that continues the recording. */
#ifndef RECORDER_ENVHIDE_H
#define RECORDER_ENVHIDE_H

#include <stddef.h>

#include "hidden.h"

#define ENVHIDE_LOCAL_ENTRIES 160

/** Where envhide_for_exec() builds an environment: on the caller's stack
 * when it is small (an exec after vfork() must not leave a mapping in the
 * parent), else in memory of its own. */
struct envhide_space {
    char **arr; /* mmap'd array, or NULL */
    size_t arr_bytes;
    char *str; /* mmap'd LD_PRELOAD string, or NULL */
    size_t str_bytes;
    char *local[ENVHIDE_LOCAL_ENTRIES];
    char preload_local[1024];
};

/** Started by memrec: take the variables memrec added out of `environ`
 * (in place: main()'s envp is the same array), keeping copies. Start-up
 * only (single-threaded, before the program's code); never allocates. */
HIDDEN void envhide_init(void);
/** Whether envhide_init() took anything out. */
HIDDEN int envhide_active(void);
/** The environment to hand to an exec or spawn that continues the
 * recording: `envp` with memrec's variables put back in front (LD_PRELOAD
 * merged with the program's own). Returns `envp` itself when there is
 * nothing to add or no memory. Call envhide_release() if the exec returns.
 * Async-signal-safe (system calls only). */
HIDDEN char *const *envhide_for_exec(char *const *envp, struct envhide_space *sp);
HIDDEN void envhide_release(struct envhide_space *sp);

#endif
