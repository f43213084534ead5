// SPDX-License-Identifier: MIT
/* The tools' progress bar: while memprint or memtui reads a recording,
 * one line on stderr says how far into the file this process has read
 * (the offset of its descriptor on the file, from /proc/self/fdinfo, so
 * that no reader needs a callback), counting the passes over it. Drawn
 * by a thread of its own, only on a terminal, only once the work has
 * taken `delay_ms`, never wider than the terminal (a wrapped line makes
 * every update scroll). */
#ifndef PROGRESS_H
#define PROGRESS_H

struct progress;

/** Start watching this process read `path`. Returns NULL, and draws
 * nothing, when stderr is not a terminal, `path` is not a regular file or
 * the thread cannot start. `who` names the tool at the line's start.
 * MEMREC_PROGRESS_DELAY_MS, a number of ms, replaces `delay_ms`. */
struct progress *progress_start(const char *who, const char *path, unsigned delay_ms);
/** Stop and erase the line; accepts NULL. Call it before writing to the
 * terminal. */
void progress_stop(struct progress *p);

#endif
