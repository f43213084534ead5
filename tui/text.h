// SPDX-License-Identifier: MIT
/* text.c's contract: numbers in the report's format and name matching,
 * for every part of the screen. Depends on nothing else in tui/. */
#ifndef TUI_TEXT_H
#define TUI_TEXT_H

#include <stddef.h>
#include <stdint.h>

/** Human bytes ("1.50 MiB"), the report's way; returns buf. */
const char *text_bytes(char *buf, size_t cap, uint64_t v);
/** Case-insensitive substring test (ASCII case); 0 for an empty needle. */
int text_match(const char *hay, const char *needle);

#endif
