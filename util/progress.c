// SPDX-License-Identifier: MIT
/* The progress bar (progress.h). */
#define _GNU_SOURCE
#include "progress.h"

#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

struct progress {
    const char *who;
    char real[PATH_MAX];
    long long size;
    unsigned delay_ms;
    pthread_t thread;
    pthread_mutex_t lock; /* around drawing, so that a message erases a whole line */
    int stop; /* atomic: set by progress_stop(), or before the process ends */
    int shown;
};

/* The bar being drawn, for util_message_hook. */
static struct progress *current;

/* A message is about to go to stderr: erase the bar's line (the next
 * round draws it again below the message), for good when the process
 * ends after it. */
static void before_message(int last)
{
    struct progress *p = current;
    if (!p) {
        return;
    }
    pthread_mutex_lock(&p->lock);
    if (p->shown) {
        fprintf(stderr, "\r\033[K");
        p->shown = 0;
    }
    if (last) {
        __atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&p->lock);
}

/* The offset of this process's descriptor open on `real`, -1 when none is
 * open (between two passes, or while the work does not read). */
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

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void draw(struct progress *p, long long pos, int pass)
{
    struct winsize ws;
    int cols = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 80;
    char head[64], text[160];
    if (pos < 0) {
        /* Between passes, or symbolizing: no position to show. */
        snprintf(text, sizeof text, "%s: working on what was read (Ctrl+C cancels)", p->who);
        fprintf(stderr, "\r%.*s\033[K", cols - 1 > 0 ? cols - 1 : 0, text);
        return;
    }
    long long at = pos > p->size ? p->size : pos;
    char b1[32], b2[32];
    snprintf(head, sizeof head, "%s: reading [", p->who);
    snprintf(text, sizeof text, "] %3d%% %s of %s%s (Ctrl+C cancels)", (int)(100 * at / p->size),
             util_bytes(b1, sizeof b1, (uint64_t)at), util_bytes(b2, sizeof b2, (uint64_t)p->size),
             pass > 1 ? ", again" : "");
    int width = cols - 1 - (int)strlen(head) - (int)strlen(text);
    width = width > 40 ? 40 : width;
    if (width < 0) {
        /* Too narrow for a bar: the figures alone, cut to the width. */
        snprintf(text, sizeof text, "%s: %3d%%", p->who, (int)(100 * at / p->size));
        fprintf(stderr, "\r%.*s\033[K", cols - 1 > 0 ? cols - 1 : 0, text);
        return;
    }
    char bar[41];
    int fill = (int)(width * at / p->size);
    memset(bar, '#', (size_t)fill);
    memset(bar + fill, '.', (size_t)(width - fill));
    bar[width] = 0;
    fprintf(stderr, "\r%s%s%s\033[K", head, bar, text);
}

static void *watch(void *arg)
{
    struct progress *p = arg;
    uint64_t start = mono_ms();
    long long last = 0;
    int pass = 1;
    while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
        struct timespec nap = {0, 50 * 1000 * 1000};
        nanosleep(&nap, NULL);
        long long pos = read_position(p->real);
        /* A position that goes back starts another pass over the file. */
        if (pos >= 0 && pos < last) {
            pass++;
        }
        if (pos >= 0) {
            last = pos;
        }
        if (mono_ms() - start < p->delay_ms) {
            continue;
        }
        pthread_mutex_lock(&p->lock);
        if (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
            draw(p, pos, pass);
            p->shown = 1;
        }
        pthread_mutex_unlock(&p->lock);
    }
    return NULL;
}

struct progress *progress_start(const char *who, const char *path, unsigned delay_ms)
{
    /* MEMREC_PROGRESS_DELAY_MS: another delay, so that a test can see the
     * bar on a read that takes less than a second. */
    const char *env = getenv("MEMREC_PROGRESS_DELAY_MS");
    if (env && *env) {
        char *end;
        unsigned long v = strtoul(env, &end, 10);
        if (*end == 0 && v <= 3600000) {
            delay_ms = (unsigned)v;
        }
    }
    struct stat st;
    if (!isatty(STDERR_FILENO) || stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
        return NULL;
    }
    struct progress *p = xcalloc(1, sizeof *p);
    if (!realpath(path, p->real)) {
        free(p);
        return NULL;
    }
    p->who = who;
    p->size = (long long)st.st_size;
    p->delay_ms = delay_ms;
    pthread_mutex_init(&p->lock, NULL);
    if (pthread_create(&p->thread, NULL, watch, p) != 0) {
        pthread_mutex_destroy(&p->lock);
        free(p);
        return NULL;
    }
    current = p;
    util_message_hook = before_message;
    return p;
}

void progress_stop(struct progress *p)
{
    if (!p) {
        return;
    }
    __atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
    pthread_join(p->thread, NULL);
    util_message_hook = NULL;
    current = NULL;
    if (p->shown) {
        fprintf(stderr, "\r\033[K");
    }
    pthread_mutex_destroy(&p->lock);
    free(p);
}
