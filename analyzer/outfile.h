// SPDX-License-Identifier: MIT
/* Writing one of memprint's output files (--folded, --svg, --pprof,
 * --massif) so that a failed run never leaves a file that looks whole.
 * Prints nothing: a failure comes back as a message for main(). */
#ifndef OUTFILE_H
#define OUTFILE_H

#include <stddef.h>
#include <stdio.h>

/* Writes the output into `f`; returns 0, or a negative value with errno
 * set (stdio's). */
typedef int (*outfile_fn)(void *ctx, FILE *f);

/** Call `fn` on `out`: '-' is stdout (flushed); a device or a pipe
 * (/dev/null, a FIFO) is written as it is; a regular file is written to
 * OUT.tmp and renamed over `out` when complete (the temporary is removed
 * on failure). Returns 0, or -1 with the message in `err` ("cannot write
 * the WHAT: ..." for stdout, "cannot write 'PATH': ..." else). */
int outfile_write(const char *out, const char *what, outfile_fn fn, void *ctx, char *err, size_t cap);

#endif
