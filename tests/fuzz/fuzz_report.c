// SPDX-License-Identifier: MIT
/* libFuzzer target: arbitrary bytes as a recording, taken through all of
 * memprint's path: model_load, report_new (symbolizing the modules the
 * input names), the text report and the JSON report, then the top-down
 * call tree, the folded stacks of memprint --folded, the bottom-up
 * tree as memtui opens it, the allocator time tables (--alloc-time) and the
 * threads section (--threads). Input that starts
 * with the memrec magic is the decompressed stream (fuzz_common.h).
 *
 * Checks what any recording must give: the text and the JSON are valid
 * UTF-8 with no control character (C0 but newline, DEL, C1) taken raw,
 * every ranked stack has the frames it claims, and nothing crashes or
 * grows with a number read from the file. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloctime.h"
#include "calltree.h"
#include "escape.h"
#include "folded.h"
#include "frames.h"
#include "fuzz_common.h"
#include "model.h"
#include "report.h"
#include "threadcosts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A node's costs are its self plus its children's, type by type. */
static void check_sums(const struct calltree *t, uint32_t id, const uint32_t *kids, uint32_t nk)
{
    const struct calltree_node *nd = calltree_node(t, CALLTREE_BOTTOM_UP, id);
    for (int c = 0; c < COST_NTYPES; c++) {
        uint64_t sum = nd->self.v[c];
        for (uint32_t k = 0; k < nk; k++) {
            sum += calltree_node(t, CALLTREE_BOTTOM_UP, kids[k])->incl.v[c];
        }
        fuzz_contract(sum == nd->incl.v[c], "a bottom-up node's inclusive cost is its self plus its children's");
    }
}

/* The bottom-up tree as memtui opens it (built on demand: never whole,
 * which costs sites x depth): the sites, then the first site's callers
 * down the heaviest child to the end of its path (at most
 * CALLTREE_MAX_DEPTH levels). */
static void check_bottom_up(const struct calltree *t)
{
    const struct calltree_node *root = calltree_node(t, CALLTREE_BOTTOM_UP, 0);
    const struct calltree_node *td = calltree_node(t, CALLTREE_TOP_DOWN, 0);
    fuzz_contract(memcmp(&root->incl, &td->incl, sizeof root->incl) == 0, "both roots hold the total");
    uint32_t id = 0, levels = 0;
    for (;;) {
        int has = calltree_has_children(t, CALLTREE_BOTTOM_UP, id);
        uint32_t nk;
        const uint32_t *kids = calltree_children(t, CALLTREE_BOTTOM_UP, id, &nk);
        fuzz_contract(has == (nk > 0), "calltree_has_children() says what calltree_children() gives");
        check_sums(t, id, kids, nk);
        if (nk == 0) {
            break;
        }
        id = kids[0];
        levels++;
        fuzz_contract(calltree_node(t, CALLTREE_BOTTOM_UP, id)->depth == levels, "depths count the levels");
    }
    fuzz_contract(levels <= CALLTREE_MAX_DEPTH, "bottom-up paths are cut at CALLTREE_MAX_DEPTH");
}

/* One output buffer for the whole run (open_memstream's grows as needed). */
static char *out_buf;
static size_t out_len;
static FILE *out;

static void rewind_out(void)
{
    if (!out) {
        out = open_memstream(&out_buf, &out_len);
        fuzz_contract(out != NULL, "open_memstream works");
    }
    fflush(out);
    rewind(out);
}

/* What was written since rewind_out(). */
static size_t out_size(void)
{
    fflush(out);
    return (size_t)ftell(out);
}

static void check_text(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        size_t len = esc_utf8_len(p + i, n - i);
        fuzz_contract(len > 0, "the text report is valid UTF-8");
        fuzz_contract((p[i] >= 0x20 && p[i] != 0x7f) || p[i] == '\n',
                      "the text report holds no control character but newlines");
        fuzz_contract(!(len == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0), "the text report holds no C1 control");
        i += len;
    }
}

static void check_json(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        size_t len = esc_utf8_len(p + i, n - i);
        fuzz_contract(len > 0, "the JSON report is valid UTF-8");
        fuzz_contract((p[i] >= 0x20 && p[i] != 0x7f) || p[i] == '\n', "the JSON report holds no raw control character");
        fuzz_contract(!(len == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0), "the JSON report holds no raw C1 control");
        i += len;
    }
    fuzz_contract(n >= 2 && s[0] == '{' && s[n - 2] == '}' && s[n - 1] == '\n', "the JSON report is one object");
}

