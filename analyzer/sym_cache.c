// SPDX-License-Identifier: MIT
/* The symbolizer's cache on disk: the frames a module's addresses resolved
 * to, one file per module keyed by its GNU build-id, so that the next run
 * on the same module does not decompress and read its DWARF again (a
 * distribution's libc debug file costs some 35 ms a run). A cache file is
 * untrusted input: it is used only when it is a regular file of this user,
 * within its bounds, parses exactly, and names the same build of the tool,
 * build-id, module path, debug file and debuginfo path, the files with the
 * same device, inode, size and modification time as now; anything else
 * reads as no cache. Only modules
 * with DWARF are cached (the others cost a symbol-table search only).
 * Each build of each tool (memprint, memtui) has its own files.
 * Writes go to a temporary file renamed into place; the directory keeps at
 * most SYMCACHE_MAX_FILES files. Never prints. */
#include "symbolize_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#define SYMCACHE_MAGIC "memrecSC"
#define SYMCACHE_VERSION 1u
#define SYMCACHE_MAX_BYTES ((size_t)32 << 20)
#define SYMCACHE_MAX_STRING 65536u
#define SYMCACHE_MAX_FRAMES 1024u
#define SYMCACHE_MAX_FILES 256
#define SYMCACHE_SUFFIX ".frames"

/* The front end's choice (symbolize_set_cache_default()), copied by every symbolizer made. */
static char *default_dir;

void symbolize_set_cache_default(const char *dir)
{
    free(default_dir);
    default_dir = dir ? xstrdup(dir) : NULL;
}

const char *sym_cache_default(void)
{
    return default_dir;
}

/* ---- stamps ---- */

static int stamp_of(const char *path, struct stamp *st)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        return -1;
    }
    st->dev = (uint64_t)sb.st_dev;
    st->ino = (uint64_t)sb.st_ino;
    st->size = (uint64_t)sb.st_size;
    st->mtime_s = (uint64_t)sb.st_mtim.tv_sec;
    st->mtime_ns = (uint64_t)sb.st_mtim.tv_nsec;
    return 0;
}

static int stamp_eq(const struct stamp *a, const struct stamp *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_s == b->mtime_s &&
           a->mtime_ns == b->mtime_ns;
}

/* The stamp of the running tool: frames made by another build of the symbolizer (whose rules
 * for naming may differ) are not this build's answer. */
static int tool_stamp(struct stamp *st)
{
    return stamp_of("/proc/self/exe", st);
}

/* dir/<hex build-id>-<tool>.frames, malloc'd; NULL without a build-id. Each build of each tool
 * has files of its own (<tool>: a hash of its stamp), so that memprint and memtui, or two
 * builds, do not take turns throwing out each other's. */
static char *cache_path(const char *dir, const struct module *m, const struct stamp *tool)
{
    if (m->build_id_len < 2) {
        return NULL;
    }
    char hex[2 * MAX_BUILD_ID + 1];
    for (size_t i = 0; i < m->build_id_len; i++) {
        snprintf(hex + 2 * i, 3, "%02x", m->build_id[i]);
    }
    uint64_t tag =
        sym_mix64(tool->dev ^ sym_mix64(tool->ino ^ sym_mix64(tool->size ^ sym_mix64(tool->mtime_s ^ tool->mtime_ns))));
    size_t size = strlen(dir) + 1 + sizeof(hex) + 1 + 16 + sizeof(SYMCACHE_SUFFIX);
    char *path = xmalloc(size);
    snprintf(path, size, "%s/%s-%016llx%s", dir, hex, (unsigned long long)tag, SYMCACHE_SUFFIX);
    return path;
}

/* ---- reading ---- */

struct reader {
    const uint8_t *p;
    size_t left;
    int bad;
};

static const uint8_t *take(struct reader *r, size_t n)
{
    if (r->bad || n > r->left) {
        r->bad = 1;
        return NULL;
    }
    const uint8_t *at = r->p;
    r->p += n;
    r->left -= n;
    return at;
}

