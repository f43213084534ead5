// SPDX-License-Identifier: MIT
/* screen.c's contract: the event loop over the views of views.c. */
#ifndef TUI_SCREEN_H
#define TUI_SCREEN_H

#include "data.h"

/** A key code no terminal sends: the batch mode's last key, which ends
 * the loop with the screen as the keys before it left it (a prompt open
 * at that moment takes it as Enter). */
#define SCREEN_KEY_DUMP 0x4000
/** Run the event loop on the loaded recording `d` until quit: makes every
 * view of the table, and frees them before it returns (`d` stays the
 * caller's). Returns the exit status. */
int screen_run(struct data *d);

#endif
