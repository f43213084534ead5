// SPDX-License-Identifier: MIT
/* Leak suppressions (suppress.h): parsing LeakSanitizer's format, the
 * built-in list, matching leaked stacks and printing what was suppressed.
 * Reading the patterns a program embeds is in suppress_elf.c. */
#include "suppress.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "util.h"

/* ---- the built-in list ---- */

/* One-time allocations that glibc, the dynamic loader and libstdc++ keep
 * for the whole run and never free (glibc frees some only from
 * __libc_freeres, which nothing calls in a normal exit). Each was seen
 * leaked by a program that leaks nothing of its own (docs/suppressions.md
 * says which), and each names a function of those libraries that the
 * program's own code does not call directly, so it cannot hide the
 * program's leaks. */
static const struct {
    const char *pattern, *why;
} builtins[] = {
    {"^_IO_file_doallocate$", "glibc: the buffer of a stdio stream (stdout, stdin, a FILE never closed)"},
    {"^setlocale$", "glibc: locale data loaded by setlocale(), kept for the whole run"},
    {"^tzset_internal$", "glibc: time zone data loaded by localtime(), mktime(), tzset()"},
    {"^_dl_allocate_tls$", "ld.so: a thread's TLS vector, kept with the thread stack cache"},
    {"^dl_open_worker_begin$", "ld.so: the loader's records of a library dlopen() mapped (not its constructors)"},
    {"^__tls_get_addr$", "ld.so: thread-local storage of a library loaded with dlopen()"},
    {"pool::pool", "libstdc++: the emergency exception pool (matches where libstdc++'s symbols are installed)"},
};

void suppress_add_builtin(struct suppressions *s)
{
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
        xgrow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v);
        s->v[s->n++] = (struct supp_pattern){
            .pattern = xstrdup(builtins[i].pattern),
            .origin = SUPP_BUILTIN,
            .source = xstrdup("built-in"),
            .why = builtins[i].why,
        };
    }
}

/* ---- parsing ---- */

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

int suppress_parse(struct suppressions *s, const char *text, size_t len, enum supp_origin origin, const char *source,
                   int with_lines, suppress_warn_fn warn, void *ctx, char *err, size_t cap)
{
    size_t first = s->n;
    size_t line = 0;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        line++;
        const char *a = p, *b = e;
        p = nl ? nl + 1 : end;
        while (a < b && is_blank(*a)) {
            a++;
        }
        while (b > a && is_blank(b[-1])) {
            b--;
        }
        if (a == b || *a == '#') {
            continue;
        }
        if (memchr(a, 0, (size_t)(b - a))) {
            snprintf(err, cap, "'%s' line %zu holds a NUL byte", source, line);
            goto fail;
        }
        /* The kind: letters, digits, '_' and '-' before the colon. */
        const char *k = a;
        while (k < b &&
               (((*k | 0x20) >= 'a' && (*k | 0x20) <= 'z') || (*k >= '0' && *k <= '9') || *k == '_' || *k == '-')) {
            k++;
        }
        if (k == a || k == b || *k != ':') {
            snprintf(err, cap, "'%s' line %zu is not a suppression (expected leak:PATTERN): '%.*s'", source, line,
                     (int)(b - a > 80 ? 80 : b - a), a);
            goto fail;
        }
        if ((size_t)(k - a) != 4 || memcmp(a, "leak", 4) != 0) {
            /* Another sanitizer's kind (race:, called_from_lib:...): files
             * are often shared between them. A typo lands here too, which
             * is why it is said, not skipped quietly. */
            if (warn) {
                char msg[256];
                snprintf(msg, sizeof msg, "'%s' line %zu: '%.*s:' is not a leak suppression: line ignored", source,
                         line, (int)(k - a > 40 ? 40 : k - a), a);
                warn(ctx, msg);
            }
            continue;
        }
        const char *pat = k + 1;
        while (pat < b && is_blank(*pat)) {
            pat++;
        }
        if (pat == b) {
            snprintf(err, cap, "'%s' line %zu: empty pattern after 'leak:'", source, line);
            goto fail;
        }
        char *where;
        size_t wl = strlen(source) + 24;
        where = xmalloc(wl);
        if (with_lines) {
            snprintf(where, wl, "%s:%zu", source, line);
        } else {
            snprintf(where, wl, "%s", source);
        }
        char *text_copy = xmalloc((size_t)(b - pat) + 1);
        memcpy(text_copy, pat, (size_t)(b - pat));
        text_copy[b - pat] = 0;
        xgrow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v);
        s->v[s->n++] = (struct supp_pattern){.pattern = text_copy, .origin = origin, .source = where};
    }
    return 0;