static uint64_t take_u(struct reader *r, size_t n)
{
    const uint8_t *b = take(r, n);
    uint64_t v = 0;
    for (size_t i = 0; b && i < n; i++) {
        v |= (uint64_t)b[i] << (8 * i);
    }
    return v;
}

/* A length-prefixed string equal to `want` (NULL: the absent marker). */
static int take_same_string(struct reader *r, const char *want)
{
    uint32_t len = (uint32_t)take_u(r, 4);
    if (len == UINT32_MAX) {
        return !r->bad && want == NULL;
    }
    const uint8_t *b = take(r, len);
    return b && want && strlen(want) == len && memcmp(b, want, len) == 0;
}

static int take_same_stamp(struct reader *r, const struct stamp *want)
{
    struct stamp st;
    st.dev = take_u(r, 8);
    st.ino = take_u(r, 8);
    st.size = take_u(r, 8);
    st.mtime_s = take_u(r, 8);
    st.mtime_ns = take_u(r, 8);
    return !r->bad && stamp_eq(&st, want);
}

/* The whole file, if it is a regular file of ours within the bound. */
static uint8_t *read_cache_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        return NULL;
    }
    struct stat sb;
    uint8_t *buf = NULL;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == geteuid() && sb.st_size > 0 &&
        (uint64_t)sb.st_size <= SYMCACHE_MAX_BYTES) {
        size_t want = (size_t)sb.st_size;
        buf = xmalloc(want);
        size_t got = 0;
        while (got < want) {
            ssize_t n = read(fd, buf + got, want - got);
            if (n <= 0) {
                break;
            }
            got += (size_t)n;
        }
        if (got != want) {
            free(buf);
            buf = NULL;
        }
        *len = want;
    }
    close(fd);
    return buf;
}

