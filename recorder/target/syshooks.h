// SPDX-License-Identifier: MIT
/* Descriptor and exec hooks (syshooks.c): the lookup of the system functions they forward to. */
#ifndef RECORDER_SYSHOOKS_H
#define RECORDER_SYSHOOKS_H

#include "hidden.h"

/** Look up the next definitions of the hooked system functions. */
HIDDEN void hooks_resolve(void);

#endif
