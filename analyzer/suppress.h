// SPDX-License-Identifier: MIT
/* Leak suppressions in LeakSanitizer's format ("leak:PATTERN" lines):
 * read from files, from the patterns a program embeds with
 * __lsan_default_suppressions() (suppress_elf.c, read from the executable
 * without running it), and memprint's built-in list of one-time
 * allocations of glibc, the loader and libstdc++. Applied to a report,
 * they move the leaked call stacks they match out of the MOST MEMORY
 * LEAKED section into a count per pattern, printed apart: a suppressed
 * leak is never dropped silently. docs/suppressions.md states the rules.
 *
 * How to use:
 *     struct suppressions s = SUPPRESSIONS_INIT;
 *     suppress_load_file(&s, path, ...);  (any number of times)
 *     suppress_add_program(&s, model, ...);  suppress_add_builtin(&s);
 *     suppress_apply(&s, report);
 *     ... s.total for figures.h, suppress_print_text()/suppress_print_json() ...
 *     suppress_release(&s);
 * Patterns are tried in the order they were added. */
#ifndef SUPPRESS_H
#define SUPPRESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "figures.h"
#include "model.h"
#include "report.h"

/* Errors (negative, the analyzer's scheme). */
#define SUPPRESS_E_IO (-1) /* the file cannot be read: errno says why */
#define SUPPRESS_E_SYNTAX (-2) /* a line is not a suppression: the message says which */
#define SUPPRESS_E_TOOBIG (-3) /* more than SUPPRESS_MAX_BYTES */
#define SUPPRESS_E_NOEXE (-4) /* the recorded executable is not on this machine */

/* A suppressions file (or embedded text) larger than this is refused. */
#define SUPPRESS_MAX_BYTES (16u << 20)

enum supp_origin { SUPP_FILE, SUPP_PROGRAM, SUPP_BUILTIN };

struct supp_pattern {
    char *pattern; /* what follows "leak:", surrounding blanks removed */
    enum supp_origin origin;
    char *source; /* "FILE:LINE", the executable's path, or "built-in" */
    const char *why; /* built-in: what the pattern covers; else NULL */
    uint64_t stacks, blocks, bytes; /* what it matched (suppress_apply) */
};

/* A leaked call stack of the report and the pattern that took it. */
struct supp_match {
    uint32_t stack; /* index into report.stacks */
    uint32_t pattern;
};

struct suppressions {
    struct supp_pattern *v;
    size_t n, cap;
    struct supp_match *matched; /* in the report's leaked order, biggest first */
    size_t nmatched, matched_cap;
    struct figures_suppressed total; /* every matched leak */
};
#define SUPPRESSIONS_INIT                                                                                              \
    {                                                                                                                  \
        0                                                                                                              \
    }

/* Told about a line that is skipped (another sanitizer's kind, such as
 * "race:"): the caller prints it. */
typedef void (*suppress_warn_fn)(void *ctx, const char *msg);

/** Add the "leak:" lines of `text` (`len` bytes; NUL bytes are not
 * allowed). `source` names where the text comes from, for messages and for
 * supp_pattern.source ("NAME:LINE" when `with_lines`, else NAME). Blank
 * lines and lines starting with '#' are skipped; lines of another
 * sanitizer's kinds are skipped with a call of `warn`; any other line is
 * SUPPRESS_E_SYNTAX with a message in `err` (nothing is added then). */
int suppress_parse(struct suppressions *s, const char *text, size_t len, enum supp_origin origin, const char *source,
                   int with_lines, suppress_warn_fn warn, void *ctx, char *err, size_t cap);
/** suppress_parse() on the file at `path`; SUPPRESS_E_IO with errno set. */
int suppress_load_file(struct suppressions *s, const char *path, suppress_warn_fn warn, void *ctx, char *err,
                       size_t cap);
