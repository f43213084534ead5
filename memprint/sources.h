// SPDX-License-Identifier: MIT
/* One recording as memprint reads it: loaded (with the warnings about what
 * it holds, on stderr), and the query the options ask for run on it (a
 * window, a moment, a thread, a function filter, sizes, the heap over
 * time). Part of the program: it ends the run on a file that cannot be
 * read (o->read_fail_code) or an option that does not apply to it. */
#ifndef SOURCES_H
#define SOURCES_H

#include "analysis.h"
#include "frames.h"
#include "model.h"
#include "mpopts.h"

/* One recording and the accounting its query gives. */
struct source {
    const char *path; /* as the user named it: what messages say */
    /* What the readers open: `path`, or for an input that is not a
     * regular file (a FIFO, a process substitution, a device) a copy of it
     * in an unlinked temporary file, since some modes read it twice. */
    const char *read_path;
    int spool_fd;
    char spool_name[32];
    struct model *m;
    struct frames *fr; /* NULL until needed */
    uint8_t *keep;
    struct analysis *a; /* NULL when nothing is restricted */
    const struct accounting *acct; /* a->acct or m->acct */
    struct model view; /* the model with acct: what the reports read */
    struct analysis_query q;
    char note[512];
    char json[512];
};

/** Load `s->path` and run the query of `o` on it. */
void source_open(struct source *s, const struct opts *o);
/** The symbolizer's frames of `s`, started on the first call. */
struct frames *source_frames(struct source *s);
/** Release what source_open() made. */
void source_release(struct source *s);

#endif
