// SPDX-License-Identifier: MIT
/* libFuzzer target: arbitrary bytes as a recording file. Reads them with
 * memfmt_reader_open_fd record by record into the accounting, again in
 * batches (memfmt_read_batch must agree), then loads them the way memprint
 * does (model_load). Bad bytes must give an error
 * status; the reader must never crash, hang, or allocate in proportion to a
 * number it read from the file. Never asserts on its input: it aborts only
 * when the library breaks its own contract.
 *
 * Input that starts with the memrec magic is the decompressed stream: it
 * is compressed here first, the way memrec writes it, so that mutations
 * reach the records and events instead of dying in zstd's checks. Any other
 * input is the file as it is (zstd framing, truncation, corruption); see
 * fuzz_common.h. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accounting.h"
#include "fuzz_common.h"
#include "analysis.h"
#include "memfmt.h"
#include "model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void contract(int ok, const char *what)
{
    fuzz_contract(ok, what);
}

/* 0 or a status code of memfmt.h (one that memfmt_strerror names, so the
 * check follows the append-only table); anything else is a bug. */
static int known_status(int rc)
{
    return rc == MEMFMT_OK || (rc < 0 && strcmp(memfmt_strerror(rc), memfmt_strerror(-1000)) != 0);
}

/* What a reader hands out, summed up: each event as the entries
 * memfmt_read_batch() gives for it, each other record as its tag. */
struct digest {
    uint64_t hash, entries;
};

static void digest_add(struct digest *d, uint64_t size, uint32_t trace, uint32_t flags)
{
    d->hash = (d->hash ^ size) * 0x100000001b3ull;
    d->hash = (d->hash ^ ((uint64_t)trace << 32 | flags)) * 0x100000001b3ull;
    d->entries++;
}

static void digest_record(struct digest *d, const struct memfmt_record *r)
{
    switch (r->tag) {
    case MEMFMT_REC_ALLOC: digest_add(d, r->u.alloc.size, r->u.alloc.trace, 0); break;
    case MEMFMT_REC_FREE:
        digest_add(d, r->u.free.size, r->u.free.trace,
                   MEMFMT_EV_FREE | (r->u.free.temporary ? MEMFMT_EV_TEMPORARY : 0));
        break;
    case MEMFMT_REC_REALLOC:
        digest_add(d, r->u.alloc.old_size, r->u.alloc.old_trace,
                   MEMFMT_EV_FREE | MEMFMT_EV_REALLOC | (r->u.alloc.old_temporary ? MEMFMT_EV_TEMPORARY : 0));
        digest_add(d, r->u.alloc.size, r->u.alloc.trace, 0);
        break;
    default: digest_add(d, 0, 0, r->tag << 8); break;
    }
}

/* The file read again in batches: the same records and events in the same
 * order, and the same end at the same offset, as memfmt_read() gave. */
static void read_batches(int fd, const struct digest *want, int want_rc, uint64_t want_offset)
{
    contract(lseek(fd, 0, SEEK_SET) == 0, "lseek of the memfd works");
    int rc;
    memfmt_reader *r = memfmt_reader_open_fd(fd, &rc);
    contract(r != NULL, "a file that opened once opens again");
    struct digest got = {0, 0};
    struct memfmt_record rec;
    struct memfmt_event evs[7]; /* an odd size: blocks end mid-batch and batches mid-block */
    size_t n;
    while ((rc = memfmt_read_batch(r, &rec, evs, 7, &n)) > 0) {
        for (size_t i = 0; i < n; i++) {
            digest_add(&got, evs[i].size, evs[i].trace, evs[i].flags);
        }
        if (n == 0) {
            digest_record(&got, &rec);
        }
    }
    contract(got.hash == want->hash && got.entries == want->entries,
             "memfmt_read_batch hands out what memfmt_read does");
    contract(rc == want_rc && memfmt_reader_offset(r) == want_offset,
             "memfmt_read_batch stops where memfmt_read does, with the same status");
    memfmt_reader_free(r);
}

