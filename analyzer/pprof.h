// SPDX-License-Identifier: MIT
/* The pprof export: a recording's per-stack costs as a gzip-compressed
 * profile.proto (github.com/google/pprof, proto/profile.proto), the file
 * `pprof` and `go tool pprof` read. Encoded by hand (protobuf.h) and
 * compressed with zlib. Computes no figure: the values are the
 * accounting's per-trace costs, the frames frames.h's. Writes only to the
 * stream it is given. docs/exports.md tells what each field holds. */
#ifndef PPROF_H
#define PPROF_H

#include <stdio.h>

#include "accounting.h"
#include "frames.h"

/* Which moment the inuse_* sample types describe. */
enum pprof_at {
    PPROF_AT_END, /* live at the end of the recording (leaked) */
    PPROF_AT_PEAK, /* live at the moment of the heap peak */
};

/** Write the profile of the costs in `a` (an accounting kept per trace
 * whose trace ids are the nodes of frames_model(fr): the model's, or an
 * analysis's) to `f`, gzip-compressed. Sample types, in this order:
 * alloc_objects/count, alloc_space/bytes, inuse_objects/count,
 * inuse_space/bytes, and for a timed recording (memrec --time) a fifth,
 * alloc_time/nanoseconds: the allocator time charged to the trace
 * (accounting.h's time_ns); one sample per trace with a nonzero value, its
 * locations leaf first, from the allocation's caller up to main() (the C
 * library's frames above it dropped, as in memprint's reports). Summed
 * over the samples, each value equals the accounting's total: calls,
 * bytes allocated, blocks and bytes live at the end (or at the peak
 * with PPROF_AT_PEAK), and the allocator time; for a sampled recording,
 * the sum of the per-stack estimates. Returns 0, or -1 when writing or compressing failed (errno
 * set; EIO for a zlib error). Memory: the nodes, locations, functions and
 * strings the samples use, and one sample at a time; the output is
 * streamed. */
int pprof_write(struct frames *fr, const struct accounting *a, enum pprof_at at, FILE *f);

#endif
