// SPDX-License-Identifier: MIT
/* Rankings by allocation site and by function (groups.h). A site is the
 * innermost frame: function, source file and line (module and offset
 * without symbols). */
#include "groups.h"

#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "idmap.h"
#include "names.h"
#include "pinned.h"
#include "rssgap.h"
#include "util.h"

#define STACKS_PER_SITE 3

/* The cost type a report section ranks by. */
static enum cost_type groups_section_cost(enum report_section s)
{
    switch (s) {
    case REPORT_CALLS: return COST_CALLS;
    case REPORT_PEAK: return COST_PEAK;
    case REPORT_TEMPORARY: return COST_TEMPORARY;
    case REPORT_LEAKED: return COST_LEAKED;
    case REPORT_ALLOCATED: return COST_ALLOCATED;
    case REPORT_TIME: return COST_TIME;
    case REPORT_GROWTH: return COST_GROWTH;
    default: return COST_MAPPED;
    }
}

static const char *unit_of(enum report_section s)
{
    switch (s) {
    case REPORT_CALLS: return "calls";
    case REPORT_TEMPORARY: return "temporary allocations";
    case REPORT_PEAK: return "bytes live at the peak";
    case REPORT_LEAKED: return "bytes leaked";
    case REPORT_ALLOCATED: return "bytes allocated";
    case REPORT_TIME: return "ns in the allocator";
    case REPORT_GROWTH: return "bytes/s of steady growth";
    default: return "bytes mapped at the mapped peak";
    }
}

static int selected(const struct report_options *o, int s)
{
    return !o->sections || (o->sections & (1u << s));
}

/* A name from the recording, shortened unless `full`, escaped (util/escape.h). */
static void put_name(const char *s, int full, FILE *out)
{
    char *shortened = full ? NULL : names_shorten(s);
    esc_text_fputs(shortened ? shortened : s, out);
    free(shortened);
}

/* A name frames_name_dup() escaped already (the call tree's), shortened unless `full`. */
static void put_escaped(const char *s, int full, FILE *out)
{
    char *shortened = full ? NULL : names_shorten(s);
    fputs(shortened ? shortened : s, out);
    free(shortened);
}

/* ---- by site ---- */

struct site {
    struct sym_frame frame; /* the innermost frame of its first stack (strings: the report's) */
    int has_frame; /* 0: no stack */
    uint32_t *stacks; /* indexes into the report's stacks */
    uint32_t nstacks, cap;
    uint64_t cost;
};

struct sites {
    const struct report *r;
    struct site *v;
    size_t n, cap;
    struct idmap map;
};

static uint64_t frame_hash(const struct sym_frame *f)
{
    if (!f) {
        return 0;
    }
    if (f->function) {
        return idmap_hash_str(f->function) ^ idmap_hash_str(f->file ? f->file : "") * 3 ^ idmap_mix(f->line);
    }
    return idmap_mix(f->module_offset) ^ idmap_hash_str(f->module ? f->module : "");
}

static int frame_same(const struct sym_frame *a, const struct sym_frame *b)
{
    if (!a || !b) {
        return a == b;
    }
    if (a->function || b->function) {
        return a->function && b->function && a->line == b->line && strcmp(a->function, b->function) == 0 &&
               strcmp(a->file ? a->file : "", b->file ? b->file : "") == 0;
    }
    return a->module_offset == b->module_offset && strcmp(a->module ? a->module : "", b->module ? b->module : "") == 0;
}

static const struct sym_frame *site_frame(const struct site *s)
{
    return s->has_frame ? &s->frame : NULL;
}

static uint64_t site_rehash(const void *ctx, uint32_t i)
{
    return frame_hash(site_frame(&((const struct sites *)ctx)->v[i]));
}

struct site_key {
    const struct sites *ss;
    const struct sym_frame *frame;
};

static int site_same(const void *ctx, uint32_t i)
{
    const struct site_key *k = ctx;
    return frame_same(site_frame(&k->ss->v[i]), k->frame);
}

