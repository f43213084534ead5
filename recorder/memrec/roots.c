// SPDX-License-Identifier: MIT
/* The roots of the reachability scan (roots.h), read from /proc/PID/maps
 * while the process is stopped. The rules, and why, are written in
 * docs/definitions.md, "Reachability". Part of memrec. */
#define _GNU_SOURCE
#include "roots.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

#define ARENA_ALIGN REACH_ARENA_ALIGN
#define RED_ZONE 128u

struct list {
    struct reach_range *r;
    size_t n, cap;
};

static void put(struct list *l, uint64_t start, uint64_t end, unsigned flags)
{
    if (end <= start) {
        return;
    }
    if (l->n == l->cap) {
        xgrow((void **)&l->r, &l->cap, l->n + 1, sizeof *l->r);
    }
    l->r[l->n++] = (struct reach_range){start, end, flags};
}

/* [start, end) without the recorder's own mappings. */
static void put_without_own(struct list *l, uint64_t start, uint64_t end, unsigned flags, const struct roots_skip *k)
{
    uint64_t at = start;
    for (;;) {
        /* The lowest own range that ends above `at` and starts below `end`. */
        uint64_t best_s = end, best_e = end;
        for (size_t i = 0; i < k->nown; i++) {
            uint64_t s = k->own[2 * i], e = s + k->own[2 * i + 1];
            if (e > at && s < end && s < best_s) {
                best_s = s;
                best_e = e;
            }
        }
        if (best_s >= end) {
            put(l, at, end, flags);
            return;
        }
        if (best_s > at) {
            put(l, at, best_s, flags);
        }
        if (best_e >= end) {
            return;
        }
        at = best_e;
    }
}

static char *read_all(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = xmalloc(cap + 1);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            buf = xrealloc(buf, cap + 1);
        }
        ssize_t k = read(fd, buf + n, cap - n);
        if (k < 0 && errno == EINTR) {
            continue;
        }
        if (k <= 0) {
            break;
        }
        n += (size_t)k;
    }
    close(fd);
    buf[n] = 0;
    *len = n;
    return buf;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

int roots_collect(pid_t pid, const uint64_t *sp, size_t nsp, const struct roots_skip *skip, struct reach_range **out,
                  size_t *n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    size_t len;
    char *text = read_all(path, &len);
    if (!text) {
        return -1;
    }
    struct list l = {0};
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) {
            *nl = 0;
        }
        unsigned long long start, end;
        char perms[8];
        int name_at = 0;
        if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %n", &start, &end, perms, &name_at) >= 3 && perms[0] == 'r' &&
            perms[1] == 'w') {
            const char *name = name_at ? line + name_at : "";
            int kernel = strcmp(name, "[heap]") == 0 || strcmp(name, "[vvar]") == 0 || strcmp(name, "[vdso]") == 0 ||
                         strcmp(name, "[vsyscall]") == 0 || strcmp(name, "[vvar_vclock]") == 0;
            int device = strncmp(name, "/dev/", 5) == 0 && strncmp(name, "/dev/zero", 9) != 0;
            int ours = name[0] == '/' && skip->module && strcmp(base_name(name), skip->module) == 0;
            uint64_t from = start;
            int stack = 0, recorders = 0;
            for (size_t i = 0; i < nsp; i++) {
                if (sp[i] >= start && sp[i] < end) {
                    uint64_t s = sp[i] - RED_ZONE >= start ? sp[i] - RED_ZONE : start;
                    from = stack && from < s ? from : s;
                    stack = 1;
                }
            }
            if (skip->skip_sp && skip->skip_sp >= start && skip->skip_sp < end) {
                recorders = 1;
            }
            if (!kernel && !device && !ours && !recorders) {
                unsigned flags = REACH_RANGE_SKIP_BLOCKS;
                if (!stack && name[0] != '/' && start % ARENA_ALIGN == 0) {
                    flags |= REACH_RANGE_ARENA;
                }
                put_without_own(&l, from & ~(uint64_t)7, end, flags, skip);
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    *out = l.r;
    *n = l.n;
    return 0;
}
