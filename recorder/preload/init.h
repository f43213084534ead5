// SPDX-License-Identifier: MIT
/* Start-up state of the recorder, read by every hook. */
#ifndef RECORDER_INIT_H
#define RECORDER_INIT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "guard.h"
#include "pipe.h"
#include "sigdefer.h"

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

/** The program is about to exec: send every event recorded so far. */
void init_before_exec(void) __attribute__((visibility("hidden")));

/** Once recording is set up (buffer_setup()): from now on a fork child
 * drops the parent's buffers and pipe (buffer_forget()) and, when memrec
 * follows forks, starts its own recording at its next hook. Idempotent. */
void init_watch_forks(void) __attribute__((visibility("hidden")));

/** memrec --pid loaded us into this running process: it is the one
 * recorded, and start-up is over. */
void init_attached(void) __attribute__((visibility("hidden")));
/** From now on the status the process gives exit() or returns from main
 * is noted for the recording's end (an on_exit() handler, registered once
 * per process image). Call with the thread's reentrancy flag set (on_exit
 * may allocate), never from a thread that may hold the exit handlers'
 * lock: the main thread memrec stopped to attach may. */
void init_watch_exit(void) __attribute__((visibility("hidden")));

/* ---- entry and exit of a recorded call, for every hook ---- */

#define HOOK_DEFER 2

/** Enter the recorder at the exported function's frame `frame`. The frame
 * is stored before and after the flag: a handler that runs between the
 * two stores records as outside the recorder and clears it on leaving, and
 * a handler that interrupts the recorder must find it to tell itself from
 * the recorder's own nested calls (hook_enter_alloc()). */
static inline __attribute__((always_inline)) void hook_mark_inside(void *frame)
{
    tstate.frame = frame;
    atomic_signal_fence(memory_order_seq_cst);
    tstate.in_hook = 1;
    atomic_signal_fence(memory_order_seq_cst);
    tstate.frame = frame;
}

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
    hook_mark_inside(__builtin_frame_address(0));
    return 1;
}

/** hook_enter() for the allocation hooks: also returns HOOK_DEFER when a
 * signal handler interrupted the recorder on this thread (the call is then
 * queued with sigdefer_add() once the real function returned, and neither
 * hook_leave() nor the buffer is touched). The recorder's own nested calls
 * (operator new calling malloc, dlsym) still pass through: they are less
 * than 1 KiB deeper than the recorded call, where no signal frame fits
 * (the kernel's takes more), or sigdefer_classify() finds no signal frame
 * between. */
static inline __attribute__((always_inline)) int hook_enter_alloc(int may_start)
{
    if (__builtin_expect(tstate.in_hook, 0)) {
        const char *here = __builtin_frame_address(0);
        const char *outer = tstate.frame;
        if (!outer || (uintptr_t)(outer - here) < 1024) {
            return 0;
        }
        return sigdefer_classify(here) ? HOOK_DEFER : 0;
    }
    return hook_enter(may_start);
}

/** Send what signal handlers queued while this thread was inside the
 * recorder, as a recorded call of its own (init.c). */
void hook_send_deferred(void) __attribute__((visibility("hidden")));

/** Leave the recorder; then send what signal handlers queued meanwhile.
 * in_hook is cleared before frame: a handler running in between records
 * as outside the recorder. */
static inline void hook_leave(void)
{
    tstate.in_hook = 0;
    atomic_signal_fence(memory_order_seq_cst);
    tstate.frame = NULL;
    if (__builtin_expect(tstate.deferred, 0)) {
        hook_send_deferred();
    }
}

/** The longest wait for memrec to take a reachability request, in ms
 * (--max-wait's bound, else 10 s). */
HIDDEN int init_reach_ack_ms(void);

#endif
