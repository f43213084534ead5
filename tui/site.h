// SPDX-License-Identifier: MIT
/* site.c's contract: how memtui names one allocation stack (a trace, a
 * model node) in a list or a legend: its innermost function, with the
 * file:line of that frame, and the caller. */
#ifndef TUI_SITE_H
#define TUI_SITE_H

#include <stddef.h>
#include <stdint.h>

#include "data.h"
#include "report.h"

/** "function (file:line) < caller" of trace `trace` of d's model into buf,
 * escaped for the terminal (d->utf8), shortened as the rows' names are
 * (names.h); "[no stack]" for trace 0. Returns buf. */
const char *site_label(struct data *d, uint32_t trace, char *buf, size_t cap);

/** memprint's merged stacks of d's model (report.h), made when *cache is
 * NULL or was made at another d->generation (*gen says which); NULL when
 * the symbolizer cannot start. The caller frees *cache (report_free()). */
const struct report *site_report(struct data *d, struct report **cache, uint64_t *gen);

#endif
