// SPDX-License-Identifier: MIT
/* Start-up state of the recorder, read by every hook. */
#ifndef RECORDER_INIT_H
#define RECORDER_INIT_H

/** Start recording if not started yet: resolve the real allocator, read the
 * options, connect to memrec. Idempotent and thread-safe; other threads
 * calling during start-up are passed through unrecorded. */
void init_start(void) __attribute__((visibility("hidden")));
/** True once start-up is over (whether or not recording is on). */
int init_is_ready(void) __attribute__((visibility("hidden")));

/** In a fork child (atfork handler): when memrec follows forks, start a
 * recording of the child's own at its next hook. */
void init_forked(void) __attribute__((visibility("hidden")));
/** The program is about to exec: send every event recorded so far. */
void init_before_exec(void) __attribute__((visibility("hidden")));

/** memrec --pid loaded us into this running process: it is the one
 * recorded, and start-up is over. */
void init_attached(void) __attribute__((visibility("hidden")));

#endif
