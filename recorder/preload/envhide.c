// SPDX-License-Identifier: MIT
/* The recorded program must see the environment of a native run: at
 * start-up the variables memrec added (MEMREC_SOCK, MEMREC_TARGET,
 * MEMREC_FOLLOW, MEMREC_HIDE and the options it names, our entry of
 * LD_PRELOAD) are taken out of environ, kept here, and put back only into
 * the environment handed to an exec or a spawn that memrec follows. Never
 * calls malloc: the program's allocator is not ours to use. */
#define _GNU_SOURCE
#include "envhide.h"

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#include "log.h"
#include "mem.h"
#include "options.h"

extern char **environ;

#define HIDDEN_MAX 16 /* MEMREC_HIDE names at most this many variables */

static char *saved[HIDDEN_MAX + 4]; /* "NAME=value" copies in `store` */
static int n_saved;
static char *our_preload; /* our entry of LD_PRELOAD, without the name */
static char *store; /* mmap'd: the copies above */
static size_t store_used, store_size;

static const char PRELOAD_EQ[] = "LD_PRELOAD=";

/* Whether `entry` ("NAME=value") is named `name` (n bytes, no '='). */
static int named(const char *entry, const char *name, size_t n)
{
    return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

static char *keep(const char *s, size_t n)
{
    if (store_used + n + 1 > store_size) {
        return NULL;
    }
    char *p = store + store_used;
    memcpy(p, s, n);
    p[n] = 0;
    store_used += n + 1;
    return p;
}

/* Whether `entry` is one memrec added: the three it always sets, MEMREC_HIDE,
 * and the option variables MEMREC_HIDE lists (colon-separated). */
static int is_ours(const char *entry, const char *hide)
{
    static const char *const always[] = {"MEMREC_SOCK", "MEMREC_TARGET", "MEMREC_FOLLOW", "MEMREC_HIDE"};
    for (size_t i = 0; i < sizeof always / sizeof always[0]; i++) {
        if (named(entry, always[i], strlen(always[i]))) {
            return 1;
        }
    }
    for (const char *h = hide; h && *h;) {
        const char *end = strchr(h, ':');
        size_t n = end ? (size_t)(end - h) : strlen(h);
        if (n && named(entry, h, n)) {
            return 1;
        }
        h = end ? end + 1 : h + n;
    }
    return 0;
}

/* The path this library was loaded from, as LD_PRELOAD names it. */
static const char *self_path(void)
{
    Dl_info di;
    if (dladdr((void *)self_path, &di) && di.dli_fname) {
        return di.dli_fname;
    }
    return NULL;
}

/* LD_PRELOAD's value without its first entry when that entry is this
 * library (memrec puts it first), else NULL. */
static const char *strip_self(const char *value, size_t *self_len)
{
    const char *me = self_path();
    size_t n = strcspn(value, ": ");
    if (!me || strlen(me) != n || strncmp(value, me, n) != 0) {
        return NULL;
    }
    *self_len = n;
    const char *rest = value + n;
    while (*rest == ':' || *rest == ' ') {
        rest++;
    }
    return rest;
}

void envhide_init(void)
{
    char **env = environ;
    const char *hide = options_env(env, "MEMREC_HIDE");
    if (!env || !options_env(env, "MEMREC_SOCK")) {
        return; /* not started by memrec (attached, or loaded by hand) */
    }
    size_t need = 0;
    for (char **e = env; *e; e++) {
        need += strlen(*e) + 1;
    }
    store_size = need;
    store = mem_map(store_size);
    if (!store) {
        log_msg("cannot hide memrec's variables from the program", NULL);
        return;
    }
    char **out = env;
    for (char **e = env; *e; e++) {
        char *entry = *e;
        if (n_saved < HIDDEN_MAX + 4 && is_ours(entry, hide)) {
            char *copy = keep(entry, strlen(entry));
            if (copy) {
                saved[n_saved++] = copy;
                continue;
            }
        }
        size_t self_len;
        const char *rest;
        if (!our_preload && named(entry, "LD_PRELOAD", 10) &&
            (rest = strip_self(entry + sizeof PRELOAD_EQ - 1, &self_len)) != NULL) {
            our_preload = keep(entry + sizeof PRELOAD_EQ - 1, self_len);
            if (!*rest) {
                continue; /* the program had no LD_PRELOAD of its own */
            }
            /* The program's own entries, moved up in place: the same
             * string, shorter, as the program would have had it. */
            memmove(entry + sizeof PRELOAD_EQ - 1, rest, strlen(rest) + 1);
        }
        *out++ = entry;
    }
    /* The array keeps its place (main's envp is the same array); the
     * slots freed at its end become NULL. */
    for (char **e = out; *e; e++) {
        *e = NULL;
    }
}

int envhide_active(void)
{
    return n_saved > 0 || our_preload != NULL;
}

/* ---- the environment of an exec or spawn ---- */

static char **room_array(struct envhide_space *sp, size_t n)
{
    if (n <= ENVHIDE_LOCAL_ENTRIES) {
        return sp->local;
    }
    sp->arr_bytes = n * sizeof(char *);
    sp->arr = mem_map(sp->arr_bytes);
    return sp->arr;
}

static char *room_string(struct envhide_space *sp, size_t n)
{
    if (n <= sizeof sp->preload_local) {
        return sp->preload_local;
    }
    sp->str_bytes = n;
    sp->str = mem_map(n);
    return sp->str;
}

char *const *envhide_for_exec(char *const *envp, struct envhide_space *sp)
{
    memset(sp, 0, offsetof(struct envhide_space, local));
    if (!envhide_active()) {
        return envp;
    }
    size_t count = 0;
    const char *their_preload = NULL;
    for (char *const *e = envp; e && *e; e++) {
        count++;
        if (!their_preload && named(*e, "LD_PRELOAD", 10)) {
            their_preload = *e + sizeof PRELOAD_EQ - 1;
        }
    }
    char **arr = room_array(sp, count + (size_t)n_saved + 2);
    if (!arr) {
        return envp; /* no memory: the child runs unrecorded */
    }
    /* The merged LD_PRELOAD takes the place of the program's own, so that
     * the new image, which takes our entry out again, sees the program's
     * order; without one of its own, it goes in front with our variables. */
    char *merged = NULL;
    if (our_preload) {
        size_t n = sizeof PRELOAD_EQ - 1 + strlen(our_preload);
        size_t theirs = their_preload && *their_preload ? strlen(their_preload) : 0;
        merged = room_string(sp, n + (theirs ? theirs + 1 : 0) + 1);
        if (merged) {
            memcpy(merged, PRELOAD_EQ, sizeof PRELOAD_EQ - 1);
            memcpy(merged + sizeof PRELOAD_EQ - 1, our_preload, strlen(our_preload));
            if (theirs) {
                merged[n] = ':';
                memcpy(merged + n + 1, their_preload, theirs);
            }
            merged[n + (theirs ? theirs + 1 : 0)] = 0;
        }
    }
    size_t k = 0;
    for (int i = 0; i < n_saved; i++) {
        arr[k++] = saved[i];
    }
    if (merged && !their_preload) {
        arr[k++] = merged;
    }
    for (char *const *e = envp; e && *e; e++) {
        if (merged && named(*e, "LD_PRELOAD", 10)) {
            if (*e + sizeof PRELOAD_EQ - 1 == their_preload) {
                arr[k++] = merged; /* the first, which getenv() finds */
            }
            continue;
        }
        /* Ours replace any the program passes (its own copy of an older
         * environment, say). */
        int dup = 0;
        for (int i = 0; i < n_saved && !dup; i++) {
            size_t n = (size_t)(strchr(saved[i], '=') - saved[i]);
            dup = named(*e, saved[i], n);
        }
        if (!dup) {
            arr[k++] = *e;
        }
    }
    arr[k] = NULL;
    return arr;
}

void envhide_release(struct envhide_space *sp)
{
    if (sp->arr) {
        mem_unmap(sp->arr, sp->arr_bytes);
        sp->arr = NULL;
    }
    if (sp->str) {
        mem_unmap(sp->str, sp->str_bytes);
        sp->str = NULL;
    }
}
