// SPDX-License-Identifier: MIT
/* What keeps RSS up: the part of the RSS VERSUS HEAP section that names
 * the blocks pinning glibc's main heap and its thread arenas' heaps, from
 * the layouts rssgap.c keeps (pinned.h): stacks merged as the report
 * merges traces, text, JSON and memtui's line. */
#include "pinned.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "frames.h"
#include "report.h"
#include "rssgap.h"
#include "util.h"

/* Pages as bytes, saturated (the counts are a file's). */
static uint64_t bytes_of(const struct heaplayout *l, uint64_t pages)
{
    return l->page && pages > UINT64_MAX / l->page ? UINT64_MAX : pages * l->page;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

/* One entry of pinned_by: the record's entries of one merged stack. */
struct pinned {
    struct report_stack st;
    uint64_t held_pages, blocks, pages_alone;
};

/* Layout l's entries added to the n of `out`, per stack of the report;
 * returns the new count. */
static uint32_t merge_one(const struct heaplayout *l, struct report *r, struct pinned *out, uint32_t n)
{
    for (uint32_t i = 0; l && i < l->n; i++) {
        struct report_stack st = report_stack_of_trace(r, l->e[i].trace);
        uint32_t k = 0;
        while (k < n && out[k].st.path != st.path) {
            k++;
        }
        if (k == n) {
            out[n++] = (struct pinned){st, 0, 0, 0};
        }
        out[k].held_pages = add_sat(out[k].held_pages, l->e[i].held_pages);
        out[k].blocks = add_sat(out[k].blocks, l->e[i].blocks);
        out[k].pages_alone = add_sat(out[k].pages_alone, l->e[i].pages_alone);
    }
    return n;
}

/* The entries of the main heap's layout and of the thread arenas' (NULL:
 * none), merged per stack of the report (traces whose frames read the
 * same are one stack) and ranked again: held pages, then pages alone. Both
 * count pages of the same size (memrec's). */
static uint32_t merge_entries(const struct heaplayout *l, const struct heaplayout *arenas, struct report *r,
                              struct pinned *out)
{
    uint32_t n = merge_one(l, r, out, 0);
    n = merge_one(arenas && arenas->page == l->page ? arenas : NULL, r, out, n);
    /* At most 2 x MEMFMT_MAX_LAYOUT entries: an insertion sort. */
    for (uint32_t i = 1; i < n; i++) {
        struct pinned x = out[i];
        uint32_t j = i;
        while (j > 0 && (out[j - 1].held_pages < x.held_pages ||
                         (out[j - 1].held_pages == x.held_pages && out[j - 1].pages_alone < x.pages_alone))) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = x;
    }
    return n;
}

/* A heap's top block, its frames unless they are those of the first
 * stack listed. */
static void print_top(const char *what, uint64_t size, uint64_t held, uint32_t trace, const struct pinned *first,
                      struct report *r, const struct report_options *o, FILE *f)
{
    char b1[32];
    struct report_stack top = report_stack_of_trace(r, trace);
    int same = first && first->st.path == top.path;
    fprintf(f, "    %s: %" PRIu64 " bytes, %s of free pages directly below it%s\n", what, size,
            util_bytes(b1, sizeof b1, held), same ? ", from the first stack below" : "");
    if (!same) {
        report_print_frames(r, &top, 0, o, f);
        if (top.nframes == 0) {
            fputs("      (no stack)\n", f);
        }
    }
}

void pinned_print_text(const struct heaplayout *l, const struct heaplayout *arenas, enum heaplayout_why why,
                       int attached, struct report *r, const struct report_options *o, FILE *f)
{
    char b1[32], b2[32], b3[32];
    if (why != HEAPLAYOUT_KNOWN || !l || !l->known) {
        fputs("  what keeps RSS up: the heap's layout is unknown", f);
        switch (why) {
        case HEAPLAYOUT_SAMPLED: fputs(": a sampled recording (memrec saw only the sampled blocks)\n", f); break;
        case HEAPLAYOUT_NOT_YET: fputs(": memrec had written no layout yet at that moment\n", f); break;
        case HEAPLAYOUT_NOT_RECORDED:
            fputs(":\n  the recording has allocator samples but no layout of the heap (an older memrec,\n"
                  "  or the heap's range or its number of blocks was out of reach)\n",
                  f);
            break;
        default:
            fputs(":\n  the allocator is not glibc's, or it was recorded with MEMREC_HEAPINFO=0 (no allocator "
                  "samples)\n",
                  f);
            break;
        }
        return;
    }
    uint64_t free_below = bytes_of(l, l->free_pages);
    fprintf(f, "\n  What keeps RSS up (glibc's main heap at %.3f s; %s):\n", (double)l->ms / 1000.0,
            arenas ? "its thread arenas' heaps too; chunks mapped on their own are not laid out"
                   : "thread arenas not laid out (none, or not told from mapped chunks)");
    fprintf(f, "    main heap %s, %s live in %" PRIu64 " %s; %s in free whole pages below its top live block\n",
            util_bytes(b1, sizeof b1, l->heap_bytes), util_bytes(b2, sizeof b2, l->live_bytes), l->live_blocks,
            util_plural(l->live_blocks, "block", "blocks"), util_bytes(b3, sizeof b3, free_below));
    if (attached) {
        fputs("    (attached: blocks live before the attach are unknown to memrec and look free here, so the held\n"
              "    figures are upper bounds, and a heap's top block is the highest memrec knows)\n",
              f);
    }
    struct pinned p[2 * MEMFMT_MAX_LAYOUT];
    uint32_t n = merge_entries(l, arenas, r, p);
    if (l->live_blocks) {
        print_top("its top live block", l->top_size, bytes_of(l, l->top_held_pages), l->top_trace, n ? &p[0] : NULL, r,
                  o, f);
    } else {
        fputs("    (no live block in the main heap: nothing pins it)\n", f);
    }
    if (arenas && arenas->live_blocks) {
        fprintf(f,
                "    thread arenas: %" PRIu64 " %s, %s live in %" PRIu64 " %s; %s in free whole pages below their top "
                "live blocks\n",
                arenas->heaps, util_plural(arenas->heaps, "heap", "heaps"),
                util_bytes(b1, sizeof b1, arenas->live_bytes), arenas->live_blocks,
                util_plural(arenas->live_blocks, "block", "blocks"),
                util_bytes(b2, sizeof b2, bytes_of(arenas, arenas->free_pages)));
        uint32_t tops = arenas->ntops < (uint32_t)o->top ? arenas->ntops : (uint32_t)o->top;
        for (uint32_t i = 0; i < tops; i++) {
            const struct memfmt_layout_top *t = &arenas->tops[i];
            char what[96];
            snprintf(what, sizeof what, "heap %u (%" PRIu64 " live %s, %s free below its top): its top block", i + 1,
                     t->live_blocks, util_plural(t->live_blocks, "block", "blocks"),
                     util_bytes(b1, sizeof b1, bytes_of(arenas, t->free_pages)));
            print_top(what, t->size, bytes_of(arenas, t->held_pages), t->trace, n ? &p[0] : NULL, r, o, f);
        }
        if (arenas->heaps > tops) {
            fprintf(f, "    ... and %" PRIu64 " more heaps\n", arenas->heaps - tops);
        }
    }
    if (n == 0) {
        return;
    }
    fputs("  call stacks by the free whole pages held below their blocks (down to the next live block),\n"
          "  and the pages that hold only their blocks:\n",
          f);
    uint32_t shown = n < (uint32_t)o->top ? n : (uint32_t)o->top;
    for (uint32_t i = 0; i < shown; i++) {
        fprintf(f, "    %s held below %" PRIu64 " %s, %" PRIu64 " %s alone\n",
                util_bytes(b1, sizeof b1, bytes_of(l, p[i].held_pages)), p[i].blocks,
                util_plural(p[i].blocks, "block", "blocks"), p[i].pages_alone,
                util_plural(p[i].pages_alone, "page", "pages"));
        report_print_frames(r, &p[i].st, 0, o, f);
        if (p[i].st.nframes == 0) {
            fputs("      (no stack)\n", f);
        }
    }
    uint64_t stacks = add_sat(l->ntraces, arenas ? arenas->ntraces : 0);
    uint64_t more = stacks > shown ? stacks - shown : 0;
    if (more) {
        fprintf(f, "    ... and %" PRIu64 " more call stacks\n", more);
    }
    if (l->free_pages || (arenas && arenas->free_pages)) {
        fputs("  free() gives held pages back (top trimming) only once every block above them is freed;\n"
              "  malloc_trim(0) gives every free page back at once (madvise), or allocate such blocks early\n"
              "  or from a pool of their own (docs/definitions.md, \"What keeps RSS up\")\n",
              f);
    }
}

/* `"top_block": {...}` or null. */
static void json_top(const struct heaplayout *l, struct report *r, FILE *f)
{
    if (!l->live_blocks) {
        fputs(", \"top_block\": null", f);
        return;
    }
    struct report_stack top = report_stack_of_trace(r, l->top_trace);
    fprintf(f, ", \"top_block\": {\"size\": %" PRIu64 ", \"end_offset\": %" PRIu64 ", \"held_bytes\": %" PRIu64,
            l->top_size, l->top_end, bytes_of(l, l->top_held_pages));
    report_print_json_frames(r, &top, f);
    fputs("}", f);
}

void pinned_print_json(const struct heaplayout *l, const struct heaplayout *arenas, enum heaplayout_why why,
                       int attached, struct report *r, const struct report_options *o, FILE *f)
{
    (void)o;
    if (why != HEAPLAYOUT_KNOWN || !l || !l->known) {
        fprintf(f, ", \"heap_layout\": {\"known\": false, \"unknown_why\": \"%s\"}, \"pinned_by\": null",
                heaplayout_why_name(why != HEAPLAYOUT_KNOWN ? why : HEAPLAYOUT_NOT_RECORDED));
        return;
    }
    fprintf(f,
            ", \"heap_layout\": {\"known\": true, \"unknown_why\": null, \"partial\": %s, \"heap\": \"main\", "
            "\"at_ms\": %" PRIu64 ", \"page_bytes\": %" PRIu64 ", \"heap_bytes\": %" PRIu64 ", \"live_bytes\": %" PRIu64
            ", \"live_blocks\": %" PRIu64 ", \"free_below_top_bytes\": %" PRIu64,
            attached ? "true" : "false", l->ms, l->page, l->heap_bytes, l->live_bytes, l->live_blocks,
            bytes_of(l, l->free_pages));
    json_top(l, r, f);
    fprintf(f, ", \"stacks\": %" PRIu64, l->ntraces);
    if (arenas) {
        fprintf(f,
                ", \"arenas\": {\"heaps\": %" PRIu64 ", \"heap_bytes\": %" PRIu64 ", \"live_bytes\": %" PRIu64
                ", \"live_blocks\": %" PRIu64 ", \"free_below_top_bytes\": %" PRIu64,
                arenas->heaps, arenas->heap_bytes, arenas->live_bytes, arenas->live_blocks,
                bytes_of(arenas, arenas->free_pages));
        json_top(arenas, r, f);
        fputs(", \"heap_tops\": [", f);
        for (uint32_t i = 0; i < arenas->ntops; i++) {
            const struct memfmt_layout_top *t = &arenas->tops[i];
            struct report_stack st = report_stack_of_trace(r, t->trace);
            fprintf(f,
                    "%s{\"size\": %" PRIu64 ", \"held_bytes\": %" PRIu64 ", \"free_below_top_bytes\": %" PRIu64
                    ", \"live_blocks\": %" PRIu64,
                    i ? ", " : "", t->size, bytes_of(arenas, t->held_pages), bytes_of(arenas, t->free_pages),
                    t->live_blocks);
            report_print_json_frames(r, &st, f);
            fputs("}", f);
        }
        fprintf(f, "], \"stacks\": %" PRIu64 "}", arenas->ntraces);
    } else {
        fputs(", \"arenas\": null", f);
    }
    fputs("}, \"pinned_by\": [", f);
    struct pinned p[2 * MEMFMT_MAX_LAYOUT];
    uint32_t n = merge_entries(l, arenas, r, p);
    for (uint32_t i = 0; i < n; i++) {
        fprintf(f,
                "%s{\"held_bytes\": %" PRIu64 ", \"held_pages\": %" PRIu64 ", \"blocks\": %" PRIu64
                ", \"pages_alone\": %" PRIu64 ", \"pages_alone_bytes\": %" PRIu64,
                i ? ", " : "", bytes_of(l, p[i].held_pages), p[i].held_pages, p[i].blocks, p[i].pages_alone,
                bytes_of(l, p[i].pages_alone));
        report_print_json_frames(r, &p[i].st, f);
        fputs("}", f);
    }
    fputs("]", f);
}

/* The name of a trace's innermost frame, escaped (xmalloc'd). */
static char *leaf_name(struct frames *fr, uint32_t trace)
{
    uint32_t n = 0;
    const struct sym_frame *sf = trace ? frames_of_node(fr, trace, &n) : NULL;
    return n ? frames_name_dup(&sf[0]) : xstrdup("(no stack)");
}

void pinned_print_brief(const struct heaplayout *l, const struct heaplayout *arenas, enum heaplayout_why why,
                        int attached, struct frames *fr, FILE *f)
{
    int in_arenas = arenas && arenas->free_pages && arenas->live_blocks;
    if (why != HEAPLAYOUT_KNOWN || !l || !l->known || !((l->free_pages && l->live_blocks) || in_arenas)) {
        return;
    }
    char b1[32], b2[32];
    fputs(attached ? "what keeps RSS up (attached: at most):" : "what keeps RSS up:", f);
    if (l->free_pages && l->live_blocks) {
        char *top = leaf_name(fr, l->top_trace);
        fprintf(f, " %s free below the heap's top block (%" PRIu64 " B, %s)",
                util_bytes(b1, sizeof b1, bytes_of(l, l->free_pages)), l->top_size, top);
        free(top);
    }
    if (in_arenas) {
        fprintf(f, "%s %s in thread arenas' heaps", l->free_pages && l->live_blocks ? ";" : "",
                util_bytes(b1, sizeof b1, bytes_of(arenas, arenas->free_pages)));
    }
    /* The stack holding most: the first entry of either layout (by trace). */
    const struct memfmt_layout_entry *most = l->n ? &l->e[0] : NULL;
    const struct heaplayout *ml = l;
    if (in_arenas && arenas->n && (!most || arenas->e[0].held_pages > most->held_pages)) {
        most = &arenas->e[0];
        ml = arenas;
    }
    if (most && most->held_pages) {
        char *name = leaf_name(fr, most->trace);
        fprintf(f, "; most held: %s (%s)", name, util_bytes(b2, sizeof b2, bytes_of(ml, most->held_pages)));
        free(name);
    }
    fputs("\n", f);
}

void pinned_print_report_text(struct report *r, const struct report_options *o, FILE *f)
{
    const struct model *m = r->model;
    const struct heaplayout *l;
    enum heaplayout_why why;
    if (!o->sections && rssgap_layout(&m->rssgap, m->sample_rate != 0, &l, &why)) {
        pinned_print_text(l, rssgap_arenas(&m->rssgap), why, (m->header.flags & MEMFMT_HF_ATTACHED) != 0, r, o, f);
    }
}
