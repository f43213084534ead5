// SPDX-License-Identifier: MIT
/* The read-ahead thread (readahead.h): a ring of slots, each a record or a
 * batch of events, filled by the thread and emptied by the caller in
 * order. One lock, taken once per slot (a few hundred events); a side that
 * waits is woken only once the other has filled (or emptied) half the
 * ring, so that the two do not take turns sleeping at every slot (a wake
 * per slot cost more than the decoding it moved). */
#include "readahead.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "util.h"

/* Slots of the ring, and what a slot holds: the reader's batches end with
 * each EVENTS block (about a hundred events in a recording of a real
 * program), so a slot takes batches until it holds RA_EVENTS events or
 * RA_RECORDS records (a deep tree's recording is millions of NODE
 * records); 8 slots, so that a wake hands over 4 of them, some 16,000
 * events or 500 records. About 2.4 MiB at most, touched as they fill. */
#define RA_SLOTS 8
#define RA_HALF (RA_SLOTS / 2)
#define RA_BATCH 512
#define RA_EVENTS 4096
#define RA_RECORDS 128
#define RA_ITEMS 256

/* One answer of memfmt_read_batch(): events at ev[first..first + n), or
 * (n == 0) the record recs[first] when rc > 0. */
struct ra_item {
    int rc;
    uint32_t first, n;
};

struct ra_slot {
    uint32_t nitems, nev, nrec;
    uint32_t next; /* the caller's next item */
    struct ra_item items[RA_ITEMS];
    struct memfmt_event ev[RA_EVENTS];
    struct memfmt_record recs[RA_RECORDS];
};

struct readahead {
    memfmt_reader *rd;
    int threaded;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct ra_slot *slots;
    uint64_t filled; /* slots the thread has filled, ever */
    uint64_t released; /* slots the caller is done with, ever */
    int holding; /* the caller holds slot `released` (returned, not released yet) */
    int reader_waits; /* the thread sleeps: for room, or for the caller to pass a record */
    int caller_waits; /* the caller sleeps, for a slot */
    int stop; /* the caller wants no more */
    int ended; /* the caller was given rc <= 0: that rc again from now on */
    int end_rc;
};

/* Whether a record read into a slot stays valid once the reader moves on:
 * the tags whose fields are all values. Any other tag (pointers into the
 * reader's buffers, or a tag unknown here) waits for the caller. */
static int by_value(unsigned tag)
{
    switch (tag) {
    case MEMFMT_REC_UNMODULE:
    case MEMFMT_REC_THREAD:
    case MEMFMT_REC_NODE:
    case MEMFMT_REC_TIME:
    case MEMFMT_REC_RSS:
    case MEMFMT_REC_END:
    case MEMFMT_REC_STATS:
    case MEMFMT_REC_COUNTS:
    case MEMFMT_REC_MAP:
    case MEMFMT_REC_BASELINE:
    case MEMFMT_REC_HEAPINFO:
    case MEMFMT_REC_THREAD_TIMES:
    case MEMFMT_REC_PACK_FRAMES:
    case MEMFMT_REC_LOST:
    case MEMFMT_REC_LAYOUT:
    case MEMFMT_REC_ALLOC:
    case MEMFMT_REC_FREE:
    case MEMFMT_REC_REALLOC: return 1;
    default: return 0;
    }
}

/* Fill `s` from the reader until it is full, the data end, or a record
 * that must wait for the caller (*wait set). Returns the last item's rc. */
static int read_slot(memfmt_reader *rd, struct ra_slot *s, int *wait)
{
    s->nitems = s->nev = s->nrec = s->next = 0;
    *wait = 0;
    for (;;) {
        struct ra_item *it = &s->items[s->nitems++];
        size_t n = 0;
        it->rc = memfmt_read_batch(rd, &s->recs[s->nrec], s->ev + s->nev, RA_BATCH, &n);
        it->n = (uint32_t)n;
        if (it->rc > 0 && n > 0) {
            it->first = s->nev;
            s->nev += (uint32_t)n;
        } else if (it->rc > 0) {
            it->first = s->nrec++;
            *wait = !by_value(s->recs[it->first].tag);
        }
        if (it->rc <= 0 || *wait || s->nitems == RA_ITEMS || s->nrec == RA_RECORDS || s->nev + RA_BATCH > RA_EVENTS) {
            return it->rc;
        }
    }
}

