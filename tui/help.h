// SPDX-License-Identifier: MIT
/* help.c's contract: the help screen's text, made from action.c's lines
 * and views.c's table, so that a view added to the table is in the help
 * with no other change. */
#ifndef TUI_HELP_H
#define TUI_HELP_H

/** The help lines, NULL-terminated, in a new array that help_free()
 * frees: action_help()'s, with its line action_help_views replaced by the
 * number keys and the names of every view of views.c's table (each
 * class's `help`, else its `name`), wrapped below `width` columns. */
char **help_new(int width);
/** Free what help_new() returned; takes NULL. */
void help_free(char **lines);

#endif
