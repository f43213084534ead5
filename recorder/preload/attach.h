// SPDX-License-Identifier: MIT
/* memrec --pid inside the target (attach.c): hooking objects loaded since the attach, and
 * undoing it all at detach. */
#ifndef RECORDER_ATTACH_H
#define RECORDER_ATTACH_H

#include "hidden.h"

/** Attached: hook the objects loaded since the last call (service thread).
 * Returns 1 when memrec asked for the detach (then call attach_disarm()). */
HIDDEN int attach_poll(void);
/** Undo the attach: GOT slots back, every buffer sent, recording off, the
 * pipe closed (buffer_detach()). Only the service thread calls it, at a
 * detach request or when it ends because memrec is gone; idempotent. */
HIDDEN void attach_disarm(void);

#endif
