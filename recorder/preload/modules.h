// SPDX-License-Identifier: MIT
/* Loaded modules (modules.c): MODULE and PROCESS records, sent before any frame that needs
 * them. */
#ifndef RECORDER_MODULES_H
#define RECORDER_MODULES_H

#include <stdint.h>

#include "hidden.h"

/** Scan loaded modules and send records for those new or gone since the
 * last scan. Cheap when nothing changed. Returns 1 if modules went away. */
HIDDEN int modules_scan(void);
/** A new stack frame at ip (buffer_setup()'s callback): when it lies in no
 * module announced yet (loaded a moment ago, maybe running its
 * constructor), scan now, so its MODULE record comes before the frame. */
HIDDEN void modules_note_frame(uint64_t ip);
/** Send the PROCESS record. */
HIDDEN void modules_send_process(char **envp);
/** A number that changes whenever a scan finds modules loaded or gone. */
HIDDEN unsigned modules_generation(void);
/** Announce every module again at the next modules_scan(), under new ids:
 * records announcing some were dropped (buffer_records_lost()). */
HIDDEN void modules_relearn(void);
/** In a fork child that starts its own recording: nothing is announced yet. */
HIDDEN void modules_forget(void);

#endif
