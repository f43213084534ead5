// SPDX-License-Identifier: MIT
/* The roots of memrec's reachability scan of a stopped process (roots.c):
 * from /proc/PID/maps and the threads' stack pointers, the memory the
 * program may keep pointers in that is not its heap. */
#ifndef ROOTS_H
#define ROOTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "reachgraph.h"

/* What the roots leave out besides the heap: the recorder's own memory. */
struct roots_skip {
    const uint64_t *own; /* the recorder's mappings: start, length pairs */
    size_t nown;
    const char *module; /* the recorder library's file name (its data holds no pointer of the program's) */
    uint64_t skip_sp; /* a stack pointer whose stack is the recorder's (its service thread), 0: none */
};

/** The root ranges of `pid`, sorted by address, into *out (xmalloc'd, *n
 * of them): every readable and writable mapping but the heap's
 * ([heap]), the kernel's ([vvar], [vdso]), devices, the recorder's (`skip`),
 * with a thread's stack (the mapping holding one of the `nsp` stack
 * pointers `sp`) read from its pointer (less x86-64's 128-byte red zone)
 * up. Anonymous mappings may hold live blocks, which are not roots
 * (REACH_RANGE_SKIP_BLOCKS); one that starts at a multiple of 64 MiB may
 * be a thread arena's heap (REACH_RANGE_ARENA). Returns 0, or -1 with
 * errno when the maps cannot be read. */
int roots_collect(pid_t pid, const uint64_t *sp, size_t nsp, const struct roots_skip *skip, struct reach_range **out,
                  size_t *n);

#endif
