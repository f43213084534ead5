// SPDX-License-Identifier: MIT
/* memprint's recordings (sources.h): loading with the warnings on what a
 * file holds, the query of the options, and the note and JSON members that
 * say what was counted. */
#define _GNU_SOURCE
#include "sources.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "charts.h"
#include "escape.h"
#include "modcheck.h"
#include "parse.h"
#include "progress.h"
#include "util.h"

/* Once per recording: the modules whose files are gone or were rebuilt,
 * whose frames then show as module and offset only. */
static void modules_warning(const char *path, const struct model *m)
{
    struct modcheck c = MODCHECK_INIT;
    modcheck_run(m, &c);
    if (c.n) {
        char list[1024];
        size_t n = 0;
        size_t shown = c.n < 4 ? c.n : 4;
        for (size_t i = 0; i < shown; i++) {
            char *name = esc_text(c.v[i].path);
            n = util_addf(list, sizeof list, n, "%s'%s' (%s)", i ? ", " : "", name, modcheck_why_name(c.v[i].why));
            free(name);
        }
        if (c.n > shown) {
            util_addf(list, sizeof list, n, " and %zu more", c.n - shown);
        }
        char *file = esc_text(path);
        int one = c.n == 1;
        warning("'%s': %zu module%s cannot be symbolized here, %s: %s; %s frames show as module and offset "
                "(memprint --pack '%s' where the recorded files are makes a copy that reads the same anywhere)",
                file, c.n, one ? "" : "s",
                one ? "its file is not the recorded one" : "their files are not the recorded ones", list,
                one ? "its" : "their", file);
        free(file);
    }
    modcheck_release(&c);
}

/* `read_fail_code`: the exit code when the file cannot be read (mpopts.h);
 * a file cut too early to report anything is incomplete, exit 3. */
/* An input that is not a regular file is read once, into an unlinked
 * temporary file the readers then open as often as they need (a second
 * pass, --massif, --alloc-time): opened again, a FIFO would wait for a
 * writer that has gone. Its size is what the input holds, no more. */
static void spool_if_needed(struct source *s)
{
    struct stat st;
    s->read_path = s->path;
    s->spool_fd = -1;
    if (stat(s->path, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
        return; /* the reader says what is wrong with it */
    }
    int in = open(s->path, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        return;
    }
    const char *dir = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/memprint-XXXXXX", dir && *dir ? dir : "/tmp");
    int out = mkstemp(tmpl);
    if (out < 0) {
        die("cannot make a temporary copy of '%s' (it is not a regular file) in %s: %s", s->path,
            dir && *dir ? dir : "/tmp", strerror(errno));
    }
    unlink(tmpl);
    static char buf[1 << 16];
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            die("cannot read '%s': %s", s->path, strerror(errno));
        }
        if (n == 0) {
            break;
        }
        for (ssize_t done = 0; done < n;) {
            ssize_t k = write(out, buf + done, (size_t)(n - done));
            if (k < 0 && errno == EINTR) {
                continue;
            }
            if (k < 0) {
                die("cannot make a temporary copy of '%s' (it is not a regular file): %s", s->path, strerror(errno));
            }
            done += k;
        }
    }
    close(in);
    s->spool_fd = out;
    snprintf(s->spool_name, sizeof s->spool_name, "/proc/self/fd/%d", out);
    s->read_path = s->spool_name;
}