static void collect_sites(struct sites *ss)
{
    const struct report *r = ss->r;
    for (uint32_t i = 0; i < r->nstacks; i++) {
        const struct report_stack *st = &r->stacks[i];
        struct sym_frame inner;
        const struct sym_frame *f = report_frames(r, st, &inner, 1) == 1 ? &inner : NULL;
        idmap_reserve(&ss->map, ss->n + 1, site_rehash, ss);
        struct site_key k = {ss, f};
        size_t slot;
        uint32_t at = idmap_find(&ss->map, frame_hash(f), site_same, &k, &slot);
        if (at == IDMAP_NONE) {
            xgrow((void **)&ss->v, &ss->cap, ss->n + 1, sizeof *ss->v);
            at = (uint32_t)ss->n++;
            memset(&ss->v[at], 0, sizeof ss->v[at]);
            if (f) {
                ss->v[at].frame = *f;
                ss->v[at].has_frame = 1;
            }
            idmap_put(&ss->map, slot, at);
        }
        struct site *s = &ss->v[at];
        size_t cap = s->cap;
        xgrow((void **)&s->stacks, &cap, (size_t)s->nstacks + 1, sizeof *s->stacks);
        s->cap = (uint32_t)cap;
        s->stacks[s->nstacks++] = i;
    }
}

static const struct sites *sort_sites;
static const struct report *sort_report;
static enum report_section sort_section;

