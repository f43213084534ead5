// SPDX-License-Identifier: MIT
/* Sending what signal handlers queued (sigevents.c): the calls sigdefer.c
 * kept while their thread was inside the recorder become events of the
 * thread's buffer. */
#ifndef RECORDER_SIGEVENTS_H
#define RECORDER_SIGEVENTS_H

#include "hidden.h"

struct tbuf;

/** Append this thread's queued calls to its buffer `b`, which the caller
 * (the thread itself) holds, and empty the queue. Called before the event
 * the thread is about to number: the queued calls happened first. */
HIDDEN void sigevents_emit(struct tbuf *b);

#endif
