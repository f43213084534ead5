// SPDX-License-Identifier: MIT
/* memtui: browses a memrec recording in the terminal. main() only:
 * options, loading with a progress bar (before the screen is taken, so
 * that errors read as memprint's), then the screen's event loop. */
#define _GNU_SOURCE
#include <curses.h>
#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crt.h"
#include "data.h"
#include "progress.h"
#include "screen.h"
#include "text.h"
#include "symbolize.h"
#include "util.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: memtui [-c COST] [BASE] FILE\n"
               "       memtui --batch [--size WxH] [--keys KEYS] [-c COST] [BASE] FILE\n"
               "\n"
               "Browses a memrec recording in the terminal: summary, call trees, functions,\n"
               "flame graph, heap over time, time windows. Press ? inside for every key.\n"
               "With two files, the Diff view (0) compares FILE with BASE (memprint --diff).\n"
               "\n"
               "  -c, --cost TYPE     cost shown first: calls, temporary, peak, leaked,\n"
               "                      allocated, mapped, time, growth, unreachable (default\n"
               "                      peak; time only for a recording made with memrec --time)\n"
               "  -b, --batch         no terminal: apply --keys, print the screen as text, exit\n"
               "  -s, --size WxH      batch screen size (default 120x40)\n"
               "  -k, --keys KEYS     batch keys, separated by spaces: a character, a name\n"
               "                      (Up Down Left Right Enter Tab BTab BSpace Esc PgUp PgDn\n"
               "                      Home End Space), or a word typed letter by letter\n"
               "  -h, --help          show this help\n"
               "  -V, --version       show the version\n");
}

/* ---- loading ---- */

static void on_cancel(int sig)
{
    static const char msg[] = "\nmemtui: loading cancelled\n";
    (void)sig;
    if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) {
        /* Leaving anyway. */
    }
    _exit(130);
}

/* Load with a progress bar on stderr (a terminal only, after 300 ms);
 * Ctrl+C cancels. */
static int load_with_progress(struct data *d, const char *path, int utf8, int *err)
{
    signal(SIGINT, on_cancel);
    struct progress *bar = progress_start("memtui", path, 300);
    int rc = data_open(d, path, utf8, err);
    progress_stop(bar);
    signal(SIGINT, SIG_DFL);
    return rc;
}

/* ---- batch mode ---- */

static const struct {
    const char *name;
    int key;
} key_names[] = {
    {"Up", KEY_UP},      {"Down", KEY_DOWN}, {"Left", KEY_LEFT}, {"Right", KEY_RIGHT}, {"Enter", '\r'},
    {"Tab", '\t'},       {"BTab", KEY_BTAB}, {"BSpace", 127},    {"Esc", 27},          {"PgUp", KEY_PPAGE},
    {"PgDn", KEY_NPAGE}, {"Home", KEY_HOME}, {"End", KEY_END},   {"Space", ' '},
};

/* The keys of --keys in order; returns how many (at most max), -1 for a bad name. */
static int parse_keys(const char *spec, int *out, int max)
{
    int n = 0;
    char *copy = xstrdup(spec);
    char *save = NULL;
    for (char *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        int named = 0;
        for (size_t i = 0; i < sizeof key_names / sizeof key_names[0]; i++) {
            if (strcmp(tok, key_names[i].name) == 0 && n < max) {
                out[n++] = key_names[i].key;
                named = 1;
            }
        }
        for (const char *p = tok; !named && *p && n < max; p++) {
            out[n++] = (unsigned char)*p;
        }
    }
    free(copy);
    return n;
}

/* Feed the keys, then the dump key, through curses' input queue (read
 * back in the order pushed: the queue is last in, first out). */
static int run_batch(struct data *d, const char *keys, int w, int h)
{
    enum { MAX_KEYS = 100 };
    int codes[MAX_KEYS];
    int n = keys ? parse_keys(keys, codes, MAX_KEYS) : 0;
    if (crt_init_batch(w, h) < 0) {
        die("cannot start curses for the batch screen");
    }
    ungetch(SCREEN_KEY_DUMP);
    for (int i = n; i > 0; i--) {
        ungetch(codes[i - 1]);
    }
    int status = screen_run(d);
    crt_dump(stdout);
    crt_done();
    return status;
}

int main(int argc, char **argv)
{
    util_progname = "memtui";
    /* Symbols resolved once are read back from the user's cache by the next run. */
    char *symbol_cache = symbolize_cache_dir_from_env();
    symbolize_set_cache_default(symbol_cache);
    free(symbol_cache);
    setlocale(LC_ALL, "");
    static const struct option longs[] = {
        {"cost", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {"batch", no_argument, NULL, 'b'},
        {"size", required_argument, NULL, 's'},
        {"keys", required_argument, NULL, 'k'},
        {NULL, 0, NULL, 0},
    };
    int batch = 0, width = 120, height = 40;
    const char *keys = NULL;
    enum cost_type cost = COST_PEAK;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "c:hVbs:k:", longs, NULL)) != -1) {
        switch (c) {
        case 'b': batch = 1; break;
        case 'k': keys = optarg; break;
        case 's': {
            char extra;
            if (sscanf(optarg, "%dx%d%c", &width, &height, &extra) != 2 || width < 20 || height < 10 || width > 1000 ||
                height > 1000) {
                die_code(2, "invalid size '%s' (expected WxH, from 20x10 to 1000x1000)", optarg);
            }
            break;
        }
        case 'c':
            if (cost_parse(optarg, &cost) < 0) {
                die_code(2,
                         "invalid cost '%s' (expected calls, temporary, peak, leaked, allocated, mapped, time, growth "
                         "or unreachable)",
                         optarg);
            }
            break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("memtui %s (format version %d)\n", MEMREC_VERSION, MEMFMT_VERSION); return 0;
        default:
            if (optopt && optopt != '?') {
                die_code(2, "unknown option '-%c' (see memtui --help)", optopt);
            }
            die_code(2, "unknown option '%s' (see memtui --help)", argv[optind - 1]);
        }
    }
    if (optind != argc - 1 && optind != argc - 2) {
        usage(stderr);
        return 2;
    }
    const char *path = argv[argc - 1];
    const char *base_path = optind == argc - 2 ? argv[optind] : NULL;
    char why[256];
    if (!batch && crt_check(why, sizeof why) < 0) {
        die("%s", why);
    }
    int utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    static struct data d, base;
    int err = 0;
    /* The base first: the progress line of the file shown comes last. */
    for (int i = base_path ? 0 : 1; i < 2; i++) {
        const char *p = i == 0 ? base_path : path;
        int rc = load_with_progress(i == 0 ? &base : &d, p, utf8, &err);
        if (rc == DATA_E_SYMBOLIZER) {
            die("cannot start the symbolizer (libdw)");
        }
        if (rc < 0) {
            if (rc == MEMFMT_E_IO) {
                die("cannot read '%s': %s", p, strerror(err));
            }
            die("cannot read '%s': %s", p, memfmt_strerror(rc));
        }
    }
    if (base_path) {
        d.base = &base;
    }
    if (!cost_recorded(&d.m->header, cost)) {
        die_code(2, "--cost time: allocator time not recorded in '%s' (record with memrec --time)", path);
    }
    data_set_cost(&d, cost, 0);
    int status;
    if (batch) {
        status = run_batch(&d, keys, width, height);
    } else {
        crt_init();
        status = screen_run(&d);
        crt_done();
    }
    data_release(&d);
    if (base_path) {
        data_release(&base);
    }
    if (crt_quit_signal) {
        return 128 + crt_quit_signal;
    }
    return status;
}