static void *run(void *arg)
{
    struct readahead *ra = arg;
    pthread_mutex_lock(&ra->mu);
    for (;;) {
        while (ra->filled - ra->released >= RA_SLOTS && !ra->stop) {
            ra->reader_waits = 1;
            pthread_cond_wait(&ra->cv, &ra->mu);
            ra->reader_waits = 0;
        }
        if (ra->stop) {
            break;
        }
        struct ra_slot *s = &ra->slots[ra->filled % RA_SLOTS];
        /* The slot is free (the caller released it) and only this thread
         * touches the reader: read without the lock. */
        pthread_mutex_unlock(&ra->mu);
        int wait;
        int rc = read_slot(ra->rd, s, &wait);
        pthread_mutex_lock(&ra->mu);
        ra->filled++;
        if (ra->caller_waits && (ra->filled - ra->released >= RA_HALF || rc <= 0 || wait)) {
            pthread_cond_broadcast(&ra->cv);
        }
        if (rc <= 0) {
            break;
        }
        /* The record points into the reader: no further read until the
         * caller has moved past it. */
        while (wait && ra->released < ra->filled && !ra->stop) {
            ra->reader_waits = 1;
            pthread_cond_wait(&ra->cv, &ra->mu);
            ra->reader_waits = 0;
        }
    }
    pthread_mutex_unlock(&ra->mu);
    return NULL;
}

struct readahead *readahead_new(memfmt_reader *rd)
{
    struct readahead *ra = xcalloc(1, sizeof *ra);
    ra->rd = rd;
    ra->slots = xmalloc(RA_SLOTS * sizeof *ra->slots);
    pthread_mutex_init(&ra->mu, NULL);
    pthread_cond_init(&ra->cv, NULL);
    ra->threaded = pthread_create(&ra->th, NULL, run, ra) == 0;
    return ra;
}

/* The caller's next item of slot `s`. */
static int give(struct readahead *ra, struct ra_slot *s, const struct memfmt_record **rec,
                const struct memfmt_event **ev, size_t *n)
{
    const struct ra_item *it = &s->items[s->next++];
    if (it->rc <= 0) {
        ra->ended = 1;
        ra->end_rc = it->rc;
        return it->rc;
    }
    if (it->n > 0) {
        *ev = s->ev + it->first;
        *n = it->n;
    } else {
        *rec = &s->recs[it->first];
    }
    return it->rc;
}

int readahead_next(struct readahead *ra, const struct memfmt_record **rec, const struct memfmt_event **ev, size_t *n)
{
    *n = 0;
    if (ra->ended) {
        return ra->end_rc;
    }
    struct ra_slot *s = ra->holding ? &ra->slots[ra->released % RA_SLOTS] : NULL;
    if (s && s->next < s->nitems) {
        return give(ra, s, rec, ev, n);
    }
    if (!ra->threaded) {
        int wait;
        s = &ra->slots[0];
        read_slot(ra->rd, s, &wait);
        ra->holding = 1; /* released stays 0: slot 0 again next time */
    } else {
        pthread_mutex_lock(&ra->mu);
        if (ra->holding) {
            ra->released++;
            ra->holding = 0;
            /* Room for half the ring, or the record it waits on passed. */
            if (ra->reader_waits && (RA_SLOTS - (ra->filled - ra->released) >= RA_HALF || ra->released == ra->filled)) {
                pthread_cond_broadcast(&ra->cv);
            }
        }
        while (ra->filled == ra->released) {
            ra->caller_waits = 1;
            pthread_cond_wait(&ra->cv, &ra->mu);
            ra->caller_waits = 0;
        }
        s = &ra->slots[ra->released % RA_SLOTS];
        ra->holding = 1;
        pthread_mutex_unlock(&ra->mu);
    }
    return give(ra, s, rec, ev, n);
}

void readahead_free(struct readahead *ra)
{
    if (!ra) {
        return;
    }
    if (ra->threaded) {
        pthread_mutex_lock(&ra->mu);
        ra->stop = 1;
        pthread_cond_broadcast(&ra->cv);
        pthread_mutex_unlock(&ra->mu);
        pthread_join(ra->th, NULL);
    }
    pthread_cond_destroy(&ra->cv);
    pthread_mutex_destroy(&ra->mu);
    free(ra->slots);
    free(ra);
}
