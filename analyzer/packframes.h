// SPDX-License-Identifier: MIT
/* The frames a packed recording carries (memprint --pack, docs/format.md
 * "Packed recordings"): its string table and, per (module, address), the
 * frames the symbolizer gave where the program's files were. Filled by
 * model.c from PACK_STRING and PACK_FRAMES records, read by symfiles.c
 * instead of the module files. The file is untrusted: every string id and
 * module is checked, counts are bounded by what the file defined. */
#ifndef PACKFRAMES_H
#define PACKFRAMES_H

#include <stdint.h>

#include "memfmt.h"

/* Limits (docs/format.md, "Limits of the readers"), all relative to the
 * trace nodes defined before (a packer writes the pack after them):
 * addresses, at most one per node; strings, at most two per frame of
 * those addresses (MEMFMT_MAX_PACK_FRAMES each) and 256 more; string
 * bytes, 4 KiB per node and 16 MiB more. A real pack is far below: some
 * 5 names and 200 bytes of names per address. */
#define PACKED_STRINGS_PER_NODE (2u * MEMFMT_MAX_PACK_FRAMES)
#define PACKED_STRINGS_BASE 256u
#define PACKED_BYTES_PER_NODE 4096u
#define PACKED_BYTES_BASE (16u << 20)

/** One frame as packed: strings are the pack's (NULL = unknown). */
struct packed_frame {
    const char *function;
    const char *file;
    uint32_t line;
    int inlined;
};

struct packed;

/** An empty pack. Dies on out of memory (xmalloc). */
struct packed *packed_new(void);
/** Release, with every string; accepts NULL. */
void packed_free(struct packed *p);

/** Add the string of a PACK_STRING record (copied; a NUL byte inside
 * ends it), with `nodes` trace nodes defined so far. Returns 0, or -1
 * when refused: the limits above are reached. */
int packed_add_string(struct packed *p, const char *str, uint32_t len, uint32_t nodes);

/** Add the frames of a PACK_FRAMES record for model module `module` (an
 * index the caller found from the record's module id); `max_addrs` bounds
 * the addresses held (the trace nodes defined so far). Returns 0, or -1
 * when refused: a string id not defined before, an address given before
 * for that module, or one address too many. */
int packed_add_frames(struct packed *p, uint32_t module, const struct memfmt_record *rec, uint32_t max_addrs);

/** The frames of address `offset` (return address minus the bias) of
 * model module `module`, innermost first, into `out` (room for `max`; a
 * longer chain keeps its innermost frames). Returns their number, 0 when
 * the pack has none. The strings stay valid until packed_free() once the
 * file is loaded (the arena moves only while strings are added). Only
 * reads: threads may call it at once. */
int packed_find(const struct packed *p, uint32_t module, uint64_t offset, struct packed_frame *out, int max);

/** Addresses held. */
uint32_t packed_addresses(const struct packed *p);

#endif