fail:
    while (s->n > first) {
        s->n--;
        free(s->v[s->n].pattern);
        free(s->v[s->n].source);
    }
    return SUPPRESS_E_SYNTAX;
}

int suppress_load_file(struct suppressions *s, const char *path, suppress_warn_fn warn, void *ctx, char *err,
                       size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        snprintf(err, cap, "cannot read '%s': %s", path, strerror(e));
        errno = e;
        return SUPPRESS_E_IO;
    }
    char *buf = NULL;
    size_t len = 0, bcap = 0;
    int rc = 0;
    for (;;) {
        xgrow((void **)&buf, &bcap, len + 65536, 1);
        size_t got = fread(buf + len, 1, bcap - len, f);
        len += got;
        if (len > SUPPRESS_MAX_BYTES) {
            snprintf(err, cap, "'%s' is larger than %u MiB: not a suppressions file", path, SUPPRESS_MAX_BYTES >> 20);
            rc = SUPPRESS_E_TOOBIG;
            break;
        }
        if (got == 0) {
            if (ferror(f)) {
                int e = errno;
                snprintf(err, cap, "cannot read '%s': %s", path, strerror(e));
                rc = SUPPRESS_E_IO;
            }
            break;
        }
    }
    fclose(f);
    if (rc == 0) {
        rc = suppress_parse(s, buf, len, SUPP_FILE, path, 1, warn, ctx, err, cap);
    }
    free(buf);
    return rc;
}

/* ---- matching ---- */

/* The first occurrence of the `n` bytes at `seg` in `str` at or after
 * `from`, or NULL. */
static const char *find_seg(const char *str, const char *seg, size_t n)
{
    if (n == 0) {
        return str;
    }
    for (const char *p = str; *p; p++) {
        if (strncmp(p, seg, n) == 0) {
            return p;
        }
    }
    return NULL;
}

int suppress_match(const char *pattern, const char *str)
{
    if (!str || !*str) {
        return 0;
    }
    size_t plen = strlen(pattern);
    int at_start = plen && pattern[0] == '^';
    int at_end = plen > (size_t)at_start && pattern[plen - 1] == '$';
    const char *p = pattern + at_start;
    const char *pend = pattern + plen - at_end;
    const char *s = str;
    size_t slen = strlen(str);
    int first = 1;
    /* Segments between '*'s are found leftmost first, which is enough for
     * wildcards that match any run: a later match of a segment never helps
     * the segments after it. Only the last one, when anchored at the end,
     * must sit at the very end. */
    for (;;) {
        const char *star = memchr(p, '*', (size_t)(pend - p));
        const char *segend = star ? star : pend;
        size_t n = (size_t)(segend - p);
        if (!star && at_end) {
            size_t left = slen - (size_t)(s - str);
            if (left < n || strncmp(str + slen - n, p, n) != 0) {
                return 0;
            }
            return !(first && at_start) || left == n;
        }
        if (first && at_start) {
            if (strncmp(s, p, n) != 0) {
                return 0;
            }
            s += n;
        } else {
            const char *hit = find_seg(s, p, n);
            if (!hit) {
                return 0;
            }
            s = hit + n;
        }
        if (!star) {
            return 1;
        }
        first = 0;
        p = star + 1;
    }
}

static int frame_matches(const char *pattern, const struct sym_frame *f)
{
    return suppress_match(pattern, f->function) || suppress_match(pattern, f->file) ||
           suppress_match(pattern, f->module);
}

/* What a path (report.h) is matched by: a pattern index, NO_MATCH, or
 * UNKNOWN until computed. */
#define NO_MATCH UINT32_MAX
#define UNKNOWN (UINT32_MAX - 1)

/* The first pattern that matches a name of `f`, or NO_MATCH. */
static uint32_t match_frame(const struct suppressions *s, const struct sym_frame *f)
{
    if (!f->function && !f->module) {
        return NO_MATCH; /* the gap of a cut stack */
    }
    for (size_t p = 0; p < s->n; p++) {
        if (frame_matches(s->v[p].pattern, f)) {
            return (uint32_t)p;
        }
    }
    return NO_MATCH;
}

/* The pattern that takes path `p`: its own frames' first match, innermost
 * first, else its parent path's. Each path is matched once (`memo`), so
 * the cost is O(paths x own frames x patterns), not O(stacks x depth): a
 * chain of 20,000 nodes leaking at each would otherwise match 200 million
 * frames. The walk up is iterative (`chain`): a path may be 2048 deep. */