size_t sym_cache_load(const char *dir, const struct module *m, const char *debuginfo_path, sym_cache_add_fn add,
                      void *ctx)
{
    struct stamp main_now;
    struct stamp tool;
    if (stamp_of(m->path, &main_now) != 0 || tool_stamp(&tool) != 0) {
        return 0;
    }
    char *path = cache_path(dir, m, &tool);
    if (!path) {
        return 0;
    }
    size_t len = 0;
    uint8_t *buf = read_cache_file(path, &len);
    free(path);
    if (!buf) {
        return 0;
    }
    struct reader r = {buf, len, 0};
    const uint8_t *magic = take(&r, 8);
    int ok = magic && memcmp(magic, SYMCACHE_MAGIC, 8) == 0 && take_u(&r, 4) == SYMCACHE_VERSION &&
             take_same_stamp(&r, &tool);
    uint32_t id_len = ok ? (uint32_t)take_u(&r, 1) : 0;
    const uint8_t *id = ok ? take(&r, id_len) : NULL;
    ok = ok && id && id_len == m->build_id_len && memcmp(id, m->build_id, id_len) == 0;
    ok = ok && take_same_string(&r, m->path) && take_same_stamp(&r, &main_now);
    /* The separate debug file the frames came from, if any: it must be the same file still. */
    uint32_t debug_len = ok ? (uint32_t)take_u(&r, 4) : 0;
    if (ok && debug_len != UINT32_MAX) {
        const uint8_t *d = take(&r, debug_len);
        char debug[PATH_MAX];
        struct stamp debug_now;
        ok = d && debug_len < sizeof debug && !memchr(d, '\0', debug_len);
        if (ok) {
            memcpy(debug, d, debug_len);
            debug[debug_len] = '\0';
            ok = stamp_of(debug, &debug_now) == 0 && take_same_stamp(&r, &debug_now);
        }
    }
    ok = ok && take_same_string(&r, debuginfo_path);

    /* Strings, NUL-terminated copies. */
    uint32_t nstrings = ok ? (uint32_t)take_u(&r, 4) : 0;
    ok = ok && !r.bad && nstrings <= r.left / 4;
    char **strings = ok ? xcalloc((size_t)nstrings + 1, sizeof *strings) : NULL;
    for (uint32_t i = 0; ok && i < nstrings; i++) {
        uint32_t slen = (uint32_t)take_u(&r, 4);
        const uint8_t *b = slen <= SYMCACHE_MAX_STRING ? take(&r, slen) : NULL;
        ok = b && !memchr(b, '\0', slen);
        if (ok) {
            strings[i] = xmalloc((size_t)slen + 1);
            memcpy(strings[i], b, slen);
            strings[i][slen] = '\0';
        }
    }

    /* Entries: checked whole before any is handed on, so that a bad file adds nothing. */
    uint32_t nentries = ok ? (uint32_t)take_u(&r, 4) : 0;
    ok = ok && !r.bad && nentries <= r.left / 10;
    const uint8_t *entries = r.p;
    for (uint32_t e = 0; ok && e < nentries; e++) {
        take_u(&r, 8);
        uint32_t count = (uint32_t)take_u(&r, 2);
        ok = !r.bad && count >= 1 && count <= SYMCACHE_MAX_FRAMES;
        for (uint32_t k = 0; ok && k < count; k++) {
            uint32_t fn = (uint32_t)take_u(&r, 4);
            uint32_t file = (uint32_t)take_u(&r, 4);
            take_u(&r, 4);
            uint32_t inlined = (uint32_t)take_u(&r, 1);
            ok = !r.bad && fn <= nstrings && file <= nstrings && inlined <= 1;
        }
    }
    ok = ok && r.left == 0;

    size_t loaded = 0;
    if (ok) {
        struct sym_frame frames[SYMCACHE_MAX_FRAMES];
        struct reader e = {entries, (size_t)(buf + len - entries), 0};
        for (uint32_t i = 0; i < nentries; i++) {
            uint64_t offset = take_u(&e, 8);
            uint32_t count = (uint32_t)take_u(&e, 2);
            for (uint32_t k = 0; k < count; k++) {
                uint32_t fn = (uint32_t)take_u(&e, 4);
                uint32_t file = (uint32_t)take_u(&e, 4);
                uint32_t line = (uint32_t)take_u(&e, 4);
                uint32_t inlined = (uint32_t)take_u(&e, 1);
                frames[k] = (struct sym_frame){
                    .function = fn ? strings[fn - 1] : NULL,
                    .file = file ? strings[file - 1] : NULL,
                    .line = line,
                    .module = m->path,
                    .module_offset = offset,
                    .inlined = (int)inlined,
                };
            }
            add(ctx, offset, frames, (int)count);
            loaded++;
        }
    }
    for (uint32_t i = 0; strings && i < nstrings; i++) {
        free(strings[i]);
    }
    free(strings);
    free(buf);
    return loaded;
}

/* ---- writing ---- */

struct writer {
    uint8_t *v;
    size_t n, cap;
};

static void put(struct writer *w, const void *p, size_t n)
{
    if (n == 0) {
        return; /* memcpy() may not be given a NULL buffer, even for nothing */
    }
    xgrow((void **)&w->v, &w->cap, w->n + n, 1);
    memcpy(w->v + w->n, p, n);
    w->n += n;
}

static void put_u(struct writer *w, uint64_t v, size_t n)
{
    uint8_t b[8];
    for (size_t i = 0; i < n; i++) {
        b[i] = (uint8_t)(v >> (8 * i));
    }
    put(w, b, n);
}

static void put_string(struct writer *w, const char *s)
{
    if (!s) {
        put_u(w, UINT32_MAX, 4);
        return;
    }
    put_u(w, strlen(s), 4);
    put(w, s, strlen(s));
}

static void put_stamp(struct writer *w, const struct stamp *st)
{
    put_u(w, st->dev, 8);
    put_u(w, st->ino, 8);
    put_u(w, st->size, 8);
    put_u(w, st->mtime_s, 8);
    put_u(w, st->mtime_ns, 8);
}

/* String ids for the frames' strings: the symbolizer interns them, so equal addresses
 * mean equal strings; a small open-addressing table over addresses. */
struct string_ids {
    const char **keys;
    uint32_t *ids;
    size_t mask;
    uint32_t n;
};

