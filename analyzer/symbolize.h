// SPDX-License-Identifier: MIT
/* Symbolizer for the offline analyzer: instruction pointer -> function,
 * inline chain and file:line, read with elfutils libdw from the modules a
 * recording names. It allocates freely (running out of memory ends the
 * tool, as everywhere in the analyzer) and never prints. */
#ifndef MEMREC_SYMBOLIZE_H
#define MEMREC_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

/*
 * How to use:
 *
 *     struct symbolizer *s = symbolize_new();
 *     int exe = symbolize_add_module(s, "/usr/bin/prog", 0x555555554000, id, id_len);
 *     struct sym_frame frames[32];
 *     int n = symbolize_lookup(s, exe, ip - 1, frames, 32);
 *     for (int i = 0; i < n; i++) { ... frames[i].function, .file, .line, .inlined ... }
 *     symbolize_free(s);
 *
 * Modules are registered cheaply; a module's file (and its separate debug file, found by build-id
 * under the debuginfo path or by .gnu_debuglink) is opened on the first lookup that needs it.
 * Every (module, ip) is resolved once and cached: a repeated lookup is one hash probe and a copy.
 * A symbolizer is not thread-safe: use one per thread, or lock around it.
 * Errors are negative errno values (-EINVAL, -EOVERFLOW); a module that cannot be read is not an
 * error, its lookups just carry module + offset. Out of memory ends the tool (util.h's xmalloc).
 */

/**
 * One frame of symbolized output.
 * All strings are owned by the symbolizer and stay valid until symbolize_free().
 */
struct sym_frame {
    /** Demangled C++ name ("ns::Widget::make(int)") or C name; NULL if unknown. */
    const char *function;
    /** Source file path from the DWARF line information; NULL if unknown. */
    const char *file;
    /** Source line in `file`; 0 if unknown. */
    unsigned line;
    /** Module path exactly as given to symbolize_add_module(). */
    const char *module;
    /** ip minus the module's load bias: the file-relative address, for "module+0x1234". */
    uint64_t module_offset;
    /** 1 for an inlined function expanded at this ip, 0 for the real (outermost) function. */
    int inlined;
};

/** Counters for diagnostics (memprint --verbose) and tests. */
struct symbolize_stats {
    /** Calls to symbolize_lookup() that returned frames. */
    uint64_t lookups;
    /** Lookups that were not in the cache and had to be resolved. */
    uint64_t misses;
    /** Modules whose file was opened and gave at least symbols or DWARF. */
    uint64_t modules_opened;
    /** Modules that could not be used (missing, not ELF, build-id mismatch, pseudo like [vdso]). */
    uint64_t modules_failed;
};

/** Opaque symbolizer state: libdwfl session, registered modules, result cache. */
struct symbolizer;

/**
 * Create an empty symbolizer.
 * Returns NULL when libdwfl cannot start a session.
 * Free it with symbolize_free().
 */
struct symbolizer *symbolize_new(void);

/**
 * Free the symbolizer, its open files and every string it handed out. Accepts NULL.
 */
void symbolize_free(struct symbolizer *s);

/**
 * Set where separate debug files are looked for, in libdwfl's debuginfo_path syntax: a
 * colon-separated list of directories, each searched for .build-id/xx/rest.debug and, for
 * .gnu_debuglink, for the link name (relative entries are relative to the module's directory).
 * The default (no call, or NULL) is libdwfl's ":.debug:/usr/lib/debug".
 * Only modules opened after the call are affected, so call it before the first lookup.
 * The string is copied.
 */
void symbolize_set_debuginfo_path(struct symbolizer *s, const char *path);

/**
 * Register a module loaded at `bias` (the ELF load bias, dl_iterate_phdr's dlpi_addr; 0 for a
 * non-PIE executable), with its path on disk and optional GNU build-id bytes (copied; NULL/0 when
 * unknown). Nothing is opened yet.
 * When a build-id is given and the file on disk has a different one (the file was rebuilt or
 * replaced since recording), or the file is missing, the debug file with that build-id under the
 * debuginfo path is used instead if present; otherwise lookups give module + offset.
 * Pseudo modules such as "[vdso]" or "linux-vdso.so.1" always give module + offset.
 * Returns the module index (>= 0, consecutive from 0), or -EINVAL (NULL path, build_id_len > 0
 * with NULL build_id, or a build-id longer than 64 bytes), -EOVERFLOW (INT_MAX modules).
 */
int symbolize_add_module(struct symbolizer *s, const char *path, uint64_t bias, const uint8_t *build_id,
                         size_t build_id_len);

/**
 * Resolve the absolute instruction pointer `ip`, which the caller knows lies in module
 * `module_index`. `ip` is used as is: for return addresses the caller passes ip - 1.
 * Writes up to `max` frames to `out`, innermost first: the inlined functions expanded at `ip`
 * (inlined = 1), then the real function that contains them (inlined = 0). Each frame's file:line is
 * the location inside that frame's function: the line table entry for `ip` in the innermost frame,
 * the call site of the next inner inlined function in each outer frame. When the chain is longer
 * than `max`, the innermost `max` frames are written.
 * Returns the number of frames written, at least 1 (when nothing is known: one frame with only
 * module and module_offset set); -EINVAL for a bad index, NULL `out` or max < 1; -EOVERFLOW when
 * the cache holds 2^32 frames.
 * The first lookup of a (module, ip) may open files and allocate; later ones do not.
 */
int symbolize_lookup(struct symbolizer *s, int module_index, uint64_t ip, struct sym_frame *out, int max);

/**
 * Keep what symbolizers resolve in a cache on disk under `dir` (one file per module build-id;
 * NULL: no cache, the default), for every symbolizer created after the call: a later run on the
 * same files reads the frames from there instead of the module's DWARF. A cache file counts
 * only while the module file, its debug file and the debuginfo path are the ones it was made
 * from (device, inode, size, modification time); a changed, foreign or corrupt file is ignored
 * and rewritten. The directory is made 0700 if missing and holds at most 256 files of at most
 * 32 MiB. For main(): not thread-safe. The string is copied.
 */
void symbolize_set_cache_default(const char *dir);

/**
 * The cache directory of this user: $XDG_CACHE_HOME/memrec/symbols (an absolute
 * XDG_CACHE_HOME), else $HOME/.cache/memrec/symbols; NULL when MEMREC_SYMBOL_CACHE is "off" or
 * "0", or neither variable gives an absolute path. Malloc'd.
 */
char *symbolize_cache_dir_from_env(void);

/**
 * Copy the current counters into `*stats`.
 */
void symbolize_get_stats(const struct symbolizer *s, struct symbolize_stats *stats);

#endif
