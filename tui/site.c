// SPDX-License-Identifier: MIT
/* Names of allocation stacks for the lists and legends (site.h). */
#define _GNU_SOURCE
#include "site.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "frames.h"
#include "names.h"

/* The name of a node's innermost frame, escaped and shortened (a new string). */
static char *frame_name(struct data *d, uint32_t node, const struct sym_frame **out)
{
    uint32_t n = 0;
    const struct sym_frame *fr = frames_of_node(d->fr, node, &n);
    *out = n ? &fr[0] : NULL;
    if (!n) {
        return NULL;
    }
    char *raw = fr[0].function ? esc_text_for(fr[0].function, !d->utf8) : frames_name_dup(&fr[0]);
    char *s = names_shorten(raw);
    free(raw);
    return s;
}

const char *site_label(struct data *d, uint32_t trace, char *buf, size_t cap)
{
    const struct model *m = d->m;
    if (trace == 0 || trace >= m->nnodes) {
        snprintf(buf, cap, "[no stack]");
        return buf;
    }
    const struct sym_frame *fr;
    char *name = frame_name(d, trace, &fr);
    uint32_t parent = m->nodes[trace].parent;
    const struct sym_frame *pfr = NULL;
    char *caller = parent && parent < m->nnodes ? frame_name(d, parent, &pfr) : NULL;
    char *file = NULL;
    if (fr && fr->file) {
        const char *slash = strrchr(fr->file, '/');
        file = esc_text_for(slash ? slash + 1 : fr->file, !d->utf8);
    }
    char where[256] = "";
    if (file) {
        snprintf(where, sizeof where, " (%s:%u)", file, (unsigned)fr->line);
    }
    snprintf(buf, cap, "%s%s%s%s", name ? name : "??", where, caller ? " < " : "", caller ? caller : "");
    free(name);
    free(caller);
    free(file);
    return buf;
}

const struct report *site_report(struct data *d, struct report **cache, uint64_t *gen)
{
    if (*cache && *gen != d->generation) {
        report_free(*cache);
        *cache = NULL;
    }
    if (!*cache) {
        /* report.c's sort key is a static: a reload thread may be ranking too. */
        data_report_lock(1);
        *cache = report_new(d->m);
        data_report_lock(0);
        *gen = d->generation;
    }
    return *cache;
}
