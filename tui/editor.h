// SPDX-License-Identifier: MIT
/* editor.c's contract: the source of a frame in the user's editor (e):
 * the screen is given back to the terminal, $VISUAL or $EDITOR (vi
 * without either) runs as "EDITOR +LINE FILE" through sh, so an editor
 * with options ("emacs -nw") works, and the screen is taken again and
 * redrawn whole. */
#ifndef TUI_EDITOR_H
#define TUI_EDITOR_H

#include <stddef.h>

/** Run the editor on `file` at `line` (0: none) and wait for it. Returns
 * the editor's exit status (0 for success), or -1 with a message in err
 * when it cannot run (the file cannot be read, fork failed). */
int editor_open(const char *file, unsigned line, char *err, size_t cap);

#endif