static int by_site_cost(const void *a, const void *b)
{
    const struct site *x = &sort_sites->v[*(const uint32_t *)a], *y = &sort_sites->v[*(const uint32_t *)b];
    if (x->cost != y->cost) {
        return x->cost > y->cost ? -1 : 1;
    }
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int by_stack_cost(const void *a, const void *b)
{
    uint64_t x = report_cost(&sort_report->stacks[*(const uint32_t *)a], sort_section);
    uint64_t y = report_cost(&sort_report->stacks[*(const uint32_t *)b], sort_section);
    if (x != y) {
        return x > y ? -1 : 1;
    }
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static void print_site_frame(const struct sym_frame *f, int full, FILE *out)
{
    if (!f) {
        fputs("(no stack)", out);
        return;
    }
    if (!f->function) {
        const char *m = f->module ? strrchr(f->module, '/') : NULL;
        fputs("?? in ", out);
        put_name(m ? m + 1 : (f->module ? f->module : "?"), 1, out);
        fprintf(out, "+0x%llx", (unsigned long long)f->module_offset);
        return;
    }
    put_name(f->function, full, out);
    if (f->file) {
        fputs(" at ", out);
        put_name(f->file, 1, out);
        fprintf(out, ":%u", f->line);
    }
}

/* For each section o->sections selects (all when 0): the o->top sites
 * with the largest cost, each with its cost, its number of call stacks and
 * up to three of them (most costly first, printed from the site's caller).
 * Memory: O(stacks). */
static void groups_print_sites(const struct report *r, const struct report_options *o, FILE *out)
{
    struct sites ss = {.r = r};
    collect_sites(&ss);
    uint32_t *order = xmalloc((ss.n + 1) * sizeof *order);
    for (int s = 0; s < REPORT_NSECTIONS; s++) {
        if (!selected(o, s)) {
            continue;
        }
        fprintf(out, "\n%s, BY ALLOCATION SITE\n", report_title((enum report_section)s));
        uint32_t k = 0;
        for (size_t i = 0; i < ss.n; i++) {
            ss.v[i].cost = 0;
            for (uint32_t j = 0; j < ss.v[i].nstacks; j++) {
                ss.v[i].cost += report_cost(&r->stacks[ss.v[i].stacks[j]], (enum report_section)s);
            }
            if (ss.v[i].cost) {
                order[k++] = (uint32_t)i;
            }
        }
        sort_sites = &ss;
        qsort(order, k, sizeof *order, by_site_cost);
        if (k == 0) {
            fputs("  (none)\n", out);
        }
        uint32_t shown = k < (uint32_t)o->top ? k : (uint32_t)o->top;
        for (uint32_t i = 0; i < shown; i++) {
            struct site *site = &ss.v[order[i]];
            fprintf(out, "  %llu %s in %u call stack%s: ", (unsigned long long)site->cost, unit_of(s), site->nstacks,
                    site->nstacks == 1 ? "" : "s");
            print_site_frame(site_frame(site), o->full_names, out);
            fputc('\n', out);
            sort_report = r;
            sort_section = (enum report_section)s;
            qsort(site->stacks, site->nstacks, sizeof *site->stacks, by_stack_cost);
            uint32_t nst = 0;
            for (uint32_t j = 0; j < site->nstacks && nst < STACKS_PER_SITE; j++) {
                const struct report_stack *st = &r->stacks[site->stacks[j]];
                uint64_t c = report_cost(st, (enum report_section)s);
                if (c == 0) {
                    break;
                }
                fprintf(out, "    %llu from:\n", (unsigned long long)c);
                if (st->nframes <= 1) {
                    fputs("      (the site only)\n", out);
                }
                report_print_frames(r, st, 1, o, out);
                nst++;
            }
            if (site->nstacks > nst) {
                fprintf(out, "    ... and %u more call stacks\n", site->nstacks - nst);
            }
        }
        if (k > shown) {
            fprintf(out, "  ... and %u more sites\n", k - shown);
        }
    }
    free(order);
    for (size_t i = 0; i < ss.n; i++) {
        free(ss.v[i].stacks);
    }
    free(ss.v);
    idmap_release(&ss.map);
}

/* ---- by function ---- */

/* For each section o->sections selects: the o->top functions with the
 * largest inclusive cost (stacks through them, each once), with their self
 * cost (stacks ending in them); growth only when the report has a fit
 * (`has_growth`). Sorts `t`. */
static void groups_print_functions(struct calltree *t, int has_growth, const struct report_options *o, FILE *out)
{
    for (int s = 0; s < REPORT_NSECTIONS; s++) {
        if (!selected(o, s)) {
            continue;
        }
        if (s == REPORT_GROWTH && !has_growth) {
            continue; /* no fit made: no section of zeros */
        }
        enum cost_type c = groups_section_cost((enum report_section)s);
        calltree_sort(t, c, 0);
        fprintf(out, "\n%s, BY FUNCTION (inclusive: stacks through it; self: stacks ending in it)\n",
                report_title((enum report_section)s));
        uint32_t n;
        const uint32_t *order = calltree_func_order(t, &n);
        uint32_t shown = 0;
        for (uint32_t i = 0; i < n && shown < (uint32_t)o->top; i++) {
            const struct calltree_func *f = calltree_func(t, order[i]);
            if (f->incl.v[c] == 0) {
                break;
            }
            fprintf(out, "  %llu %s inclusive, %llu self: ", (unsigned long long)f->incl.v[c], unit_of(s),
                    (unsigned long long)f->self.v[c]);
            put_escaped(f->name, o->full_names, out);
            if (f->frame && f->frame->function && f->frame->file) {
                fputs(" at ", out);
                put_name(f->frame->file, 1, out);
            }
            fputc('\n', out);
            shown++;
        }
        if (shown == 0) {
            fputs("  (none)\n", out);
        }
    }
}

/* ---- memprint --group ---- */

void groups_print_report(const struct report *r, struct frames *fr, const struct accounting *a,
                         const struct report_options *o, FILE *out)
{
    /* The summary, then the sections ranked another way. */
    struct report_options ro = *o;
    unsigned sections = ro.sections;
    ro.sections = 1u << REPORT_NSECTIONS;
    report_print_text(r, &ro, out);
    ro.sections = sections;
    int time_missing = 0;
    if (!cost_recorded(&r->model->header, COST_TIME)) {
        /* The file has no allocator time: no section of zeros. */
        time_missing = (ro.sections & (1u << REPORT_TIME)) != 0;
        ro.sections = (ro.sections ? ro.sections : (1u << REPORT_NSECTIONS) - 1) & ~(1u << REPORT_TIME);
    }
    if (ro.sections) {
        if (!fr) {
            groups_print_sites(r, &ro, out);
        } else {
            struct calltree *t = calltree_build_growth(fr, a, r->model->growth);
            groups_print_functions(t, r->model->growth != NULL, &ro, out);
            calltree_free(t);
        }
    }
    if (time_missing) {
        fprintf(out, "\n%s\n  allocator time: not recorded (memrec --time)\n", report_title(REPORT_TIME));
    }
    if (!sections) {
        rssgap_print_text(&r->model->rssgap, r->model->sample_rate != 0, r->model->nthreads, out);
        /* The report's index of stacks is a cache it fills as asked. */
        pinned_print_report_text((struct report *)r, o, out);
    }
}