static void load_model(struct source *s, const struct model_hook *hook, int read_fail_code)
{
    int err;
    int rc = model_load_hooked(s->read_path, hook, &s->m, &err);
    if (rc < 0) {
        if (rc == MEMFMT_E_IO) {
            die_code(read_fail_code, "cannot read '%s': %s", s->path, strerror(err));
        }
        /* Cut before its first block is whole: a recording all the same,
         * only incomplete (memprint(1): exit 3), with nothing to report. */
        die_code(rc == MEMFMT_E_TRUNCATED ? 3 : read_fail_code, "cannot read '%s': %s", s->path, memfmt_strerror(rc));
    }
    const struct model *m = s->m;
    if (m->stop_rc == MEMFMT_E_TOOBIG) {
        warning("'%s' has a record larger than %u KiB (the format's limit) at byte %llu of its data: reporting "
                "what comes before",
                s->path, MEMFMT_MAX_RECORD >> 10, (unsigned long long)m->stop_offset);
    } else if (m->stop_rc < 0) {
        warning("'%s' is %s at byte %llu of its data: reporting what comes before", s->path,
                m->stop_rc == MEMFMT_E_IO ? strerror(err) : memfmt_strerror(m->stop_rc),
                (unsigned long long)m->stop_offset);
    } else if (!m->has_end) {
        warning("'%s' ends before memrec finished it (memrec was killed?): reporting what it holds", s->path);
    }
    if (m->has_end && m->end.how == MEMFMT_END_SIGNALED) {
        warning("the recorded process did not end normally: killed by signal %d (%s)", m->end.value,
                strsignal(m->end.value));
    } else if (m->has_end && m->end.how == MEMFMT_END_UNKNOWN) {
        warning("the recorded process did not end normally (killed or crashed; memrec was not its parent)");
    }
    if (m->impossible_sizes) {
        warning("'%s': %llu allocation%s larger than 128 TiB (impossible: corrupt data?) not counted", s->path,
                (unsigned long long)m->impossible_sizes, m->impossible_sizes == 1 ? "" : "s");
    }
    if (m->beyond_total) {
        warning("'%s': %llu allocation%s or mapping%s not counted: the totals would pass 2^63 bytes (corrupt data?)",
                s->path, (unsigned long long)m->beyond_total, m->beyond_total == 1 ? "" : "s",
                m->beyond_total == 1 ? "" : "s");
    }
    modules_warning(s->path, m);
    if (m->bad_records) {
        warning("'%s': %llu record%s could not be applied (corrupt data?)", s->path, (unsigned long long)m->bad_records,
                m->bad_records == 1 ? "" : "s");
    }
}

/* Seconds (or "peak": the heap peak's time, which needs the model `m`)
 * into milliseconds. */
static uint64_t parse_time(const char *s, const struct model *m, const char *opt)
{
    if (strcmp(s, "peak") == 0) {
        return m ? accounting_totals(m->acct)->peak_ms : 0;
    }
    uint64_t ms;
    if (parse_seconds_ms(s, 1e12, &ms) < 0) {
        die_code(2, "invalid time '%s' for %s (expected seconds, e.g. 1.5, or 'peak')", s, opt);
    }
    return ms;
}

struct frames *source_frames(struct source *s)
{
    if (!s->fr) {
        s->fr = frames_new(s->m);
        if (!s->fr) {
            die("cannot start the symbolizer (libdw)");
        }
    }
    return s->fr;
}

/* The query the options ask for, run on `s`; the note and JSON members
 * that say what was counted. */
static void make_query(struct source *s, const struct opts *o, const struct model *m)
{
    struct analysis_query *q = &s->q;
    *q = (struct analysis_query)ANALYSIS_QUERY_INIT;
    if (o->from || o->to) {
        q->has_window = 1;
        q->from_ms = o->from ? parse_time(o->from, m, "--from") : 0;
        q->to_ms = o->to ? parse_time(o->to, m, "--to") : UINT64_MAX;
        if (o->to && strcmp(o->to, "peak") == 0) {
            q->to_ms++; /* the peak's own moment is in the window */
        }
        if (q->from_ms >= q->to_ms) {
            die_code(2, "empty time window: --from must come before --to");
        }
    }
    if (o->at) {
        q->has_at = 1;
        /* Reading stops at the first clock tick at or after T: with
         * 'peak', the events stamped with the peak's tick are read. */
        q->at_ms = parse_time(o->at, m, "--at") + (strcmp(o->at, "peak") == 0);
    }
    q->thread = o->thread;
    q->growth = 1;
    q->sizes = o->sizes ? 1 + o->by_stack : 0;
    if (o->timeline) {
        q->series_points = o->json ? o->points : CHARTS_COLUMNS;
    }
}

static int uses_peak(const char *t)
{
    return t && strcmp(t, "peak") == 0;
}

/* Loads `s` and runs the query the options ask for: during the load when
 * it can (analysis.h, streaming: one read of the file), else in a second
 * pass. Then the note and JSON members that say what was counted. */