/* Each table of an unsampled file sums to the whole; rows within bounds. */
static void check_alloctime(const struct alloctime *t)
{
    fuzz_contract(t->nsizes <= 65 && t->nfuncs <= MEMFMT_K_COUNT && t->nthreads <= ALLOCTIME_MAX_THREADS + 1,
                  "allocator time tables within their bounds");
    if (t->sampled) {
        return; /* estimates are rounded row by row */
    }
    const struct alloctime_row *tables[3] = {t->sizes, t->funcs, t->threads};
    uint32_t counts[3] = {t->nsizes, t->nfuncs, t->nthreads};
    for (int k = 0; k < 3; k++) {
        uint64_t calls = 0, total = 0;
        for (uint32_t i = 0; i < counts[k]; i++) {
            calls += tables[k][i].calls;
            total += tables[k][i].total_ns;
            fuzz_contract(tables[k][i].p50_ns <= tables[k][i].p99_ns && tables[k][i].p99_ns <= tables[k][i].max_ns,
                          "p50 <= p99 <= max");
        }
        fuzz_contract(calls == t->calls && total == t->total_ns, "each allocator time table sums to the whole");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input_fd(data, size);
    struct model *m;
    int err;
    if (model_load(fuzz_input_path(), &m, &err) < 0) {
        return 0;
    }
    struct report *r = report_new(m);
    fuzz_contract(r != NULL, "the symbolizer starts");
    struct report_options o = {.top = 3, .max_frames = 8};
    for (int s = 0; s < REPORT_NSECTIONS; s++) {
        fuzz_contract(r->nranked[s] <= r->nstacks, "no more ranked entries than stacks");
        for (uint32_t i = 0; i < r->nranked[s] && i < 3; i++) {
            const struct report_stack *st = &r->stacks[r->ranked[s][i]];
            struct sym_frame frames[8];
            uint32_t k = report_frames(r, st, frames, 8);
            fuzz_contract(k == (st->nframes < 8 ? st->nframes : 8), "report_frames gives the frames a stack has");
        }
    }
    rewind_out();
    report_print_text(r, &o, out);
    size_t n = out_size(); /* flushes: out_buf is valid after it */
    check_text(out_buf, n);
    rewind_out();
    report_print_json(r, &o, out);
    n = out_size();
    check_json(out_buf, n);
    report_free(r);

    struct alloctime *at;
    if (alloctime_run(fuzz_input_path(), m, &at, &err) == 0) {
        check_alloctime(at);
        rewind_out();
        alloctime_print_text(at, out);
        n = out_size();
        check_text(out_buf, n);
        rewind_out();
        fputc('{', out);
        alloctime_print_json(at, out);
        fputs("}\n", out);
        n = out_size();
        check_json(out_buf, n);
        alloctime_free(at);
    }

    /* memprint --threads: its own pass over the records, THREAD_TIMES
     * included; rows only for threads that allocated. */
    struct threads *th;
    if (threads_run(fuzz_input_path(), m, &th, &err) == 0) {
        for (uint32_t i = 0; i < th->n; i++) {
            const struct thread_times *tt = &th->v[i].times;
            fuzz_contract(tt->known || (tt->wall_ns == 0 && tt->cpu_ns == 0),
                          "a thread without THREAD_TIMES has no times");
        }
        threads_free(th);
    }

    /* The call trees and the folded stacks (memprint --folded, memtui):
     * names escaped, both orientations within bounds. */
    struct frames *fr = frames_new(m);
    fuzz_contract(fr != NULL, "the symbolizer starts for the frames");
    struct calltree *t = calltree_build(fr, m->acct);
    calltree_sort(t, COST_PEAK, 0);
    /* Folded stacks grow with sites x depth (300 MB for the hostile chain
     * of the replayed corpus): checked in memory for the small inputs a
     * fuzzer makes, written to /dev/null for the large ones. */
    if (m->nnodes <= 4096) {
        rewind_out();
        fuzz_contract(folded_write(t, COST_ALLOCATED, out) == 0, "folded_write writes");
        n = out_size();
        check_text(out_buf, n);
    } else {
        static FILE *null_out;
        if (!null_out) {
            null_out = fopen("/dev/null", "w");
            fuzz_contract(null_out != NULL, "/dev/null opens");
        }
        fuzz_contract(folded_write(t, COST_ALLOCATED, null_out) == 0, "folded_write writes");
    }
    check_bottom_up(t);
    calltree_free(t);
    frames_free(fr);
    model_free(m);
    return 0;
}
