// SPDX-License-Identifier: MIT
/* memtui: browses a memrec recording in the terminal. main() only:
 * options, loading with a progress bar (before the screen is taken, so
 * that errors read as memprint's), then the screen's event loop. */
#define _GNU_SOURCE
#include <curses.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "crt.h"
#include "data.h"
#include "screen.h"
#include "text.h"
#include "util.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: memtui [-c COST] FILE\n"
               "       memtui --batch [--size WxH] [--keys KEYS] [-c COST] FILE\n"
               "\n"
               "Browses a memrec recording in the terminal: summary, call trees, functions,\n"
               "flame graph, heap over time, time windows. Press ? inside for every key.\n"
               "\n"
               "  -c, --cost TYPE     cost shown first: calls, temporary, peak, leaked,\n"
               "                      allocated, mapped, time (default peak; time only for\n"
               "                      a recording made with memrec --time)\n"
               "  -b, --batch         no terminal: apply --keys, print the screen as text, exit\n"
               "  -s, --size WxH      batch screen size (default 120x40)\n"
               "  -k, --keys KEYS     batch keys, separated by spaces: a character, a name\n"
               "                      (Up Down Left Right Enter Tab BTab BSpace Esc PgUp PgDn\n"
               "                      Home End Space), or a word typed letter by letter\n"
               "  -h, --help          show this help\n"
               "  -V, --version       show the version\n");
}

/* ---- loading ---- */

struct loader {
    struct data *d;
    const char *path;
    int utf8;
    int rc, err;
    volatile int done;
};

static void *load_thread(void *arg)
{
    struct loader *l = arg;
    l->rc = data_open(l->d, l->path, l->utf8, &l->err);
    __atomic_store_n(&l->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Where the loader is in the file: the offset of this process's
 * descriptor open on it (/proc/self/fdinfo), so that the analyzer needs
 * no progress callback. -1 when no descriptor is open on it. */
static long long read_position(const char *real)
{
    DIR *dir = opendir("/proc/self/fd");
    if (!dir) {
        return -1;
    }
    long long pos = -1;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL && pos < 0) {
        char link[300], target[PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0) {
            continue;
        }
        target[n] = 0;
        if (strcmp(target, real) != 0) {
            continue;
        }
        snprintf(link, sizeof link, "/proc/self/fdinfo/%s", e->d_name);
        FILE *f = fopen(link, "r");
        if (f) {
            if (fscanf(f, "pos: %lld", &pos) != 1) {
                pos = -1;
            }
            fclose(f);
        }
    }
    closedir(dir);
    return pos;
}

static void on_cancel(int sig)
{
    static const char msg[] = "\nmemtui: loading cancelled\n";
    (void)sig;
    if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) {
        /* Leaving anyway. */
    }
    _exit(130);
}

/* Passes over the file at opening: the model (data_open()'s model_load()),
 * then the over-time series (analysis_run()). */
#define LOAD_PASSES 2

/* Load in a thread while this one draws a progress bar on stderr (a
 * terminal only); Ctrl+C cancels. */
static int load_with_progress(struct data *d, const char *path, int utf8, int *err)
{
    struct loader l = {d, path, utf8, 0, 0, 0};
    signal(SIGINT, on_cancel);
    struct stat st;
    char real[PATH_MAX];
    int show = isatty(STDERR_FILENO) && stat(path, &st) == 0 && realpath(path, real);
    pthread_t th;
    if (pthread_create(&th, NULL, load_thread, &l) != 0) {
        load_thread(&l);
    } else {
        int shown = 0, pass = 1;
        long long last_pos = 0;
        struct winsize ws;
        int cols = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 80;
        struct timespec start;
        clock_gettime(CLOCK_MONOTONIC, &start);
        while (!__atomic_load_n(&l.done, __ATOMIC_ACQUIRE)) {
            struct timespec nap = {0, 50 * 1000 * 1000};
            nanosleep(&nap, NULL);
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            /* Quick loads draw nothing. */
            if (!show || (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < 300) {
                continue;
            }
            long long pos = read_position(real);
            char bar[41];
            char b1[32], b2[32], text[160];
            if (pos >= 0 && st.st_size > 0) {
                /* The file is read twice (the model, then the series): a
                 * position that goes back starts the second pass, and the
                 * bar and the percentage count both, to 100% once. */
                if (pos < last_pos && pass < LOAD_PASSES) {
                    pass++;
                }
                last_pos = pos;
                long long at = pos > st.st_size ? st.st_size : pos;
                long long done = (long long)(pass - 1) * st.st_size + at, all = (long long)LOAD_PASSES * st.st_size;
                snprintf(text, sizeof text, "] %3d%% %s of %s, pass %d of %d (Ctrl+C cancels)", (int)(100 * done / all),
                         text_bytes(b1, sizeof b1, (uint64_t)at), text_bytes(b2, sizeof b2, (uint64_t)st.st_size), pass,
                         LOAD_PASSES);
                /* One line of the terminal, never wrapped: a wrapped
                 * line makes every update scroll. */
                int width = cols - 1 - (int)strlen("memtui: reading [") - (int)strlen(text);
                width = width > 40 ? 40 : width;
                if (width < 0) {
                    width = 0;
                }
                int fill = (int)(width * done / all);
                memset(bar, '#', (size_t)fill);
                memset(bar + fill, '.', (size_t)(width - fill));
                bar[width] = 0;
                fprintf(stderr, "\rmemtui: reading [%s%s\033[K", bar, text);
            } else {
                fprintf(stderr, "\rmemtui: symbolizing, building the trees (Ctrl+C cancels)\033[K");
            }
            shown = 1;
        }
        pthread_join(th, NULL);
        if (shown) {
            fprintf(stderr, "\r\033[K");
        }
    }
    signal(SIGINT, SIG_DFL);
    *err = l.err;
    return l.rc;
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
                die_code(2, "invalid cost '%s' (expected calls, temporary, peak, leaked, allocated, mapped or time)",
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
    if (optind != argc - 1) {
        usage(stderr);
        return 2;
    }
    const char *path = argv[optind];
    char why[256];
    if (!batch && crt_check(why, sizeof why) < 0) {
        die("%s", why);
    }
    int utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    static struct data d;
    int err = 0;
    int rc = load_with_progress(&d, path, utf8, &err);
    if (rc == DATA_E_SYMBOLIZER) {
        die("cannot start the symbolizer (libdw)");
    }
    if (rc < 0) {
        if (rc == MEMFMT_E_IO) {
            die("cannot read '%s': %s", path, strerror(err));
        }
        die("cannot read '%s': %s", path, memfmt_strerror(rc));
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
    if (crt_quit_signal) {
        return 128 + crt_quit_signal;
    }
    return status;
}
