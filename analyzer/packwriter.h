// SPDX-License-Identifier: MIT
/* memprint --pack: a copy of a recording that carries the symbolized
 * frames of its trace tree, so that it reads the same where the program's
 * files are absent (docs/format.md, "Packed recordings"). The input's
 * records are copied unchanged; the pack records follow them. Never
 * prints: errors come back as a message for the caller to print. */
#ifndef PACKWRITER_H
#define PACKWRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What a pack holds, for the caller's report and the docs' figures. */
struct pack_stats {
    uint32_t addresses; /* distinct (module, address) pairs whose frames are packed */
    uint32_t unknown; /* addresses the symbolizer knew nothing of: not packed, read as module+offset */
    uint32_t frames; /* frames packed (an address has its inline chain) */
    uint32_t strings; /* distinct function and file names */
    uint64_t in_bytes; /* size of the input file */
    uint64_t out_bytes; /* size of the output file */
    /* The input was cut short (its data ends inside a record, and it has
     * no END record): the copy holds the records before the cut, and no
     * END either. 0 for a whole input. */
    int cut;
    uint64_t cut_offset; /* where the input's data stops (decompressed offset) */
    /* The input's data ends cleanly but without an END record (memrec
     * stopped or killed between records): so does the copy. */
    int no_end;
};

/**
 * Write a packed copy of the recording `in` to `out`: every record of
 * `in` unchanged (the pack records of a packed input left out), then a
 * PACK_STRING record per name and a PACK_FRAMES record per distinct
 * address of a module that the trace tree uses, with the frames the
 * analyzer's symbolizer gives for it here (or, for a packed input, its
 * pack's: packing is idempotent); the header gets MEMFMT_HF_PACKED and
 * keeps the input's version. The copy is written to a temporary file next
 * to `out` and renamed over it only when complete.
 * An input cut short (memrec killed, the machine stopped: its data ends
 * inside a record and it has no END record) is packed up to the cut, and
 * st->cut says so: the copy reads as the input does, a file without END.
 * Returns 0 with *st filled, or -1 with a one-line message in err (no
 * program name, no newline): the same file as input and output, an
 * input that cannot be read or that is corrupt (or cut after its END:
 * its copy would look whole), or a failure to write. Dies on out of
 * memory.
 */
int pack_file(const char *in, const char *out, struct pack_stats *st, char *err, size_t errcap);

/** memprint --pack's line on what `st` holds: what was packed from `in`
 * into `out`, and the size change. */
void pack_print_stats(const struct pack_stats *st, const char *in, const char *out, FILE *f);

#endif
