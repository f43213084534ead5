// SPDX-License-Identifier: MIT
/* Unit test of the read-ahead thread (readahead.c): on a recording written
 * here (modules whose paths point into the reader's buffers, thousands of
 * nodes and events in many blocks, clock ticks), every answer of
 * readahead_next() equals memfmt_read_batch()'s on a second reader of the
 * same file, in order, records field by field and events entry by entry;
 * the same on a copy cut in the middle (the same error at the same offset)
 * and when the caller stops early. */
#define _GNU_SOURCE
#include "readahead.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

/* Pair ids in the order pairs first appear: sizes 16..2015 of traces 0..49. */
static uint32_t npairs;
static uint32_t pair_id[2000][50];

static uint32_t info_of(uint64_t size, uint32_t trace)
{
    uint32_t *id = &pair_id[size - 16][trace];
    if (*id == 0) {
        *id = ++npairs;
    }
    return *id;
}

/* A recording with 6 modules, 3,000 nodes, 450 ticks and 450,000 events
 * (allocations, frees, reallocs), the writer flushing blocks as it goes,
 * into `fd`: more than 1 MiB, so that the reader decompresses in a thread
 * of its own and a cut copy opens (the error comes while reading). */
static void write_file(int fd)
{
    struct memfmt_header h = {MEMFMT_VERSION, 8, 1, 0};
    int rc;
    memfmt_writer *w = memfmt_writer_new(fd, &h, 1, &rc);
    CHECK(w != NULL);
    uint64_t bad = 0;
    struct memfmt_record x = {.tag = MEMFMT_REC_THREAD};
    x.u.thread.index = 1;
    x.u.thread.tid = 100;
    bad += memfmt_write(w, &x) != 0;
    uint64_t live_size[64] = {0};
    uint32_t live_trace[64] = {0};
    uint32_t nodes = 0;
    uint64_t seed = 12345;
    for (uint32_t step = 0; step < 450000; step++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t r = (uint32_t)(seed >> 33);
        if (step % 75000 == 0) {
            char path[64];
            snprintf(path, sizeof path, "/lib/module-%u.so", step / 75000);
            x = (struct memfmt_record){.tag = MEMFMT_REC_MODULE};
            x.u.module.id = step / 75000 + 1;
            x.u.module.bias = 0x100000ull * (step / 75000 + 1);
            x.u.module.path = path;
            x.u.module.path_len = (uint32_t)strlen(path);
            bad += memfmt_write(w, &x) != 0;
        }
        if (step % 1000 == 0) {
            x = (struct memfmt_record){.tag = MEMFMT_REC_TIME};
            x.u.time.ms = step / 1000 * 10;
            bad += memfmt_write(w, &x) != 0;
        }
        if (nodes < 3000 && step % 20 == 0) {
            x = (struct memfmt_record){.tag = MEMFMT_REC_NODE};
            x.u.node.parent = nodes ? r % nodes : 0;
            x.u.node.ip = 0x100000 + r % 0x50000;
            bad += memfmt_write(w, &x) != 0;
            nodes++;
        }
        uint32_t k = r % 64;
        if (live_size[k] == 0) {
            x = (struct memfmt_record){.tag = MEMFMT_REC_ALLOC};
            x.u.alloc.thread = 1;
            x.u.alloc.size = 16 + (seed >> 7) % 2000;
            x.u.alloc.trace = (r >> 8) % (nodes < 50 ? nodes + 1 : 50);
            x.u.alloc.info = info_of(x.u.alloc.size, x.u.alloc.trace);
            live_size[k] = x.u.alloc.size;
            live_trace[k] = x.u.alloc.trace;
        } else if (r & 1) {
            x = (struct memfmt_record){.tag = MEMFMT_REC_FREE};
            x.u.free.thread = 1;
            x.u.free.size = live_size[k];
            x.u.free.trace = live_trace[k];
            x.u.free.info = info_of(live_size[k], live_trace[k]);
            live_size[k] = 0;
        } else {
            x = (struct memfmt_record){.tag = MEMFMT_REC_REALLOC};
            x.u.alloc.thread = 1;
            x.u.alloc.old_size = live_size[k];
            x.u.alloc.old_trace = live_trace[k];
            x.u.alloc.old_info = info_of(live_size[k], live_trace[k]);
            x.u.alloc.size = 16 + (seed >> 9) % 2000;
            x.u.alloc.trace = live_trace[k];
            x.u.alloc.info = info_of(x.u.alloc.size, x.u.alloc.trace);
            live_size[k] = x.u.alloc.size;
        }
        bad += memfmt_write(w, &x) != 0;
    }
    x = (struct memfmt_record){.tag = MEMFMT_REC_END};
    x.u.end.how = MEMFMT_END_EXITED;
    x.u.end.runtime_ms = 4000;
    bad += memfmt_write(w, &x) != 0;
    CHECK_EQ(bad, 0);
    CHECK(memfmt_writer_finish(w) == 0);
    memfmt_writer_free(w);
}

