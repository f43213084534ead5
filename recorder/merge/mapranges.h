// SPDX-License-Identifier: MIT
/* memrec's set of anonymous address ranges the recorded program mapped
 * directly (mmap, mremap, brk/sbrk), each with the trace that mapped it.
 * Runs in memrec, outside the target: it may allocate. Not thread-safe. */
#ifndef MAPRANGES_H
#define MAPRANGES_H

#include <stddef.h>
#include <stdint.h>

/* One recorded range [start, end), owned by `trace` (a file node id). */
struct maprange {
    uint64_t start, end;
    uint32_t trace;
};

/* Ranges sorted by start, never overlapping. A sorted array: programs map
 * directly a few hundred ranges at most (the allocator's own mappings are
 * not recorded), and a lookup is a binary search. */
struct mapranges {
    struct maprange *v;
    size_t n, cap;
};

/* An empty set is all zeros: `struct mapranges m = {0};`. */

/** Called once per piece a removal takes away: its owner and its bytes. */
typedef void (*mapranges_fn)(void *ctx, uint32_t trace, uint64_t bytes);

/** Release the array; the set is empty afterwards. */
void mapranges_release(struct mapranges *m);
/** Remove every recorded byte in [start, start + len), splitting ranges
 * that stick out on either side; parts nobody recorded are ignored. Calls
 * `fn` (may be NULL) for each piece removed, lowest address first. Returns
 * the bytes removed. */
uint64_t mapranges_remove(struct mapranges *m, uint64_t start, uint64_t len, mapranges_fn fn, void *ctx);
/** Add [start, start + len) for `trace`. The caller removes what it
 * overlapped first (mapranges_remove); an overlap left is removed here,
 * silently. len 0 adds nothing. */
void mapranges_add(struct mapranges *m, uint64_t start, uint64_t len, uint32_t trace);
/** The trace owning the lowest recorded byte in [start, start + len),
 * 0 when nothing there is recorded. */
uint32_t mapranges_owner(const struct mapranges *m, uint64_t start, uint64_t len);
/** Bytes recorded in all ranges. */
uint64_t mapranges_bytes(const struct mapranges *m);

#endif
