// SPDX-License-Identifier: MIT
/* detail.c's contract: the frame detail overlay the screen draws over a
 * view that has a selected frame. */
#ifndef TUI_DETAIL_H
#define TUI_DETAIL_H

#include "calltree.h"

/** The detail of frame `fr` (NULL: "no frame selected"), named `name`
 * (escaped), over rows y..y+h-1, `w` columns; `utf8` as data's. The
 * source lines are read once for a file and line and kept while the same
 * ones are shown (the screen draws many times a second). */
void detail_draw(const struct sym_frame *fr, const char *name, int utf8, int y, int h, int w);

#endif
