// SPDX-License-Identifier: MIT
/* The recording memtui shows: the model, its frames, the call tree of the
 * whole run or of a time window, the summary lines and the over-time
 * series, all from the analyzer library. Reloads a recording that is
 * still being written; never writes to it. */
#define _GNU_SOURCE
#include "data.h"

#include <pthread.h>
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
#include "wrappers.h"

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

/* The report's and the groups' sorts keep their key in a static
 * (report.c, groups.c): the reload thread and this one take turns. */
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

void data_report_lock(int on)
{
    if (on) {
        pthread_mutex_lock(&report_lock);
    } else {
        pthread_mutex_unlock(&report_lock);
    }
}

/* What one load makes, owned by whoever holds it: the reload thread while
 * it builds, then the data once installed. */
struct built {
    struct model *m;
    struct frames *fr;
    struct analysis *win; /* NULL without a window, a filter or a folding */
    struct analysis *whole; /* the series; NULL when that pass failed */
    struct calltree *tree;
    char **summary;
    uint32_t nsummary;
    struct sites *sites;
    uint8_t *keep; /* the filter's keep mask (NULL: none) */
    uint32_t *remap; /* the folding's node map (NULL: none) */
    uint32_t folded;
    uint64_t load_ms;
};

/* What a load depends on: copied for the reload thread, which reads
 * nothing of the data itself. */
struct load_params {
    const char *path;
    int utf8, has_window, by_self;
    uint64_t from_ms, to_ms;
    enum cost_type cost;
    struct filter filter; /* plain values: copied, never shared */
    struct fold fold;
};

/* A reload running in the background (data_refresh()). */
struct data_reload {
    pthread_t th;
    struct load_params p;
    struct built b;
    int rc, err;
    int done; /* atomic: the thread has finished (b, rc, err are set) */
};

static void built_free(struct built *b)
{
    /* The tree points into the frames: release it before them. */
    calltree_free(b->tree);
    free_lines(b->summary, b->nsummary);
    sites_free(b->sites);
    analysis_free(b->win);
    analysis_free(b->whole);
    free(b->keep);
    free(b->remap);
    frames_free(b->fr);
    model_free(b->m);
    memset(b, 0, sizeof *b);
}

/* "'FILE' is corrupt data at byte N of its data: showing what comes
 * before", memprint's warning, or NULL when the data read to their end
 * (a live recording cut in mid-record is only still being written). */
static char *stop_warning(const struct model *m, const char *path)
{
    if (m->stop_rc >= 0 || (m->stop_rc == MEMFMT_E_TRUNCATED && !m->has_end)) {
        return NULL;
    }
    char *s = NULL;
    if (asprintf(&s, "warning: '%s' is %s at byte %llu of its data: showing what comes before", path,
                 memfmt_strerror(m->stop_rc), (unsigned long long)m->stop_offset) < 0) {
        die("out of memory");
    }
    return s;
}

/* The summary's lines exactly as memprint prints them, for the costs in
 * use, after memprint's warning on a file that stops early; and the top
 * entries of memprint's report. `growth`: the fit of the pass that made
 * the figures (NULL: none); `fr` names what keeps RSS up. */
static void make_summary(const struct model *m, struct frames *fr, const struct accounting *acct, int windowed,
                         const struct growth *growth, const char *path, int utf8, char ***out, uint32_t *nout,
                         struct sites **sites)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        die("out of memory");
    }
    char *warn = stop_warning(m, path);
    if (warn) {
        fprintf(f, "%s\n", warn);
        free(warn);
    }
    pthread_mutex_lock(&report_lock);
    report_print_summary(m, acct, f);
    report_print_growth(m, growth, f);
    *sites = sites_new(m, acct, windowed, growth);
    pthread_mutex_unlock(&report_lock);
    if (!windowed) {
        /* The whole run's: a window has no RSS split (rssgap.h). One
         * line (two with the advice), so that the sites stay on screen. */
        rssgap_print_brief(&m->rssgap, f);
        const struct heaplayout *l;
        enum heaplayout_why why;
        if (rssgap_layout(&m->rssgap, m->sample_rate != 0, &l, &why)) {
            pinned_print_brief(l, rssgap_arenas(&m->rssgap), why, (m->header.flags & MEMFMT_HF_ATTACHED) != 0, fr, f);
        }
    }
    if (fclose(f) != 0) {
        die("out of memory");
    }
    char **lines = NULL;
    uint32_t n = 0;
    size_t cap = 0;
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        xgrow((void **)&lines, &cap, n + 1, sizeof *lines);
        lines[n++] = esc_text_for(line, !utf8);
    }
    free(buf);
    *out = lines;
    *nout = n;
}

/* The tree and the summary of the model's figures, or of the window's and
 * the filter's; the growth from the pass that made them, or from the
 * series pass. */
