// SPDX-License-Identifier: MIT
/* Objects present only because of the user's LD_PRELOAD (preloaded.c), and ld.so, told apart
 * at start-up for the MODULE flags. */
#ifndef RECORDER_PRELOADED_H
#define RECORDER_PRELOADED_H

#include <stdint.h>

#include "hidden.h"

/** Classify the objects loaded right now (call once, at the first module
 * scan, when only the start-up objects are loaded; later calls do
 * nothing): which are preload-only and which is ld.so. Not thread-safe:
 * called under modules.c's scan lock. Never allocates. */
HIDDEN void preloaded_classify(void);
/** MODULE flags (enum memfmt_module_flags) of the object at (bias, phdr),
 * as dl_iterate_phdr gives them; 0 for any object loaded after start-up. */
HIDDEN uint32_t preloaded_flags(uintptr_t bias, const void *phdr);

#endif