static uint32_t match_path(const struct suppressions *s, const struct report *r, uint32_t p, uint32_t *memo,
                           uint32_t **chain, size_t *chain_cap)
{
    size_t n = 0;
    uint32_t q = p;
    while (q != 0 && memo[q] == UNKNOWN) {
        xgrow((void **)chain, chain_cap, n + 1, sizeof **chain);
        (*chain)[n++] = q;
        const struct sym_frame *f;
        uint32_t nf;
        q = report_path_step(r, q, &f, &nf);
    }
    uint32_t inherited = q == 0 ? NO_MATCH : memo[q];
    while (n > 0) {
        uint32_t c = (*chain)[--n];
        const struct sym_frame *f;
        uint32_t nf;
        report_path_step(r, c, &f, &nf);
        uint32_t own = NO_MATCH;
        for (uint32_t k = 0; k < nf && own == NO_MATCH; k++) {
            own = match_frame(s, &f[k]);
        }
        memo[c] = own != NO_MATCH ? own : inherited;
        inherited = memo[c];
    }
    return p == 0 ? NO_MATCH : memo[p];
}

void suppress_apply(struct suppressions *s, struct report *r)
{
    if (s->n == 0) {
        return;
    }
    uint32_t np = report_npaths(r);
    uint32_t *memo = xmalloc((np ? np : 1) * sizeof *memo);
    for (uint32_t i = 0; i < np; i++) {
        memo[i] = UNKNOWN;
    }
    uint32_t *chain = NULL;
    size_t chain_cap = 0;
    uint32_t *ranked = r->ranked[REPORT_LEAKED];
    uint32_t kept = 0;
    for (uint32_t i = 0; i < r->nranked[REPORT_LEAKED]; i++) {
        const struct report_stack *st = &r->stacks[ranked[i]];
        uint32_t hit = match_path(s, r, st->path, memo, &chain, &chain_cap);
        if (hit == NO_MATCH) {
            ranked[kept++] = ranked[i];
            continue;
        }
        struct supp_pattern *p = &s->v[hit];
        p->stacks++;
        p->blocks += st->leaked_blocks;
        p->bytes += st->leaked;
        s->total.blocks += st->leaked_blocks;
        s->total.bytes += st->leaked;
        s->total.unreachable_blocks += st->unreachable_blocks;
        s->total.unreachable_bytes += st->unreachable;
        xgrow((void **)&s->matched, &s->matched_cap, s->nmatched + 1, sizeof *s->matched);
        s->matched[s->nmatched++] = (struct supp_match){ranked[i], hit};
    }
    free(chain);
    free(memo);
    r->nranked[REPORT_LEAKED] = kept;
}

/* ---- output ---- */

static const char *origin_name(enum supp_origin o)
{
    return o == SUPP_FILE ? "file" : o == SUPP_PROGRAM ? "program" : "builtin";
}

void suppress_print_text(const struct suppressions *s, const struct report *r, const struct report_options *o, FILE *f)
{
    size_t by[3] = {0, 0, 0};
    for (size_t i = 0; i < s->n; i++) {
        by[s->v[i].origin]++;
    }
    fprintf(f,
            "\nSUPPRESSED LEAKS (not in the leaked figures; %zu patterns: %zu from files, %zu from the program, %zu "
            "built-in)\n",
            s->n, by[SUPP_FILE], by[SUPP_PROGRAM], by[SUPP_BUILTIN]);
    char b1[32];
    int any = 0;
    for (size_t p = 0; p < s->n; p++) {
        const struct supp_pattern *sp = &s->v[p];
        if (!sp->stacks) {
            continue;
        }
        any = 1;
        fputs("  leak:", f);
        esc_text_fputs(sp->pattern, f);
        fputs(" (", f);
        esc_text_fputs(sp->source, f);
        fprintf(f, "): %s (%llu bytes) in %llu %s, %llu %s\n", util_bytes(b1, sizeof b1, sp->bytes),
                (unsigned long long)sp->bytes, (unsigned long long)sp->blocks,
                util_plural(sp->blocks, "block", "blocks"), (unsigned long long)sp->stacks,
                util_plural(sp->stacks, "call stack", "call stacks"));
        if (sp->why) {
            fprintf(f, "    %s\n", sp->why);
        }
        int shown = 0;
        for (size_t i = 0; i < s->nmatched; i++) {
            if (s->matched[i].pattern != p) {
                continue;
            }
            const struct report_stack *st = &r->stacks[s->matched[i].stack];
            if (shown == o->top) {
                uint64_t more = sp->stacks - (uint64_t)shown;
                fprintf(f, "    ... and %llu more %s\n", (unsigned long long)more,
                        util_plural(more, "call stack", "call stacks"));
                break;
            }
            shown++;
            fprintf(f, "    %s (%llu bytes) leaked in %llu %s\n", util_bytes(b1, sizeof b1, st->leaked),
                    (unsigned long long)st->leaked, (unsigned long long)st->leaked_blocks,
                    util_plural(st->leaked_blocks, "block", "blocks"));
            report_print_frames(r, st, 0, o, f);
        }
    }
    if (!any) {
        fprintf(f, "  (none)\n");
    }
}

