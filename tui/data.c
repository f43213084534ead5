// SPDX-License-Identifier: MIT
/* The recording memtui shows: the model, its frames, the call tree of the
 * whole run or of a time window, the summary lines and the over-time
 * series, all from the analyzer library. Reloads a recording that is
 * still being written; never writes to it. */
#define _GNU_SOURCE
#include "data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "pinned.h"
#include "report.h"
#include "rssgap.h"
#include "escape.h"
#include "names.h"
#include "util.h"

static void free_lines(char **lines, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        free(lines[i]);
    }
    free(lines);
}

static void drop_names(struct data *d)
{
    free_lines(d->fnames, d->nfnames);
    free_lines(d->flabels, d->nfnames);
    d->fnames = NULL;
    d->flabels = NULL;
    d->nfnames = 0;
}

/* The summary's lines exactly as memprint prints them, for the costs in use. */
static void make_summary(struct data *d)
{
    free_lines(d->summary, d->nsummary);
    d->summary = NULL;
    d->nsummary = 0;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        die("out of memory");
    }
    report_print_summary(d->m, d->acct, f);
    const struct analysis *pass = d->win ? d->win : d->whole;
    report_print_growth(d->m, pass ? pass->growth : NULL, f);
    if (!d->win) {
        /* The whole run's: a window has no RSS split (rssgap.h). One
         * line (two with the advice), so that the sites stay on screen. */
        rssgap_print_brief(&d->m->rssgap, f);
        const struct heaplayout *l;
        enum heaplayout_why why;
        if (rssgap_layout(&d->m->rssgap, d->m->sample_rate != 0, &l, &why)) {
            pinned_print_brief(l, rssgap_arenas(&d->m->rssgap), why, (d->m->header.flags & MEMFMT_HF_ATTACHED) != 0,
                               d->fr, f);
        }
    }
    if (fclose(f) != 0) {
        die("out of memory");
    }
    size_t cap = 0;
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        xgrow((void **)&d->summary, &cap, d->nsummary + 1, sizeof *d->summary);
        d->summary[d->nsummary++] = esc_text_for(line, !d->utf8);
    }
    free(buf);
}

static void build_tree(struct data *d)
{
    calltree_free(d->tree);
    drop_names(d);
    d->acct = d->win ? d->win->acct : d->m->acct;
    /* Growth is fitted by the pass that made the window, or by the whole
     * run's series pass (data_series()). */
    const struct analysis *g = d->win ? d->win : d->whole;
    d->tree = calltree_build_growth(d->fr, d->acct, g ? g->growth : NULL);
    calltree_sort(d->tree, d->cost, d->by_self);
    d->nfnames = calltree_nfuncs(d->tree);
    d->fnames = xcalloc(d->nfnames ? d->nfnames : 1, sizeof *d->fnames);
    d->flabels = xcalloc(d->nfnames ? d->nfnames : 1, sizeof *d->flabels);
    make_summary(d);
    d->generation++;
}