static void make_tree(struct built *b, const struct load_params *p)
{
    const struct accounting *acct = b->win ? b->win->acct : b->m->acct;
    const struct analysis *g = b->win ? b->win : b->whole;
    b->tree = calltree_build_growth(b->fr, acct, g ? g->growth : NULL);
    calltree_sort(b->tree, p->cost, p->by_self);
    make_summary(b->m, b->fr, acct, b->win != NULL, g ? g->growth : NULL, p->path, p->utf8, &b->summary, &b->nsummary,
                 &b->sites);
}

/* Put `b`'s figures in place of the data's (this thread: the views read
 * them); `b` is emptied. */
static void install(struct data *d, struct built *b)
{
    calltree_free(d->tree);
    d->tree = NULL;
    drop_names(d);
    free_lines(d->summary, d->nsummary);
    sites_free(d->sites);
    analysis_free(d->win);
    analysis_free(d->whole);
    alloctime_free(d->atime);
    d->atime = NULL;
    free(d->keep);
    free(d->remap);
    frames_free(d->fr);
    model_free(d->m);
    d->m = b->m;
    d->fr = b->fr;
    d->win = b->win;
    d->whole = b->whole;
    d->keep = b->keep;
    d->remap = b->remap;
    d->folded = b->folded;
    d->tree = b->tree;
    d->summary = b->summary;
    d->nsummary = b->nsummary;
    d->sites = b->sites;
    d->acct = d->win ? d->win->acct : d->m->acct;
    d->load_ms = b->load_ms;
    d->nfnames = calltree_nfuncs(d->tree);
    d->fnames = xcalloc(d->nfnames ? d->nfnames : 1, sizeof *d->fnames);
    d->flabels = xcalloc(d->nfnames ? d->nfnames : 1, sizeof *d->flabels);
    d->generation++;
    memset(b, 0, sizeof *b);
}

/* Rebuild the tree and the summary of the loaded model (a new window,
 * filter or folding). */