/** Add memprint's built-in patterns (docs/suppressions.md lists them). */
void suppress_add_builtin(struct suppressions *s);
/** Add the patterns the recorded program's executable returns from
 * __lsan_default_suppressions(), read from the file `m->exe` without
 * running it. Returns the number of patterns added (0: the program
 * defines none, or the recording is packed: it never opens module files), or a negative value with a one-line reason in `err`:
 * SUPPRESS_E_NOEXE when the file is not there (a recording read on another
 * machine), -1 when it cannot be read, is not the recorded one (its build-id differs),
 * or the function's code is not a form suppress_elf.c decodes. */
int suppress_add_program(struct suppressions *s, const struct model *m, suppress_warn_fn warn, void *ctx, char *err,
                         size_t cap);
/** The text the recorded executable's __lsan_default_suppressions()
 * returns, read by suppress_elf.c as suppress_add_program() describes:
 * 1 with a NUL-terminated copy in `*text` (`*len` bytes before the NUL;
 * the caller frees it), 0 when there is none (`*text` NULL), or the
 * negative values of suppress_add_program() with a reason in `err`. It
 * parses nothing: suppress_add_program() does, so that suppress.c calls
 * suppress_elf.c and never the other way round. */
int suppress_program_text(const struct model *m, char **text, size_t *len, char *err, size_t cap);
/** Match the leaked stacks of `r` against the patterns: a stack is taken
 * by the first pattern that matches the function, source file or module
 * name of its innermost frame that any pattern matches. Taken stacks leave
 * r's MOST MEMORY LEAKED ranking (their costs stay in every other
 * section) and are counted in their pattern and in s->total. Call once per
 * report. Costs O(leaked stacks x frames x patterns). */
void suppress_apply(struct suppressions *s, struct report *r);
/** Text section SUPPRESSED LEAKS: every pattern that matched with its
 * counts and its first o->top stacks. */
void suppress_print_text(const struct suppressions *s, const struct report *r, const struct report_options *o, FILE *f);
/** JSON members ", \"suppressions\": {...}" (docs/man/memprint.md). */
void suppress_print_json(const struct suppressions *s, FILE *f);
/** LeakSanitizer's matching of one pattern against one name: '*' matches
 * any run of characters, a leading '^' anchors at the start, a trailing
 * '$' at the end, and otherwise the pattern may match anywhere in `str`.
 * NULL or empty `str` never matches. */
int suppress_match(const char *pattern, const char *str);
/* Which suppressions suppress_load_all() adds. */
enum suppress_load_flags {
    SUPPRESS_NO_PROGRAM = 1 << 0, /* not the program's __lsan_default_suppressions() */
    SUPPRESS_NO_BUILTIN = 1 << 1, /* not memprint's built-in list */
    SUPPRESS_SAY_NOEXE = 1 << 2, /* warn also when the executable is not here (SUPPRESS_E_NOEXE) */
};

/** The suppressions of the recording `m`, in the order they are tried:
 * the files `files[0 .. nfiles)`, the program's own, the built-in list
 * (`flags`: enum suppress_load_flags). Skipped lines, and the program's
 * patterns that cannot be read, are told to `warn`; an executable that
 * is not here only with SUPPRESS_SAY_NOEXE (a gate, whose verdict may
 * depend on its patterns). Returns 0, or a file's error
 * (suppress_load_file()) with the message in `err`. */
int suppress_load_all(struct suppressions *s, const char *const *files, size_t nfiles, const struct model *m,
                      unsigned flags, suppress_warn_fn warn, void *ctx, char *err, size_t cap);
/** memprint's summary note: `note` (or nothing), then, when leaks were
 * suppressed, a line of what they took and what was not suppressed of
 * the live blocks of `a`. Into `buf` (always terminated). */
void suppress_note(char *buf, size_t cap, const char *note, const struct suppressions *s, const struct accounting *a);
/** `extra` (JSON members, or NULL) followed by suppress_print_json()'s
 * member: a new string for report_options.json_extra that the caller
 * frees, or NULL when memory runs out. */
char *suppress_json_extra(const char *extra, const struct suppressions *s);
/** Release; the struct is then as SUPPRESSIONS_INIT. */
void suppress_release(struct suppressions *s);

#endif