static uint32_t string_id(struct string_ids *t, struct writer *strs, const char *s)
{
    if (!s) {
        return 0;
    }
    if ((size_t)(t->n + 1) * 2 > t->mask + 1) {
        size_t old = t->keys ? t->mask + 1 : 0;
        size_t size = old ? old * 2 : 1024;
        const char **keys = t->keys;
        uint32_t *ids = t->ids;
        t->keys = xcalloc(size, sizeof *t->keys);
        t->ids = xcalloc(size, sizeof *t->ids);
        t->mask = size - 1;
        for (size_t i = 0; i < old; i++) {
            if (keys[i]) {
                size_t j = sym_mix64((uint64_t)(uintptr_t)keys[i]) & t->mask;
                while (t->keys[j]) {
                    j = (j + 1) & t->mask;
                }
                t->keys[j] = keys[i];
                t->ids[j] = ids[i];
            }
        }
        free(keys);
        free(ids);
    }
    size_t i = sym_mix64((uint64_t)(uintptr_t)s) & t->mask;
    while (t->keys[i] && t->keys[i] != s) {
        i = (i + 1) & t->mask;
    }
    if (!t->keys[i]) {
        t->keys[i] = s;
        t->ids[i] = ++t->n;
        put_string(strs, strlen(s) <= SYMCACHE_MAX_STRING ? s : "");
    }
    return t->ids[i];
}

struct cache_file {
    char name[NAME_MAX + 1];
    struct timespec mtime;
};

static int older(const void *a, const void *b)
{
    const struct cache_file *x = a;
    const struct cache_file *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec) {
        return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    }
    return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : x->mtime.tv_nsec > y->mtime.tv_nsec;
}

/* Room for one more file within SYMCACHE_MAX_FILES: the least recently written cache files go
 * (the first 4 * SYMCACHE_MAX_FILES names read are looked at, so that a huge directory costs a
 * bounded time; a later run removes more). */
static void make_room(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        return;
    }
    size_t cap = 4 * SYMCACHE_MAX_FILES;
    struct cache_file *files = xmalloc(cap * sizeof *files);
    size_t n = 0;
    struct dirent *de;
    size_t sl = sizeof(SYMCACHE_SUFFIX) - 1;
    while (n < cap && (de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        struct stat sb;
        if (len <= sl || len > NAME_MAX || strcmp(de->d_name + len - sl, SYMCACHE_SUFFIX) != 0 ||
            fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
            continue;
        }
        memcpy(files[n].name, de->d_name, len + 1);
        files[n].mtime = sb.st_mtim;
        n++;
    }
    if (n >= SYMCACHE_MAX_FILES) {
        qsort(files, n, sizeof *files, older);
        for (size_t i = 0; i + SYMCACHE_MAX_FILES <= n; i++) {
            unlinkat(dirfd(d), files[i].name, 0);
        }
    }
    free(files);
    closedir(d);
}

/* mkdir -p with mode 0700 for the parts that are missing. */
static int make_dirs(const char *dir)
{
    char buf[PATH_MAX];
    size_t len = strlen(dir);
    if (len == 0 || len >= sizeof buf) {
        return -1;
    }
    memcpy(buf, dir, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] == '/' || buf[i] == '\0') {
            char c = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0700) != 0 && errno != EEXIST) {
                return -1;
            }
            buf[i] = c;
        }
    }
    struct stat sb;
    return stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode) && sb.st_uid == geteuid() ? 0 : -1;
}

