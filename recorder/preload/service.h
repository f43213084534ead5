// SPDX-License-Identifier: MIT
/* The service thread (service.c): the recorder's periodic work. Part of the
 * lifecycle layer (init.c, crash.c, service.c), which calls the layers
 * below it and is called only by the hooks and entry points above. */
#ifndef SERVICE_H
#define SERVICE_H

#include "hidden.h"

/** Start the service thread: every MEMREC_FLUSH_MS it scans the modules,
 * polls an attach (the `poll` of service_set_attach()), samples the
 * allocator when its budget allows (heapinfo_tick()) and runs a flush
 * round (buffer_sync()). It ends when recording stops, when `poll` returns
 * 1 or when service_stop() is called; unless stopped, it then calls `end`. The program's signals are
 * blocked in it. Logs once and returns when the thread cannot start. */
HIDDEN void service_start(void);
/** Hand the service thread what an attach needs done (attach.c, before its
 * first service_start()): `poll` on every tick (1: end the thread) and
 * `end` when the thread ends. Both are called from the service thread; they
 * stay set for later threads (a fork child's). A function pointer because
 * attach.c lies above: it starts and stops this thread. */
HIDDEN void service_set_attach(int (*poll)(void), void (*end)(void));
/** Make every service thread started so far end at its next wake-up, even
 * if a new attach turns recording on again before then. Called at detach,
 * before the buffers stop. */
HIDDEN void service_stop(void);
/** The service thread's kernel thread id while it runs, else 0. */
HIDDEN int service_tid(void);

#endif
