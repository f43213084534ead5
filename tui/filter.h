// SPDX-License-Identifier: MIT
/* filter.c's contract: memtui's filter (F): the stacks through a function,
 * a source file or a module (a POSIX extended regular expression, kept or
 * excluded), or the allocations of one thread, as memprint's --function,
 * --exclude and --thread restrict them. It parses what the user typed and
 * makes the analyzer's keep mask (analysis_keep_frames()); data.c runs the
 * query. Knows nothing of curses. */
#ifndef TUI_FILTER_H
#define TUI_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "frames.h"

struct filter {
    int on;
    enum analysis_field field; /* what the expression matches */
    int exclude; /* 1: drop the stacks that match instead of keeping them */
    char re[256]; /* the expression; "" with a thread filter */
    uint32_t thread; /* 0: every thread; else memprint --thread's index */
    char text[300]; /* how the screen says it, e.g. "file 'phases\.c'" */
};

/* Folding allocator wrappers (W, analyzer/wrappers.h): the known ones,
 * and the user's expression too when one is given. */
struct fold {
    int on;
    char re[256]; /* the user's own wrappers; "" for the known ones only */
};

/** The expression wrappers_remap() is given for `f`: the known wrappers,
 * or them and f->re. Returns buf. */
const char *fold_regex(const struct fold *f, char *buf, size_t cap);

/** Parse `spec`: "[function|file|module] [!]REGEX" (a bare expression is a
 * function's; "!" excludes the matches) or "thread N". An empty spec is
 * no filter (f->on = 0). Returns 0, or -1 with a message in err. */
int filter_parse(const char *spec, struct filter *f, char *err, size_t cap);
/** The keep mask of filter `f` for the frames `fr` (analysis_query.keep;
 * the caller frees it), NULL for a thread filter or none. Returns 0 or
 * MEMFMT_E_INVALID (a bad expression, message in err). */
int filter_mask(const struct filter *f, struct frames *fr, uint8_t **mask, char *err, size_t cap);

#endif