void source_open(struct source *s, const struct opts *o)
{
    struct analysis_query *q = &s->q;
    int need_model = uses_peak(o->from) || uses_peak(o->to) || uses_peak(o->at) || o->function || o->exclude;
    struct analysis_stream *st = NULL;
    struct model_hook hook;
    if (!need_model) {
        make_query(s, o, NULL);
        int wanted = q->has_window || q->has_at || q->thread || q->sizes || q->series_points || q->growth;
        st = wanted ? analysis_stream_new(q, &hook) : NULL;
    }
    spool_if_needed(s);
    /* A bar after a second on a terminal, not when the output goes to a
     * file or a pipe (issue: a script's stderr stays quiet); stopped
     * before anything is written. */
    struct progress *bar = isatty(STDOUT_FILENO) ? progress_start("memprint", s->read_path, 1000) : NULL;
    load_model(s, st ? &hook : NULL, o->read_fail_code);
    const struct model *m = s->m;
    make_query(s, o, m);
    if (o->function || o->exclude) {
        char err[256];
        if (analysis_keep_functions(source_frames(s), o->function, o->exclude, &s->keep, err, sizeof err) < 0) {
            die_code(2, "invalid regular expression for --%s: %s", o->function ? "function" : "exclude", err);
        }
        q->keep = s->keep;
    }
    int restricted = q->has_window || q->has_at || q->thread || q->keep;
    if (st) {
        s->a = analysis_stream_finish(st, m);
        if (q->series_points && !s->a->series) {
            /* Too many clock ticks to log (analysis.h): a second pass. */
            analysis_free(s->a);
            s->a = NULL;
            st = NULL;
        }
    }
    if (!st && (restricted || q->sizes || q->series_points || q->growth)) {
        int err;
        int rc = analysis_run(s->read_path, m, q, &s->a, &err);
        if (rc < 0) {
            die_code(o->read_fail_code, "cannot read '%s' again: %s", s->path,
                     rc == MEMFMT_E_IO ? strerror(err) : memfmt_strerror(rc));
        }
    }
    progress_stop(bar);
    /* Unrestricted, the model's figures are the query's (a streamed pass
     * then accounts no events: analysis.h). */
    s->acct = restricted ? s->a->acct : m->acct;
    s->view = *m;
    s->view.acct = (struct accounting *)s->acct;
    s->view.growth = s->a ? s->a->growth : NULL;
    if (restricted) {
        s->view.has_counts = 0; /* the exact per-thread counts are the whole run's */
    }
    if (q->has_at) {
        /* The RSS section's heap layout is the moment's (rssgap.h). */
        s->view.rssgap.has_at = 1;
        s->view.rssgap.at_ms = q->at_ms;
        s->view.rssgap.at_layout = s->a->layout;
        s->view.rssgap.at_arenas = s->a->arenas;
    }
    size_t n = 0, j = 0;
    if (q->has_window) {
        n = util_addf(s->note, sizeof s->note, n, "window: allocations made from %.3f s", (double)q->from_ms / 1000.0);
        if (q->to_ms != UINT64_MAX) {
            n = util_addf(s->note, sizeof s->note, n, " to %.3f s", (double)q->to_ms / 1000.0);
        }
        n = util_addf(s->note, sizeof s->note, n,
                      ", followed to the end; %llu %s (%llu bytes) allocated before it and freed in it are not "
                      "counted",
                      (unsigned long long)s->a->earlier_freed_blocks,
                      util_plural(s->a->earlier_freed_blocks, "block", "blocks"),
                      (unsigned long long)s->a->earlier_freed_bytes);
        j = util_addf(s->json, sizeof s->json, j, ", \"window_from_ms\": %llu, \"window_to_ms\": %lld",
                      (unsigned long long)q->from_ms, q->to_ms == UINT64_MAX ? -1LL : (long long)q->to_ms);
        j = util_addf(s->json, sizeof s->json, j, ", \"earlier_freed_blocks\": %llu, \"earlier_freed_bytes\": %llu",
                      (unsigned long long)s->a->earlier_freed_blocks, (unsigned long long)s->a->earlier_freed_bytes);
    }
    if (q->has_at) {
        n = util_addf(s->note, sizeof s->note, n, "%sat %.3f s: the run up to that moment (leaked: live then)",
                      n ? "; " : "", (double)q->at_ms / 1000.0);
        j = util_addf(s->json, sizeof s->json, j, ", \"at_ms\": %llu", (unsigned long long)q->at_ms);
    }
    if (q->thread) {
        n = util_addf(s->note, sizeof s->note, n, "%sthread %u only", n ? "; " : "", q->thread);
        j = util_addf(s->json, sizeof s->json, j, ", \"thread\": %u", q->thread);
    }
    if (q->keep) {
        /* The expressions are the user's own, from the command line. */
        n = util_addf(s->note, sizeof s->note, n, "%sstacks filtered by function", n ? "; " : "");
        j = util_addf(s->json, sizeof s->json, j, ", \"function_filter\": true");
    }
}

void source_release(struct source *s)
{
    if (s->read_path == s->spool_name) {
        close(s->spool_fd);
        s->read_path = NULL;
    }
    analysis_free(s->a);
    free(s->keep);
    frames_free(s->fr);
    model_free(s->m);
}