static void read_records(int fd)
{
    int rc;
    memfmt_reader *r = memfmt_reader_open_fd(fd, &rc);
    if (!r) {
        contract(rc < 0 && known_status(rc), "open fails with a memfmt status");
        return;
    }
    contract(rc == 0, "open succeeds with status 0");
    const struct memfmt_header *h = memfmt_reader_header(r);
    contract(h->version >= 1 && h->version <= MEMFMT_VERSION, "an opened file has a supported version");

    struct accounting *a = accounting_new(1);
    /* Trace ids are checked against the nodes defined so far, as model.c
     * does before it feeds the accounting (allocations, frees, reallocs and
     * mappings alike): the accounting sizes its per-trace table by the id
     * it is given. Thread indexes are passed through as model.c passes
     * them. */
    uint64_t nodes = 1;
    uint64_t offset = memfmt_reader_offset(r);
    struct memfmt_record rec;
    struct digest seen = {0, 0};
    while ((rc = memfmt_read(r, &rec)) > 0) {
        digest_record(&seen, &rec);
        uint64_t now = memfmt_reader_offset(r);
        contract(now > offset, "every record moves the reader forward");
        offset = now;
        if (rec.tag == MEMFMT_REC_NODE) {
            nodes++;
        }
        if ((rec.tag == MEMFMT_REC_ALLOC || rec.tag == MEMFMT_REC_REALLOC) && rec.u.alloc.trace >= nodes) {
            rec.u.alloc.trace = 0;
        }
        if (rec.tag == MEMFMT_REC_FREE && rec.u.free.trace >= nodes) {
            rec.u.free.trace = 0;
        }
        if (rec.tag == MEMFMT_REC_REALLOC && rec.u.alloc.old_trace >= nodes) {
            rec.u.alloc.old_trace = 0;
        }
        if (rec.tag == MEMFMT_REC_MAP && rec.u.map.trace >= nodes) {
            rec.u.map.trace = 0;
        }
        int frc = accounting_feed(a, &rec);
        contract(frc == 0 || frc == MEMFMT_E_CORRUPT, "accounting_feed returns 0 or MEMFMT_E_CORRUPT");
        /* Whatever the input, the figures stay consistent: a record that
         * cannot be applied is refused, not half applied. */
        const struct acct_totals *t = accounting_totals(a);
        contract(t->live_blocks != 0 || t->live_bytes == 0, "accounting: no live bytes without live blocks");
        contract(t->live_blocks <= t->allocations, "accounting: no more live blocks than allocations");
        contract(t->mapped_bytes <= t->mapped_peak, "accounting: never more mapped than the mapped peak");
    }
    contract(known_status(rc), "read ends with 0 or a memfmt status");
    uint64_t end_offset = memfmt_reader_offset(r);
    accounting_free(a);
    memfmt_reader_free(r);
    read_batches(fd, &seen, rc, end_offset);
}

/* The analysis pass (analysis.h) on the same file: once with nothing
 * restricted, which must give the model's figures, once with a window, a
 * thread, a series and a histogram, whose ids come from the file. */
static void analyze(const char *path, const struct model *m)
{
    struct analysis_query q = ANALYSIS_QUERY_INIT;
    struct analysis *a;
    int err;
    int rc = analysis_run(path, m, &q, &a, &err);
    contract(rc == 0, "analysis_run opens what model_load opened");
    const struct acct_totals *t = accounting_totals(a->acct), *mt = accounting_totals(m->acct);
    contract(m->sample_rate || t->allocations == mt->allocations,
             "analysis_run without a restriction counts the model's allocations");
    analysis_free(a);
    q.has_window = 1;
    q.from_ms = 5;
    q.to_ms = 50;
    q.thread = 1;
    q.series_points = 16;
    q.sizes = 1;
    rc = analysis_run(path, m, &q, &a, &err);
    contract(rc == 0, "analysis_run with a window opens the file");
    t = accounting_totals(a->acct);
    contract(t->live_blocks <= t->allocations, "analysis: no more live blocks than allocations");
    contract(a->series->filled == 16, "analysis: every point of the series is filled");
    contract(a->sizes->calls == t->allocations || m->sample_rate, "analysis: the histogram counts the allocations");
    analysis_free(a);
}

static void load_model(void)
{
    struct model *m;
    int err;
    int rc = model_load(fuzz_input_path(), &m, &err);
    if (rc < 0) {
        contract(known_status(rc), "model_load fails with a memfmt status");
        return;
    }
    contract(known_status(m->stop_rc), "model_load stops with 0 or a memfmt status");
    (void)model_runtime_ms(m);
    analyze(fuzz_input_path(), m);
    model_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = fuzz_input_fd(data, size);
    read_records(fd);
    load_model();
    return 0;
}