static void build_tree(struct data *d)
{
    calltree_free(d->tree);
    d->tree = NULL;
    drop_names(d);
    free_lines(d->summary, d->nsummary);
    sites_free(d->sites);
    d->acct = d->win ? d->win->acct : d->m->acct;
    /* Growth is fitted by the pass that made the window, or by the whole
     * run's series pass (data_series()). */
    const struct analysis *g = d->win ? d->win : d->whole;
    d->tree = calltree_build_growth(d->fr, d->acct, g ? g->growth : NULL);
    calltree_sort(d->tree, d->cost, d->by_self);
    make_summary(d->m, d->fr, d->acct, d->win != NULL, g ? g->growth : NULL, d->path, d->utf8, &d->summary,
                 &d->nsummary, &d->sites);
    d->nfnames = calltree_nfuncs(d->tree);
    d->fnames = xcalloc(d->nfnames ? d->nfnames : 1, sizeof *d->fnames);
    d->flabels = xcalloc(d->nfnames ? d->nfnames : 1, sizeof *d->flabels);
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

/* The window's and the filter's analysis for model `m` (frames `fr`):
 * *win NULL when neither is set; *keep the filter's mask, which the query
 * points to, *remap the folding's map, *folded the traces it moves. */
static int restricted(const struct load_params *p, const struct model *m, struct frames *fr, struct analysis **win,
                      uint8_t **keep, uint32_t **remap, uint32_t *folded, int *err_errno, char *err, size_t cap)
{
    *win = NULL;
    *keep = NULL;
    *remap = NULL;
    if (!p->has_window && !p->filter.on && !p->fold.on) {
        return 0;
    }
    int rc = filter_mask(&p->filter, fr, keep, err, cap);
    if (rc < 0) {
        return rc;
    }
    if (p->fold.on) {
        char re[1024];
        rc = wrappers_remap(fr, fold_regex(&p->fold, re, sizeof re), remap, folded, err, cap);
        if (rc < 0) {
            free(*keep);
            *keep = NULL;
            return rc;
        }
    }
    struct analysis_query q = ANALYSIS_QUERY_INIT;
    q.has_window = p->has_window;
    q.from_ms = p->from_ms;
    q.to_ms = p->to_ms;
    q.keep = *keep;
    q.thread = p->filter.thread;
    q.remap = *remap;
    q.growth = 1;
    rc = analysis_run(p->path, m, &q, win, err_errno);
    if (rc < 0) {
        free(*keep);
        free(*remap);
        *keep = NULL;
        *remap = NULL;
        *win = NULL;
    }
    return rc;
}

/* The chart's series (and the growth fit) of the stacks the filter keeps,
 * never restricted to the window (it is chosen on this chart); NULL on
 * error. */
static struct analysis_query series_query(const uint8_t *keep, uint32_t thread)
{
    struct analysis_query q = ANALYSIS_QUERY_INIT;
    q.series_points = DATA_SERIES_POINTS;
    q.keep = keep;
    q.thread = thread;
    q.growth = 1;
    return q;
}

static struct analysis *series_pass(const char *path, const struct model *m, const uint8_t *keep, uint32_t thread)
{
    struct analysis_query q = series_query(keep, thread);
    struct analysis *a = NULL;
    int e = 0;
    return analysis_run(path, m, &q, &a, &e) < 0 ? NULL : a;
}

/* Everything of a load, from `p` alone: safe in a thread of its own, as
 * it shares no object with the data's (the analyzer's objects keep no
 * state between them but report.c's sort key, under report_lock). */
static int build(const struct load_params *p, struct built *b, int *err_errno)
{
    uint64_t start = now_ms();
    memset(b, 0, sizeof *b);
    /* Without a filter the chart's series (and the growth fit) come from
     * the model's own read of the file: one pass, not two. A filter needs
     * the loaded model's frames first (its keep mask), then a pass. */
    struct analysis_stream *st = NULL;
    struct model_hook hook;
    if ((!p->filter.on || !p->filter.re[0]) && !p->filter.thread) {
        struct analysis_query q = series_query(NULL, 0);
        st = analysis_stream_new(&q, &hook);
    }
    int rc = model_load_hooked(p->path, st ? &hook : NULL, &b->m, err_errno);
    if (rc < 0) {
        analysis_stream_free(st);
        b->m = NULL;
        return rc;
    }
    if (st) {
        b->whole = analysis_stream_finish(st, b->m);
        if (!b->whole->series) {
            /* Too many clock ticks to log (analysis.h): a pass below. */
            analysis_free(b->whole);
            b->whole = NULL;
        }
    }
    b->fr = frames_new(b->m);
    if (!b->fr) {
        built_free(b);
        return DATA_E_SYMBOLIZER;
    }
    char msg[256];
    rc = restricted(p, b->m, b->fr, &b->win, &b->keep, &b->remap, &b->folded, err_errno, msg, sizeof msg);
    if (rc < 0) {
        built_free(b);
        return rc;
    }
    /* The chart's series now, while loading, so that no key waits for a
     * pass over the file; the same pass fits the growth the tree needs. */
    if (!b->whole) {
        b->whole = series_pass(p->path, b->m, b->keep, p->filter.thread);
    }
    make_tree(b, p);
    b->load_ms = now_ms() - start;
    return 0;
}

static struct load_params params_of(const struct data *d)
{
    struct load_params p = {d->path,  d->utf8, d->has_window, d->by_self, d->from_ms,
                            d->to_ms, d->cost, d->filter,     d->fold};
    return p;
}

static int load(struct data *d, int *err_errno)
{
    struct load_params p = params_of(d);
    struct built b;
    int rc = build(&p, &b, err_errno);
    if (rc < 0) {
        return rc;
    }
    install(d, &b);
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
    d->loaded_size = d->size;
    d->loaded_mtime = d->mtime;
    return load(d, err_errno);
}

/* Wait for a reload in flight and drop what it made. */
static void reload_cancel(struct data *d)
{
    if (d->reload) {
        pthread_join(d->reload->th, NULL);
        built_free(&d->reload->b);
        free(d->reload);
        d->reload = NULL;
    }
}

void data_release(struct data *d)
{
    if (d->reload && !__atomic_load_n(&d->reload->done, __ATOMIC_ACQUIRE)) {
        /* Quitting in the middle of a reload: the process is ending, and
         * waiting for the thread would hold the quit for as long as a
         * load takes. It owns all it made; the exit takes it all. */
        pthread_detach(d->reload->th);
        d->reload = NULL;
    }
    reload_cancel(d);
    calltree_free(d->tree);
    drop_names(d);
    free_lines(d->summary, d->nsummary);
    sites_free(d->sites);
    analysis_free(d->win);
    analysis_free(d->whole);
    alloctime_free(d->atime);
    free(d->keep);
    free(d->remap);
    frames_free(d->fr);
    model_free(d->m);
    memset(d, 0, sizeof *d);
}

/* Make the figures of the window and the filter now set; on an error the
 * previous ones stay. */
static int restrict_again(struct data *d, int *err_errno, char *err, size_t cap)
{
    struct analysis *win;
    uint8_t *keep;
    uint32_t *remap;
    struct load_params p = params_of(d);
    int rc = restricted(&p, d->m, d->fr, &win, &keep, &remap, &d->folded, err_errno, err, cap);
    if (rc < 0) {
        return rc;
    }
    calltree_free(d->tree);
    d->tree = NULL;
    analysis_free(d->win);
    d->win = win;
    free(d->keep);
    d->keep = keep;
    free(d->remap);
    d->remap = remap;
    build_tree(d);
    return 0;
}

int data_set_window(struct data *d, int on, uint64_t from_ms, uint64_t to_ms, int *err_errno)
{
    int was = d->has_window;
    uint64_t from = d->from_ms, to = d->to_ms;
    d->has_window = on;
    d->from_ms = from_ms;
    d->to_ms = to_ms;
    char msg[256];
    int rc = restrict_again(d, err_errno, msg, sizeof msg);
    if (rc < 0) {
        d->has_window = was;
        d->from_ms = from;
        d->to_ms = to;
    }
    return rc;
}

int data_set_filter(struct data *d, const struct filter *f, int *err_errno, char *err, size_t cap)
{
    struct filter old = d->filter;
    d->filter = *f;
    int rc = restrict_again(d, err_errno, err, cap);
    if (rc < 0) {
        d->filter = old;
        return rc;
    }
    /* The chart follows the filter: its series again, and without a
     * window the tree takes its growth from that pass. */
    analysis_free(d->whole);
    d->whole = NULL;
    data_series(d);
    if (!d->win) {
        build_tree(d);
    }
    return rc;
}

int data_cost_offered(const struct data *d, enum cost_type c)
{
    if (!cost_recorded(&d->m->header, c)) {
        return 0;
    }
    /* Of the whole run, so that a window does not take the cost away. */
    if (c == COST_UNREACHABLE) {
        return report_has_reach(d->m);
    }
    return c != COST_MAPPED || cost_total(d->m->acct, COST_MAPPED) > 0;
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
        d->whole = series_pass(d->path, d->m, d->keep, d->filter.thread);
    }
    return d->whole ? d->whole->series : NULL;
}

