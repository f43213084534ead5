// SPDX-License-Identifier: MIT
/* Start-up state of the recorder, read by every hook. */
#ifndef RECORDER_INIT_H
#define RECORDER_INIT_H

#include "recorder_internal.h"

/** Start recording if not started yet: resolve the real allocator, read the
 * options, connect to memrec. Idempotent and thread-safe; other threads
 * calling during start-up are passed through unrecorded. */
void init_start(void) __attribute__((visibility("hidden")));
enum { INIT_NEW, INIT_STARTING, INIT_READY };
/* Where start-up is (init.c); read through init_is_ready(). */
extern atomic_int init_state __attribute__((visibility("hidden")));

/** True once start-up is over (whether or not recording is on). Inline:
 * every hook asks. */
static inline int init_is_ready(void)
{
    return atomic_load_explicit(&init_state, memory_order_acquire) == INIT_READY;
}

/** In a fork child (atfork handler): when memrec follows forks, start a
 * recording of the child's own at its next hook. */
void init_forked(void) __attribute__((visibility("hidden")));
/** The program is about to exec: send every event recorded so far. */
void init_before_exec(void) __attribute__((visibility("hidden")));

/** memrec --pid loaded us into this running process: it is the one
 * recorded, and start-up is over. */
void init_attached(void) __attribute__((visibility("hidden")));

/* ---- entry and exit of a recorded call, for every hook ---- */

/** Returns 1 when this call is to be recorded; it then owns the thread's
 * in_hook flag until hook_leave(). A call made while the thread is inside
 * the recorder passes through. With `may_start`, the first call starts the
 * recorder; without, calls before start-up pass through (mmap: the loader
 * maps before anything is set up). Always inlined into the exported
 * function, whose frame it notes: the stack walk starts at that frame's
 * caller, so the recorder's own frames are never walked. */
static inline __attribute__((always_inline)) int hook_enter(int may_start)
{
    if (tstate.in_hook) {
        return 0;
    }
    if (__builtin_expect(!init_is_ready(), 0)) {
        if (!may_start) {
            return 0;
        }
        init_start();
        if (!init_is_ready()) {
            return 0;
        }
    }
    if (!atomic_load_explicit(&rec_enabled, memory_order_relaxed)) {
        return 0;
    }
    tstate.in_hook = 1;
    tstate.frame = __builtin_frame_address(0);
    return 1;
}

static inline void hook_leave(void)
{
    tstate.frame = NULL;
    tstate.in_hook = 0;
}

#endif
