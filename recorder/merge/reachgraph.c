// SPDX-License-Identifier: MIT
/* The conservative reachability scan (reachgraph.h). Three passes over a
 * work list, each block read once in all: from the roots through pointers
 * to block starts (reachable), then from blocks hit in their middle by a
 * reachable source through any pointer (possibly reachable), then from
 * each block still unmarked, in address order, through any pointer
 * (unreachable: the first of a group is direct, what it leads to
 * indirect, as memcheck groups its lost blocks). Reads go through the
 * caller's reader in batches of up to 1 MiB, so a million small blocks
 * cost thousands of system calls, not a million. Runs in memrec. */
#include "reachgraph.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"

#define READ_CHUNK ((size_t)1 << 20)
#define BATCH_MAX 1024 /* blocks read by one call: process_vm_readv's IOV_MAX */
#define WORD 8u
/* Blocks closer than this are read together, the bytes between them too. */
#define RUN_GAP 4096u
#define NO_SNAP UINT64_MAX

enum phase { PH_REACH, PH_POSSIBLE, PH_LEAK };

struct scan {
    struct reach_block *b;
    size_t n;
    uint64_t lo, hi; /* the lowest block's start, the highest block's end */
    uint32_t *work;
    size_t nwork;
    const struct reach_reader *rd;
    uint64_t deadline;
    struct reach_stats *st;
    uint8_t *buf;
    enum phase phase;
    size_t leader;
    size_t last; /* the block the latest pointer hit: pointers come in runs into one block (arenas, arrays) */
    /* The blocks' bytes read ahead, in address order, a few large reads
     * for many blocks (a linked list leaves one block on the work list at
     * a time: a read each would be a system call a block); snap_off[i]
     * is block i's offset in snap, NO_SNAP when it was not read ahead. */
    uint8_t *snap;
    uint64_t *snap_off;
    int late;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int past_deadline(struct scan *s)
{
    if (!s->late && s->deadline && now_ns() > s->deadline) {
        s->late = 1;
    }
    return s->late;
}

static uint64_t block_end(const struct reach_block *b)
{
    return b->addr + (b->size ? b->size : 1);
}

/* The first block whose end lies above `a`, or n. */
static size_t first_ending_above(const struct scan *s, uint64_t a)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (block_end(&s->b[mid]) <= a) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static void push(struct scan *s, size_t i, uint8_t cls)
{
    s->b[i].cls = cls;
    s->work[s->nwork++] = (uint32_t)i;
}

/* A word that may point into the heap. */
static void hit(struct scan *s, uint64_t w)
{
    size_t i = s->last;
    if (w < s->b[i].addr || w >= block_end(&s->b[i])) {
        i = first_ending_above(s, w);
        if (i == s->n || w < s->b[i].addr) {
            return;
        }
        s->last = i;
    }
    struct reach_block *b = &s->b[i];
    switch (s->phase) {
    case PH_REACH:
        if (b->cls != REACH_UNMARKED) {
            return;
        }
        if (w == b->addr) {
            push(s, i, REACH_REACHABLE);
        } else {
            b->hit_inside = 1;
        }
        break;
    case PH_POSSIBLE:
        if (b->cls == REACH_UNMARKED) {
            push(s, i, REACH_POSSIBLE);
        }
        break;
    case PH_LEAK:
        if (b->cls == REACH_UNMARKED) {
            push(s, i, REACH_INDIRECT);
        } else if (b->cls == REACH_DIRECT && i != s->leader) {
            /* The head of an earlier group is pointed to from this one:
             * its group joins this one (already read: not pushed). */
            b->cls = REACH_INDIRECT;
        }
        break;
    }
}

static void scan_words(struct scan *s, const uint8_t *p, size_t len)
{
    for (size_t off = 0; off + WORD <= len; off += WORD) {
        uint64_t w;
        memcpy(&w, p + off, WORD);
        if (w >= s->lo && w < s->hi) {
            hit(s, w);
        }
    }
}

/* Read and scan [start, end) of the program, in chunks; what cannot be
 * read is skipped a page at a time and counted. */
static void scan_remote(struct scan *s, uint64_t start, uint64_t end, uint64_t *counter)
{
    start = (start + WORD - 1) & ~(uint64_t)(WORD - 1);
    while (start + WORD <= end && !past_deadline(s)) {
        size_t want = end - start < READ_CHUNK ? (size_t)(end - start) : READ_CHUNK;
        struct iovec l = {s->buf, want}, r = {(void *)(uintptr_t)start, want};
        ssize_t k = s->rd->readv(s->rd->ctx, &l, &r, 1);
        size_t got = k > 0 ? (size_t)k : 0;
        scan_words(s, s->buf, got);
        *counter += got;
        start += got;
        if (got < want) {
            uint64_t next = (start | 4095u) + 1;
            next = next < end ? next : end;
            s->st->unreadable_bytes += next - start;
            start = next;
        }
    }
}

/* Read and scan the blocks on the work list until it is empty, many
 * small blocks to a call. */
static void drain(struct scan *s)
{
    static struct iovec local[BATCH_MAX], remote[BATCH_MAX];
    uint32_t batch[BATCH_MAX];
    while (s->nwork && !past_deadline(s)) {
        uint32_t top = s->work[s->nwork - 1];
        if (s->snap_off && s->snap_off[top] != NO_SNAP) {
            s->nwork--;
            scan_words(s, s->snap + s->snap_off[top], s->b[top].size);
            s->st->block_bytes += s->b[top].size;
            continue;
        }
        if (s->b[top].size > READ_CHUNK / 2) {
            s->nwork--;
            scan_remote(s, s->b[top].addr, s->b[top].addr + s->b[top].size, &s->st->block_bytes);
            continue;
        }
        size_t nb = 0, bytes = 0;
        while (s->nwork && nb < BATCH_MAX) {
            uint32_t i = s->work[s->nwork - 1];
            if (s->b[i].size > READ_CHUNK / 2 || bytes + s->b[i].size > READ_CHUNK ||
                (s->snap_off && s->snap_off[i] != NO_SNAP)) {
                break;
            }
            s->nwork--;
            local[nb] = (struct iovec){s->buf + bytes, s->b[i].size};
            remote[nb] = (struct iovec){(void *)(uintptr_t)s->b[i].addr, s->b[i].size};
            batch[nb++] = i;
            bytes += s->b[i].size;
        }
        ssize_t k = bytes ? s->rd->readv(s->rd->ctx, local, remote, nb) : 0;
        if (k == (ssize_t)bytes) {
            s->st->block_bytes += bytes;
            for (size_t j = 0; j < nb; j++) {
                scan_words(s, local[j].iov_base, local[j].iov_len);
            }
            continue;
        }
        /* One of them cannot be read: each on its own. */
        for (size_t j = 0; j < nb; j++) {
            const struct reach_block *b = &s->b[batch[j]];
            scan_remote(s, b->addr, b->addr + b->size, &s->st->block_bytes);
        }
    }
}

/* Whether the 64 MiB-aligned mapping at `start` is a heap of a glibc
 * thread arena that holds no live block: its first word (heap_info's
 * ar_ptr) points just past the header of the arena's first heap. Its free
 * chunks hold what freed blocks held: no roots. */
static int arena_heap(struct scan *s, uint64_t start)
{
    uint64_t w = 0;
    struct iovec l = {&w, sizeof w}, r = {(void *)(uintptr_t)start, sizeof w};
    if (s->rd->readv(s->rd->ctx, &l, &r, 1) != (ssize_t)sizeof w) {
        return 0;
    }
    uint64_t off = w & (REACH_ARENA_ALIGN - 1);
    return w && off >= 16 && off < 256;
}

/* Read the blocks ahead into s->snap when their runs take at most
 * `max_bytes`: runs of blocks less than RUN_GAP apart, read whole (at most
 * READ_CHUNK each, a call for up to BATCH_MAX runs). A run that cannot be
 * read whole is left to the reads of the work list. */
static void read_ahead(struct scan *s, uint64_t max_bytes)
{
    uint64_t total = 0;
    for (size_t i = 0; i < s->n;) {
        size_t j = i + 1;
        while (j < s->n && s->b[j].addr - block_end(&s->b[j - 1]) < RUN_GAP &&
               block_end(&s->b[j]) - s->b[i].addr <= READ_CHUNK) {
            j++;
        }
        total += block_end(&s->b[j - 1]) - s->b[i].addr;
        i = j;
    }
    if (total > max_bytes) {
        return;
    }
    s->snap = xmalloc(total ? total : 1);
    s->snap_off = xmalloc(s->n * sizeof *s->snap_off);
    static struct iovec local[BATCH_MAX], remote[BATCH_MAX];
    static size_t first[BATCH_MAX + 1];
    uint64_t at = 0;
    for (size_t i = 0; i < s->n && !past_deadline(s);) {
        size_t nr = 0, k = i;
        while (k < s->n && nr < BATCH_MAX) {
            size_t j = k + 1;
            while (j < s->n && s->b[j].addr - block_end(&s->b[j - 1]) < RUN_GAP &&
                   block_end(&s->b[j]) - s->b[k].addr <= READ_CHUNK) {
                j++;
            }
            uint64_t len = block_end(&s->b[j - 1]) - s->b[k].addr;
            first[nr] = k;
            local[nr] = (struct iovec){s->snap + at, len};
            remote[nr] = (struct iovec){(void *)(uintptr_t)s->b[k].addr, len};
            nr++;
            at += len;
            k = j;
        }
        first[nr] = k;
        ssize_t got = s->rd->readv(s->rd->ctx, local, remote, nr);
        uint64_t done = got > 0 ? (uint64_t)got : 0;
        for (size_t r = 0; r < nr; r++) {
            int whole = done >= local[r].iov_len;
            done = whole ? done - local[r].iov_len : 0;
            for (size_t x = first[r]; x < first[r + 1]; x++) {
                s->snap_off[x] =
                    whole ? (uint64_t)((uint8_t *)local[r].iov_base - s->snap) + (s->b[x].addr - s->b[first[r]].addr)
                          : NO_SNAP;
            }
        }
        i = k;
    }
}

/* A root range, without the words of live blocks when it may hold some. */
static void scan_root(struct scan *s, const struct reach_range *r)
{
    if (r->end <= r->start) {
        return;
    }
    size_t i = first_ending_above(s, r->start);
    int holds_block = i < s->n && s->b[i].addr < r->end;
    if ((r->flags & REACH_RANGE_ARENA) && (holds_block || arena_heap(s, r->start))) {
        return;
    }
    if (!(r->flags & (REACH_RANGE_SKIP_BLOCKS | REACH_RANGE_ARENA)) || !holds_block) {
        scan_remote(s, r->start, r->end, &s->st->root_bytes);
        return;
    }
    uint64_t at = r->start;
    for (; i < s->n && s->b[i].addr < r->end && !s->late; i++) {
        if (s->b[i].addr > at) {
            scan_remote(s, at, s->b[i].addr, &s->st->root_bytes);
        }
        uint64_t e = block_end(&s->b[i]);
        at = e > at ? e : at;
    }
    if (at < r->end) {
        scan_remote(s, at, r->end, &s->st->root_bytes);
    }
}

int reach_classify(struct reach_block *b, size_t n, const struct reach_range *roots, size_t nroots,
                   const uint64_t *words, size_t nwords, const struct reach_reader *rd, uint64_t deadline_ns,
                   uint64_t read_ahead_max, struct reach_stats *st)
{
    memset(st, 0, sizeof *st);
    if (n == 0) {
        return 0;
    }
    struct scan s = {.b = b, .n = n, .rd = rd, .deadline = deadline_ns, .st = st};
    s.lo = b[0].addr;
    s.hi = block_end(&b[n - 1]);
    s.work = xmalloc(n * sizeof *s.work);
    s.buf = xmalloc(READ_CHUNK);
    for (size_t i = 0; i < n; i++) {
        b[i].cls = REACH_UNMARKED;
        b[i].hit_inside = 0;
    }
    read_ahead(&s, read_ahead_max);
    s.phase = PH_REACH;
    for (size_t i = 0; i < nwords; i++) {
        if (words[i] >= s.lo && words[i] < s.hi) {
            hit(&s, words[i]);
        }
    }
    st->root_bytes += nwords * WORD;
    for (size_t i = 0; i < nroots && !past_deadline(&s); i++) {
        scan_root(&s, &roots[i]);
        drain(&s);
    }
    s.phase = PH_POSSIBLE;
    for (size_t i = 0; i < n; i++) {
        if (b[i].cls == REACH_UNMARKED && b[i].hit_inside) {
            push(&s, i, REACH_POSSIBLE);
        }
    }
    drain(&s);
    s.phase = PH_LEAK;
    for (size_t i = 0; i < n && !past_deadline(&s); i++) {
        if (b[i].cls == REACH_UNMARKED) {
            s.leader = i;
            push(&s, i, REACH_DIRECT);
            drain(&s);
        }
    }
    free(s.work);
    free(s.buf);
    free(s.snap);
    free(s.snap_off);
    return s.late ? REACH_E_TIME : 0;
}
