// SPDX-License-Identifier: MIT
/* Launching the program: the child that waits for the go, the environment
 * it gets, and the names of the output files. Part of the memrec program
 * (memrec_internal.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "escape.h"
#include "util.h"
#include "memrec_internal.h"

/* ---- time ---- */

uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void start_child(struct child *c, const struct options *o, char *path, const char *sock, const char *preload)
{
    int go[2], err[2];
    if (pipe2(go, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
        die("cannot create a pipe: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid < 0) {
        die("cannot fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(go[1]);
        close(err[0]);
        char b;
        if (read(go[0], &b, 1) != 1) {
            _exit(127); /* memrec gave up before exec */
        }
        char val[32];
        setenv("MEMREC_SOCK", sock, 1);
        snprintf(val, sizeof val, "%d", (int)getpid());
        setenv("MEMREC_TARGET", val, 1);
        if (o->follow_fork) {
            setenv("MEMREC_FOLLOW", "1", 1);
        } else {
            unsetenv("MEMREC_FOLLOW");
        }
        /* MEMREC_HIDE names the option variables set here: the recorder
         * hides them from the program with the three above. */
        char hide[128] = "";
        if (o->max_depth) {
            setenv("MEMREC_MAX_DEPTH", o->max_depth, 1);
            strcat(hide, "MEMREC_MAX_DEPTH:");
        }
        if (o->sample_rate[0]) {
            setenv("MEMREC_SAMPLE_RATE", o->sample_rate, 1);
            strcat(hide, "MEMREC_SAMPLE_RATE:");
        }
        if (o->time) {
            snprintf(val, sizeof val, "%d", o->time);
            setenv("MEMREC_TIME", val, 1);
            strcat(hide, "MEMREC_TIME:");
        }
        if (o->max_wait_ms >= 0) {
            snprintf(val, sizeof val, "%ld", o->max_wait_ms);
            setenv("MEMREC_MAX_WAIT_MS", val, 1);
            strcat(hide, "MEMREC_MAX_WAIT_MS:");
        }
        if (o->no_reachability) {
            setenv("MEMREC_REACHABILITY", "0", 1);
            strcat(hide, "MEMREC_REACHABILITY:");
        }
        if (hide[0]) {
            setenv("MEMREC_HIDE", hide, 1);
        } else {
            unsetenv("MEMREC_HIDE");
        }
        const char *old = getenv("LD_PRELOAD");
        char *pre;
        if (old && *old) {
            pre = xmalloc(strlen(preload) + strlen(old) + 2);
            sprintf(pre, "%s:%s", preload, old);
        } else {
            pre = xstrdup(preload);
        }
        setenv("LD_PRELOAD", pre, 1);
        signal(SIGPIPE, SIG_DFL);
        execv(path, o->argv);
        int e = errno;
        ssize_t k = write(err[1], &e, sizeof e);
        (void)k;
        _exit(127);
    }
    close(go[0]);
    close(err[1]);
    c->pid = pid;
    c->go_fd = go[1];
    c->err_fd = err[0];
}

/* ---- output files ---- */

char *default_name(const char *prog, pid_t pid)
{
    const char *base = strrchr(prog, '/');
    base = base ? base + 1 : prog;
    char *name = xmalloc(strlen(base) + 64);
    sprintf(name, "memrec.%s.%d.zst", base, (int)pid);
    return name;
}

char *child_name(const struct options *o, pid_t pid)
{
    if (!o->output) {
        return default_name(o->argv[0], pid);
    }
    size_t n = strlen(o->output);
    char *name = xmalloc(n + 32);
    if (n > 4 && strcmp(o->output + n - 4, ".zst") == 0) {
        sprintf(name, "%.*s.%d.zst", (int)(n - 4), o->output, (int)pid);
    } else {
        sprintf(name, "%s.%d", o->output, (int)pid);
    }
    return name;
}

const char *create_error(const char *name, int e)
{
    struct stat st;
    if (e == EEXIST && lstat(name, &st) == 0 && S_ISLNK(st.st_mode)) {
        return stat(name, &st) == 0 ? "it is a symbolic link (memrec never writes through one)"
                                    : "it is a dangling symbolic link (memrec never writes through one)";
    }
    if (e == EEXIST) {
        return "file exists (memrec never overwrites)";
    }
    if (e == ELOOP) {
        return "it is a symbolic link (memrec never writes through one)";
    }
    return strerror(e);
}