int data_live(const struct data *d)
{
    return !d->m->has_end;
}

static void *reload_thread(void *arg)
{
    struct data_reload *r = arg;
    r->rc = build(&r->p, &r->b, &r->err);
    __atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* A finished reload: its figures replace the data's, unless the window,
 * the filter or the folding changed meanwhile (they are then of the old
 * ones: dropped, and the next look loads again). Returns as
 * data_refresh(). */
static int reload_finish(struct data *d)
{
    struct data_reload *r = d->reload;
    pthread_join(r->th, NULL);
    d->reload = NULL;
    int rc = r->rc < 0 ? r->rc : 1;
    int same = r->p.has_window == d->has_window && r->p.from_ms == d->from_ms && r->p.to_ms == d->to_ms &&
               memcmp(&r->p.filter, &d->filter, sizeof d->filter) == 0 &&
               memcmp(&r->p.fold, &d->fold, sizeof d->fold) == 0;
    if (r->rc >= 0 && !same) {
        built_free(&r->b);
        d->loaded_size = -1; /* not loaded yet: the next look loads */
        rc = 0;
    } else if (r->rc >= 0) {
        install(d, &r->b);
        if (r->p.cost != d->cost || r->p.by_self != d->by_self) {
            calltree_sort(d->tree, d->cost, d->by_self);
        }
    }
    free(r);
    return rc;
}

int data_refresh(struct data *d, int force)
{
    if (!data_live(d)) {
        return 0;
    }
    /* Every look sees whether the file grows (the title's LIVE), however
     * long a load takes, a reload running or not. */
    stat_file(d);
    if (d->reload) {
        return __atomic_load_n(&d->reload->done, __ATOMIC_ACQUIRE) ? reload_finish(d) : 0;
    }
    if (d->size == d->loaded_size && d->mtime == d->loaded_mtime) {
        return 0;
    }
    /* A reload takes a core for as long as it runs: on a large recording,
     * reload less often, so that the recorder keeps most of the machine. */
    uint64_t now = now_ms();
    if (!force && now - d->last_load < 4 * d->load_ms) {
        return 0;
    }
    d->last_load = now;
    d->loaded_size = d->size;
    d->loaded_mtime = d->mtime;
    struct data_reload *r = xcalloc(1, sizeof *r);
    r->p = params_of(d);
    if (pthread_create(&r->th, NULL, reload_thread, r) != 0) {
        /* No thread: load here, the keys waiting. */
        reload_thread(r);
        d->reload = r;
        return reload_finish(d);
    }
    d->reload = r;
    return 0;
}

int data_reloading(const struct data *d)
{
    return d->reload != NULL;
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

int data_set_fold(struct data *d, const struct fold *f, int *err_errno, char *err, size_t cap)
{
    struct fold old = d->fold;
    d->fold = *f;
    int rc = restrict_again(d, err_errno, err, cap);
    if (rc < 0) {
        d->fold = old;
    }
    return rc;
}
