// SPDX-License-Identifier: MIT
/* Flushing when the program dies of a fatal signal (crash.c); the program's own handlers stay. */
#ifndef RECORDER_CRASH_H
#define RECORDER_CRASH_H

#include "hidden.h"

/** Install the flushing handler for SIGSEGV, SIGBUS, SIGILL, SIGFPE,
 * SIGABRT, SIGTRAP and SIGSYS where their disposition is SIG_DFL (the
 * program's own handlers stay). Call when recording starts; may be called
 * again (in a forked child that starts recording). */
HIDDEN void crash_install(void);

#endif