void sym_cache_store(const char *dir, const struct module *m, const char *debuginfo_path,
                     const struct sym_cache_item *items, size_t n)
{
    if (m->state != MODULE_OPEN || n == 0 || n > UINT32_MAX) {
        return;
    }
    const char *mainfile = NULL;
    const char *debugfile = NULL;
    dwfl_module_info(m->dwmod, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
    Dwarf_Addr bias = 0;
    struct stamp main_now;
    struct stamp debug_now;
    /* Only what the recorded path itself gave, with DWARF, and the file not changed since it was first read. */
    if (!mainfile || strcmp(mainfile, m->path) != 0 || !dwfl_module_getdwarf(m->dwmod, &bias) || !m->cache_stamped ||
        stamp_of(m->path, &main_now) != 0 || !stamp_eq(&main_now, &m->cache_stamp)) {
        return;
    }
    struct stamp tool;
    if (tool_stamp(&tool) != 0) {
        return;
    }
    int separate = debugfile && strcmp(debugfile, mainfile) != 0;
    if (separate && (strlen(debugfile) >= PATH_MAX || stamp_of(debugfile, &debug_now) != 0)) {
        return;
    }
    char *path = cache_path(dir, m, &tool);
    if (!path) {
        return;
    }
    struct writer head = {0};
    struct writer strs = {0};
    struct writer body = {0};
    struct string_ids ids = {0};
    put(&head, SYMCACHE_MAGIC, 8);
    put_u(&head, SYMCACHE_VERSION, 4);
    put_stamp(&head, &tool);
    put_u(&head, m->build_id_len, 1);
    put(&head, m->build_id, m->build_id_len);
    put_string(&head, m->path);
    put_stamp(&head, &main_now);
    if (separate) {
        put_string(&head, debugfile);
        put_stamp(&head, &debug_now);
    } else {
        put_u(&head, UINT32_MAX, 4);
    }
    put_string(&head, debuginfo_path);
    uint32_t nentries = 0;
    for (size_t i = 0; i < n && body.n + strs.n < SYMCACHE_MAX_BYTES; i++) {
        uint32_t count = items[i].count <= SYMCACHE_MAX_FRAMES ? items[i].count : 0;
        if (count == 0) {
            continue;
        }
        put_u(&body, items[i].offset, 8);
        put_u(&body, count, 2);
        for (uint32_t k = 0; k < count; k++) {
            const struct sym_frame *f = &items[i].frames[k];
            put_u(&body, string_id(&ids, &strs, f->function), 4);
            put_u(&body, string_id(&ids, &strs, f->file), 4);
            put_u(&body, f->line, 4);
            put_u(&body, f->inlined ? 1 : 0, 1);
        }
        nentries++;
    }
    size_t total = head.n + 4 + strs.n + 4 + body.n;
    if (total <= SYMCACHE_MAX_BYTES && make_dirs(dir) == 0) {
        struct stat sb;
        if (lstat(path, &sb) != 0) {
            make_room(dir);
        }
        size_t tlen = strlen(dir) + sizeof("/.tmp-XXXXXX");
        char *tmp = xmalloc(tlen);
        snprintf(tmp, tlen, "%s/.tmp-XXXXXX", dir);
        int fd = mkstemp(tmp);
        if (fd >= 0) {
            struct writer all = {0};
            put(&all, head.v, head.n);
            put_u(&all, ids.n, 4);
            put(&all, strs.v, strs.n);
            put_u(&all, nentries, 4);
            put(&all, body.v, body.n);
            size_t done = 0;
            while (done < all.n) {
                ssize_t w = write(fd, all.v + done, all.n - done);
                if (w <= 0) {
                    break;
                }
                done += (size_t)w;
            }
            int ok = close(fd) == 0 && done == all.n;
            if (!ok || rename(tmp, path) != 0) {
                unlink(tmp);
            }
            free(all.v);
        }
        free(tmp);
    }
    free(ids.keys);
    free(ids.ids);
    free(head.v);
    free(strs.v);
    free(body.v);
    free(path);
}

int sym_cache_stamp(const char *path, struct stamp *st)
{
    return stamp_of(path, st);
}

char *symbolize_cache_dir_from_env(void)
{
    const char *off = getenv("MEMREC_SYMBOL_CACHE");
    if (off && (strcmp(off, "off") == 0 || strcmp(off, "0") == 0)) {
        return NULL;
    }
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    const char *base = xdg && xdg[0] == '/' ? xdg : NULL;
    const char *rest = "/memrec/symbols";
    if (!base && home && home[0] == '/') {
        base = home;
        rest = "/.cache/memrec/symbols";
    }
    if (!base || strlen(base) + strlen(rest) >= PATH_MAX) {
        return NULL;
    }
    size_t size = strlen(base) + strlen(rest) + 1;
    char *dir = xmalloc(size);
    snprintf(dir, size, "%s%s", base, rest);
    return dir;
}