static int same_record(const struct memfmt_record *a, const struct memfmt_record *b)
{
    if (a->tag != b->tag) {
        return 0;
    }
    if (a->tag == MEMFMT_REC_MODULE) {
        return a->u.module.id == b->u.module.id && a->u.module.path_len == b->u.module.path_len &&
               memcmp(a->u.module.path, b->u.module.path, a->u.module.path_len) == 0;
    }
    if (a->tag == MEMFMT_REC_NODE) {
        return a->u.node.parent == b->u.node.parent && a->u.node.ip == b->u.node.ip;
    }
    if (a->tag == MEMFMT_REC_TIME) {
        return a->u.time.ms == b->u.time.ms;
    }
    return 1;
}

/* Both readers of `path`, answer by answer; `stop_after` answers (0: all).
 * Returns the answers compared. */
static uint64_t compare(const char *path, uint64_t stop_after, int *last_rc)
{
    int rc;
    memfmt_reader *direct = memfmt_reader_open(path, &rc);
    memfmt_reader *ahead = memfmt_reader_open(path, &rc);
    if (!CHECK(direct && ahead)) {
        fprintf(stderr, "open %s: %s\n", path, memfmt_strerror(rc));
        exit(1);
    }
    struct readahead *ra = readahead_new(ahead);
    struct memfmt_record want;
    struct memfmt_event evs[512];
    uint64_t answers = 0, differ = 0, records = 0, events = 0;
    for (;;) {
        size_t n = 0, m = 0;
        int a = memfmt_read_batch(direct, &want, evs, 512, &n);
        const struct memfmt_record *got = NULL;
        const struct memfmt_event *gev = NULL;
        int b = readahead_next(ra, &got, &gev, &m);
        answers++;
        if (a != b || n != m) {
            differ++;
            break;
        }
        if (a <= 0) {
            *last_rc = a;
            /* And again at every later call. */
            CHECK_EQ(readahead_next(ra, &got, &gev, &m), a);
            break;
        }
        if (n > 0) {
            differ += memcmp(evs, gev, n * sizeof *evs) != 0;
            events += n;
        } else {
            differ += !same_record(&want, got);
            records++;
        }
        if (stop_after && answers == stop_after) {
            break;
        }
    }
    readahead_free(ra);
    CHECK_EQ(differ, 0);
    if (!stop_after) {
        CHECK(*last_rc < 0 || (records > 3000 && events >= 450000));
        /* Past an error or the end, the reader stands where the other one does. */
        CHECK_EQ(memfmt_reader_offset(ahead), memfmt_reader_offset(direct));
    }
    memfmt_reader_free(direct);
    memfmt_reader_free(ahead);
    return answers;
}

int main(void)
{
    int fd = memfd_create("readahead-test", 0);
    CHECK(fd >= 0);
    write_file(fd);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int rc = 1;
    uint64_t answers = compare(path, 0, &rc);
    CHECK_EQ(rc, 0);
    CHECK(answers > 3400);
    /* Stopped early, at several places: the thread stops, nothing leaks. */
    for (uint64_t k = 1; k < answers; k += answers / 7) {
        compare(path, k, &rc);
    }
    /* Cut in the middle: the same error, at the same offset. */
    off_t size = lseek(fd, 0, SEEK_END);
    CHECK(size > (1 << 20));
    int cut = memfd_create("readahead-cut", 0);
    char *buf = malloc((size_t)size);
    CHECK(pread(fd, buf, (size_t)size, 0) == size);
    CHECK(write(cut, buf, (size_t)size / 2) == size / 2);
    snprintf(path, sizeof path, "/proc/self/fd/%d", cut);
    compare(path, 0, &rc);
    CHECK(rc < 0);
    free(buf);
    close(cut);
    close(fd);
    return check_summary("test_readahead");
}
