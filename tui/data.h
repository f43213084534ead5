// SPDX-License-Identifier: MIT
/* data.c's contract: the recording, its trees and the current window.
 * Every figure memtui shows comes from the analyzer library (analysis.h,
 * calltree.h, report.h); this layer only holds and reloads them, and knows
 * nothing of curses or of the views. */
#ifndef TUI_DATA_H
#define TUI_DATA_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "alloctime.h"
#include "analysis.h"
#include "calltree.h"
#include "costs.h"
#include "filter.h"
#include "model.h"
#include "sites.h"

/* Points of the over-time series: the chart takes the largest value of
 * the points under each column, so every spike shows at any width. */
#define DATA_SERIES_POINTS 2000

struct data {
    const char *path;
    struct model *m;
    struct frames *fr;
    struct calltree *tree; /* of `acct` */
    const struct accounting *acct; /* m->acct, or win->acct while a window is set */
    struct analysis *win; /* the window's and the filter's analysis; NULL without either */
    struct filter filter; /* F (filter.h); filter.on = 0: none */
    uint8_t *keep; /* the filter's keep mask for m (NULL: none) */
    struct fold fold; /* W (filter.h); fold.on = 0: none */
    uint32_t *remap; /* the folding's node map for m (NULL: none) */
    uint32_t folded; /* traces it moves */
    struct analysis *whole; /* the whole run's series and growth fit (while loading) */
    struct alloctime *atime; /* allocator time tables (lazily, for the allocator time view); whole run */
    int has_window;
    uint64_t from_ms, to_ms;
    enum cost_type cost;
    int by_self; /* functions sorted by self cost */
    int all_costs; /* = : the trees show every cost's column (columns.h) */
    struct data *base; /* memtui BASE NEW: the base recording (the Diff view); NULL for one file */
    char **summary; /* report_print_summary()'s lines, escaped */
    uint32_t nsummary;
    struct sites *sites; /* the summary's top entries, memprint's report's (sites.h); NULL on error */
    char **fnames; /* display name per function of `tree`, escaped; lazily */
    char **flabels; /* the same shortened (names_shorten()), for the rows; lazily */
    uint32_t nfnames;
    int utf8; /* the terminal takes UTF-8: names keep their non-ASCII characters */
    /* Live recording: the file has no END record yet. */
    off_t size, loaded_size; /* the file's, at the last look; when the figures were loaded */
    time_t mtime, loaded_mtime, last_growth;
    uint64_t generation; /* bumped whenever `tree` is replaced */
    uint64_t load_ms, last_load; /* how long the latest load took; when a reload last started */
    struct data_reload *reload; /* a reload running in the background; NULL for none */
};

/* data_open()'s status when libdw's symbolizer cannot start: below every
 * memfmt status (MEMFMT_E_*), in the analyzer's scheme of negative codes. */
#define DATA_E_SYMBOLIZER (-1000)

/** Load `path` and build the whole run's tree. Returns 0, or a negative
 * memfmt status (with *err_errno for MEMFMT_E_IO), or DATA_E_SYMBOLIZER
 * when the symbolizer cannot start. */
int data_open(struct data *d, const char *path, int utf8, int *err_errno);
/** Release everything; to be called once, at exit: a reload still
 * running is left to the process's end (not waited for). */
void data_release(struct data *d);
/** Restrict every figure to allocations made in [from, to) ms (on = 0:
 * the whole run again). Returns 0 or a memfmt status. */
int data_set_window(struct data *d, int on, uint64_t from_ms, uint64_t to_ms, int *err_errno);
/** Restrict every figure to what filter `f` keeps (f->on = 0: no filter),
 * with the window as it is. Returns 0 or a memfmt status (the previous
 * figures stay; MEMFMT_E_INVALID: a bad expression, message in err). */
int data_set_filter(struct data *d, const struct filter *f, int *err_errno, char *err, size_t cap);
/** Fold allocator wrappers as `f` says (f->on = 0: none), with the window
 * and the filter as they are. Returns as data_set_filter(). */
int data_set_fold(struct data *d, const struct fold *f, int *err_errno, char *err, size_t cap);
/** 1 when cost `c` is offered for this recording: recorded (allocator
 * time only with memrec --time), and mapped only when the run mapped
 * something. */
int data_cost_offered(const struct data *d, enum cost_type c);
/** Cost type (and, for the functions, self or inclusive order): re-sorts. */
void data_set_cost(struct data *d, enum cost_type c, int by_self);
/** The whole run's allocator time tables (alloctime.h), made at the first
 * call after a load (one pass over the file); NULL on error. */
const struct alloctime *data_alloc_time(struct data *d);
/** The whole run's series (computed while loading, with its growth fit)
 * of the stacks the filter keeps (every stack without one; never
 * restricted to the window); NULL on error. */
const struct timeseries *data_series(struct data *d);
/** Live refresh, called often from the thread that draws: when the file
 * changed since the last load, start loading it again in a thread of its
 * own (keeping the window and the cost; without `force`, not sooner than
 * four load times after the previous start), while the old figures stay
 * in use; a later call that finds it finished puts its figures in place
 * (`generation` changes). Returns 1 when new figures were put in place, 0
 * otherwise, negative when the reload failed (the old data stay). */
int data_refresh(struct data *d, int force);
/** 1 while a reload runs in the background. */
int data_reloading(const struct data *d);
/** 1 while the recording has no END record (memrec still writing). */
int data_live(const struct data *d);
/** Display name of node `id` of orientation `o` (escaped; owned by d). */
const char *data_node_name(struct data *d, enum calltree_orient o, uint32_t id);
/** Display name of function `f` (escaped; owned by d): what the search
 * matches and the detail overlay shows. */
const char *data_func_name(struct data *d, uint32_t f);
/** data_func_name() with C++ template and parameter lists shortened as
 * memprint's text shortens them (names.h: "<…>", "(…)"; "..." in an ASCII
 * terminal): what the rows show. Owned by d. */
const char *data_func_label(struct data *d, uint32_t f);
/** data_func_label() of node `id`'s function ("[total]" for the root). */
const char *data_node_label(struct data *d, enum calltree_orient o, uint32_t id);
/** Take (on = 1) or give back (0) the lock under which report_new() and
 * the report's printing run: report.c keeps its sort key in a static,
 * and a live reload's thread builds reports too. */
void data_report_lock(int on);
/** The total of the current cost: the root's inclusive cost. */
uint64_t data_total(const struct data *d);

#endif