void suppress_print_json(const struct suppressions *s, FILE *f)
{
    fprintf(f, ", \"suppressions\": {\"patterns\": [");
    for (size_t p = 0; p < s->n; p++) {
        const struct supp_pattern *sp = &s->v[p];
        fputs(p ? ", {\"pattern\": " : "{\"pattern\": ", f);
        esc_json_fputs(sp->pattern, f);
        fprintf(f, ", \"origin\": \"%s\", \"source\": ", origin_name(sp->origin));
        esc_json_fputs(sp->source, f);
        fprintf(f, ", \"stacks\": %llu, \"allocations\": %llu, \"bytes\": %llu}", (unsigned long long)sp->stacks,
                (unsigned long long)sp->blocks, (unsigned long long)sp->bytes);
    }
    fprintf(f, "], \"stacks\": %zu, \"allocations\": %llu, \"bytes\": %llu}", s->nmatched,
            (unsigned long long)s->total.blocks, (unsigned long long)s->total.bytes);
}

void suppress_release(struct suppressions *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].pattern);
        free(s->v[i].source);
    }
    free(s->v);
    free(s->matched);
    *s = (struct suppressions)SUPPRESSIONS_INIT;
}

/* ---- loading and notes for memprint ---- */

int suppress_add_program(struct suppressions *s, const struct model *m, suppress_warn_fn warn, void *ctx, char *err,
                         size_t cap)
{
    char *text;
    size_t len;
    int rc = suppress_program_text(m, &text, &len, err, cap);
    if (rc == 1) {
        size_t before = s->n;
        rc = suppress_parse(s, text, len, SUPP_PROGRAM, m->exe, 0, warn, ctx, err, cap);
        rc = rc < 0 ? -1 : (int)(s->n - before);
    }
    free(text);
    return rc;
}

int suppress_load_all(struct suppressions *s, const char *const *files, size_t nfiles, const struct model *m,
                      unsigned flags, suppress_warn_fn warn, void *ctx, char *err, size_t cap)
{
    for (size_t i = 0; i < nfiles; i++) {
        int rc = suppress_load_file(s, files[i], warn, ctx, err, cap);
        if (rc < 0) {
            return rc;
        }
    }
    char msg[512];
    int rc = flags & SUPPRESS_NO_PROGRAM ? 0 : suppress_add_program(s, m, warn, ctx, msg, sizeof msg);
    if (rc < 0 && (rc != SUPPRESS_E_NOEXE || (flags & SUPPRESS_SAY_NOEXE)) && warn) {
        warn(ctx, msg);
    }
    if (!(flags & SUPPRESS_NO_BUILTIN)) {
        suppress_add_builtin(s);
    }
    return 0;
}

void suppress_note(char *buf, size_t cap, const char *note, const struct suppressions *s, const struct accounting *a)
{
    size_t n = util_addf(buf, cap, 0, "%s", note ? note : "");
    if (s->total.blocks == 0) {
        return;
    }
    const struct acct_totals *t = accounting_totals(a);
    char b1[32], b2[32];
    uint64_t kept = t->live_bytes - s->total.bytes, kept_blocks = t->live_blocks - s->total.blocks;
    util_addf(
        buf, cap, n,
        "%sleaks suppressed: %s (%llu bytes) in %llu %s (SUPPRESSED LEAKS below); not suppressed: %s (%llu bytes) "
        "in %llu %s",
        n ? "\n" : "", util_bytes(b1, sizeof b1, s->total.bytes), (unsigned long long)s->total.bytes,
        (unsigned long long)s->total.blocks, util_plural(s->total.blocks, "block", "blocks"),
        util_bytes(b2, sizeof b2, kept), (unsigned long long)kept, (unsigned long long)kept_blocks,
        util_plural(kept_blocks, "block", "blocks"));
}

char *suppress_json_extra(const char *extra, const struct suppressions *s)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f) {
        return NULL;
    }
    if (extra) {
        fputs(extra, f);
    }
    suppress_print_json(s, f);
    if (fclose(f) != 0) {
        free(out);
        return NULL;
    }
    return out;
}
