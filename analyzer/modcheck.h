// SPDX-License-Identifier: MIT
/* Whether the files of a recording's modules are still the recorded ones:
 * a module whose file is gone, or was rebuilt since (its GNU build-id
 * differs from the recorded one), cannot be symbolized, and its frames
 * show as module and offset only. The front ends say so once, and point to
 * memprint --pack. Reads the files (their ELF notes), never runs them. */
#ifndef MODCHECK_H
#define MODCHECK_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

enum modcheck_why {
    MODCHECK_MISSING = 1, /* no file at the recorded path */
    MODCHECK_REBUILT, /* a file whose build-id is not the recorded one */
    MODCHECK_UNREADABLE, /* there, but not a regular ELF file that can be read */
};

struct modcheck_entry {
    const char *path; /* the model's string: valid while the model is */
    enum modcheck_why why;
};

struct modcheck {
    struct modcheck_entry *v;
    size_t n, cap;
};
#define MODCHECK_INIT                                                                                                  \
    {                                                                                                                  \
        NULL, 0, 0                                                                                                     \
    }

/** The modules of `m` whose file cannot give their symbols, each path
 * once, in the order of the model's modules, into `out` (initialised with
 * MODCHECK_INIT; modcheck_release() it). Nothing for a packed recording
 * (it never opens module files), for kernel pseudo-files ("[vdso]") and
 * for a module whose separate debug file is found by its build-id under
 * /usr/lib/debug (its symbols come from there). Dies on out of memory. */
void modcheck_run(const struct model *m, struct modcheck *out);
/** Release the list; `c` is then empty. */
void modcheck_release(struct modcheck *c);
/** The short reason: "missing", "rebuilt: its build-id differs",
 * "unreadable". */
const char *modcheck_why_name(enum modcheck_why why);
/** The GNU build-id of the ELF file `elf` into `out` (room for `cap`
 * bytes): its length, or 0 when it has none (or a longer one). */
size_t modcheck_build_id(Elf *elf, uint8_t *out, size_t cap);

#endif