static void stat_file(struct data *d)
{
    struct stat st;
    if (stat(d->path, &st) == 0) {
        if (st.st_size != d->size) {
            d->last_growth = time(NULL);
        }
        d->size = st.st_size;
        d->mtime = st.st_mtime;
    }
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int load(struct data *d, int *err_errno)
{
    uint64_t start = now_ms();
    struct model *m;
    int rc = model_load(d->path, &m, err_errno);
    if (rc < 0) {
        return rc;
    }
    struct frames *fr = frames_new(m);
    if (!fr) {
        model_free(m);
        return DATA_E_SYMBOLIZER;
    }
    struct analysis *win = NULL;
    if (d->has_window) {
        struct analysis_query q = ANALYSIS_QUERY_INIT;
        q.has_window = 1;
        q.from_ms = d->from_ms;
        q.to_ms = d->to_ms;
        q.growth = 1;
        rc = analysis_run(d->path, m, &q, &win, err_errno);
        if (rc < 0) {
            frames_free(fr);
            model_free(m);
            return rc;
        }
    }
    /* The tree points into the frames: release it before them. */
    calltree_free(d->tree);
    d->tree = NULL;
    analysis_free(d->win);
    analysis_free(d->whole);
    d->whole = NULL;
    alloctime_free(d->atime);
    d->atime = NULL;
    frames_free(d->fr);
    model_free(d->m);
    d->m = m;
    d->fr = fr;
    d->win = win;
    /* The chart's series now, while loading, so that no key waits for a
     * pass over the file; the same pass fits the growth the tree needs. */
    data_series(d);
    build_tree(d);
    d->load_ms = now_ms() - start;
    return 0;
}

int data_open(struct data *d, const char *path, int utf8, int *err_errno)
{
    memset(d, 0, sizeof *d);
    d->path = path;
    d->utf8 = utf8;
    d->cost = COST_PEAK;
    stat_file(d);
    d->last_growth = 0;
    return load(d, err_errno);
}

void data_release(struct data *d)
{
    calltree_free(d->tree);
    drop_names(d);
    free_lines(d->summary, d->nsummary);
    analysis_free(d->win);
    analysis_free(d->whole);
    alloctime_free(d->atime);
    frames_free(d->fr);
    model_free(d->m);
    memset(d, 0, sizeof *d);
}

int data_set_window(struct data *d, int on, uint64_t from_ms, uint64_t to_ms, int *err_errno)
{
    struct analysis *win = NULL;
    if (on) {
        struct analysis_query q = ANALYSIS_QUERY_INIT;
        q.has_window = 1;
        q.from_ms = from_ms;
        q.to_ms = to_ms;
        q.growth = 1;
        int rc = analysis_run(d->path, d->m, &q, &win, err_errno);
        if (rc < 0) {
            return rc;
        }
    }
    calltree_free(d->tree);
    d->tree = NULL;
    analysis_free(d->win);
    d->win = win;
    d->has_window = on;
    d->from_ms = from_ms;
    d->to_ms = to_ms;
    build_tree(d);
    return 0;
}

void data_set_cost(struct data *d, enum cost_type c, int by_self)
{
    d->cost = c;
    d->by_self = by_self;
    calltree_sort(d->tree, c, by_self);
}

const struct alloctime *data_alloc_time(struct data *d)
{
    if (!d->atime) {
        int e = 0;
        if (alloctime_run(d->path, d->m, &d->atime, &e) < 0) {
            d->atime = NULL;
        }
    }
    return d->atime;
}

const struct timeseries *data_series(struct data *d)
{
    if (!d->whole) {
        struct analysis_query q = ANALYSIS_QUERY_INIT;
        q.series_points = DATA_SERIES_POINTS;
        q.growth = 1;
        int e = 0;
        if (analysis_run(d->path, d->m, &q, &d->whole, &e) < 0) {
            d->whole = NULL;
            return NULL;
        }
    }
    return d->whole->series;
}

int data_live(const struct data *d)
{
    return !d->m->has_end;
}

int data_refresh(struct data *d, int force)
{
    if (!data_live(d)) {
        return 0;
    }
    /* A reload blocks the keys for as long as it takes: on a large
     * recording, reload less often, so that most of the time goes to keys. */
    uint64_t now = now_ms();
    if (!force && now - d->last_load < 4 * d->load_ms) {
        return 0;
    }
    d->last_load = now;
    off_t size = d->size;
    time_t mtime = d->mtime;
    stat_file(d);
    if (size == d->size && mtime == d->mtime) {
        return 0;
    }
    int e = 0;
    int rc = load(d, &e);
    return rc < 0 ? rc : 1;
}

const char *data_func_name(struct data *d, uint32_t f)
{
    if (f >= d->nfnames) {
        return "[root]";
    }
    if (!d->fnames[f]) {
        const struct calltree_func *fn = calltree_func(d->tree, f);
        /* The raw function name, escaped for this terminal; a frame with
         * no function keeps the tree's name, frames_name_dup()'s form
         * ("?? in MODULE+0xOFFSET", "[frames omitted]", already escaped
         * as \xHH), escaped again only for an ASCII terminal. */
        if (fn->frame && fn->frame->function) {
            d->fnames[f] = esc_text_for(fn->frame->function, !d->utf8);
        } else {
            d->fnames[f] = esc_text_for(fn->name, !d->utf8);
        }
    }
    return d->fnames[f];
}

/* "…" written as "..." in place, for a terminal that takes ASCII only. */
static void ascii_ellipses(char *s)
{
    char *out = s;
    for (const char *in = s; *in;) {
        if (strncmp(in, "\xe2\x80\xa6", 3) == 0) {
            memcpy(out, "...", 3);
            out += 3;
            in += 3;
        } else {
            *out++ = *in++;
        }
    }
    *out = 0;
}

const char *data_func_label(struct data *d, uint32_t f)
{
    if (f >= d->nfnames) {
        return "[root]";
    }
    if (!d->flabels[f]) {
        /* Shortened after escaping: in an ASCII terminal the escaped name
         * holds no byte outside ASCII, so every "…" is names_shorten()'s. */
        d->flabels[f] = names_shorten(data_func_name(d, f));
        if (!d->utf8) {
            ascii_ellipses(d->flabels[f]);
        }
    }
    return d->flabels[f];
}

const char *data_node_label(struct data *d, enum calltree_orient o, uint32_t id)
{
    const struct calltree_node *n = calltree_node(d->tree, o, id);
    if (!n || n->func == CALLTREE_NONE) {
        return "[total]";
    }
    return data_func_label(d, n->func);
}

const char *data_node_name(struct data *d, enum calltree_orient o, uint32_t id)
{
    const struct calltree_node *n = calltree_node(d->tree, o, id);
    if (!n || n->func == CALLTREE_NONE) {
        return "[total]";
    }
    return data_func_name(d, n->func);
}

uint64_t data_total(const struct data *d)
{
    return calltree_node(d->tree, CALLTREE_TOP_DOWN, 0)->incl.v[d->cost];
}
