// SPDX-License-Identifier: MIT
/* The service thread (service.c): the recorder's periodic work. Part of the
 * lifecycle layer (init.c, attach.c, crash.c, service.c), which calls the
 * buffers below it and is called only by the hooks above. */
#ifndef SERVICE_H
#define SERVICE_H

#include "hidden.h"

/** Start the service thread: every MEMREC_FLUSH_MS it scans the modules,
 * polls an attach (attach_poll()) and runs a flush round (buffer_sync()).
 * It ends when recording stops or service_stop() is called; attached, it
 * then disarms the attach (attach_disarm()). The program's signals are
 * blocked in it. Logs once and returns when the thread cannot start. */
HIDDEN void service_start(void);
/** Make every service thread started so far end at its next wake-up, even
 * if a new attach turns recording on again before then. Called at detach,
 * before the buffers stop. */
HIDDEN void service_stop(void);

#endif
