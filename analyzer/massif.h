// SPDX-License-Identifier: MIT
/* The massif export: heap in use over the run as valgrind massif's
 * massif.out (the file `ms_print` and massif-visualizer read), with the
 * heap peak's allocation tree and a few more detailed snapshots. The
 * figures come from the analyses: the series from timeseries.h, the
 * trees from calltree.h's bottom-up tree of the model's accounting (the
 * peak, the end) or of an analysis.h pass stopped at a moment (the other
 * detailed snapshots). Never prints but to the stream it is given.
 * docs/exports.md tells the format and its choices. */
#ifndef MASSIF_H
#define MASSIF_H

#include <stdint.h>
#include <stdio.h>

#include "frames.h"
#include "model.h"

/*
 * How to use:
 *
 *     struct massif *ms;
 *     int rc = massif_new(path, fr, &ms, &err);     // reads the file again
 *     if (rc == 0) { massif_write(ms, f); massif_free(ms); }
 */

/* Snapshots of the series (massif's default --max-snapshots is 100) and
 * the spacing of the detailed ones among them (massif's --detailed-freq
 * is 10). Each detailed snapshot but the last costs one pass. */
#define MASSIF_SNAPSHOTS 50
#define MASSIF_DETAILED_EVERY 10
/* Tree entries below this share of the snapshot's heap, in percent, are
 * written as one "in N places" line (massif's --threshold, 1.0). */
#define MASSIF_THRESHOLD 1.0
/* Frames below the allocation functions a tree shows (massif's --depth,
 * 30): deeper callers are left out, which also keeps ms_print, whose tree
 * reader recurses once per level, from warning about deep recursion. */
#define MASSIF_MAX_DEPTH 30

struct massif;

/** The snapshots of the recording at `path`, whose model is
 * frames_model(fr) (the whole run): MASSIF_SNAPSHOTS points evenly spaced
 * over the run (fewer for a run shorter than that many milliseconds), the
 * heap peak inserted at its time, every MASSIF_DETAILED_EVERY-th point and
 * the last detailed. Returns 0 with *out (free with massif_free()), or a
 * negative memfmt status when the file cannot be read again (*err_errno
 * = errno for MEMFMT_E_IO). `fr` is used during the call only; the model
 * must outlive *out. Time: 1 + (MASSIF_SNAPSHOTS / MASSIF_DETAILED_EVERY
 * - 1) passes over the file, one at a time: memory is one pass's
 * accounting and tree, and the trees' text, which holds the entries
 * above MASSIF_THRESHOLD only (the walk expands nothing else). */
int massif_new(const char *path, struct frames *fr, struct massif **out, int *err_errno);
/** Write the massif.out text to `f`. Returns 0, or -1 when writing failed
 * (errno set by stdio). */
int massif_write(const struct massif *ms, FILE *f);
/** Release; accepts NULL. */
void massif_free(struct massif *ms);

#endif
