// SPDX-License-Identifier: MIT
/* Reading a recording on the second core: a thread of its own calls
 * memfmt_read_batch() (decompression, records, the decoding of the event
 * columns) a few batches ahead of the caller, which applies them. The
 * caller gets exactly what memfmt_read_batch() would have given it, in
 * the same order, with the same errors: only the work moves. Never prints. */
#ifndef READAHEAD_H
#define READAHEAD_H

#include <stddef.h>

#include "memfmt.h"

/*
 * How to use (in place of a memfmt_read_batch() loop on `rd`):
 *
 *     struct readahead *ra = readahead_new(rd);
 *     const struct memfmt_record *rec;
 *     const struct memfmt_event *ev;
 *     size_t n;
 *     while ((rc = readahead_next(ra, &rec, &ev, &n)) > 0) {
 *         ... n > 0: events ev[0..n); n == 0: the record *rec ...
 *     }
 *     readahead_free(ra);   // before memfmt_reader_offset(rd) or freeing rd
 *
 * Until readahead_free(), only the thread touches `rd`. A record whose
 * fields point into the reader's buffers (PROCESS, MODULE, PACK_STRING, and
 * any tag this file does not know) holds the thread back until the caller
 * has moved past it, so that every record stays valid until the next call,
 * as with the reader itself.
 */
struct readahead;

/** Start reading `rd` ahead (the caller keeps owning it). Without a
 * thread (pthread_create failed) the calls read in the caller's thread:
 * the same results. Never NULL. */
struct readahead *readahead_new(memfmt_reader *rd);
/** The next batch of events (*n > 0, *ev) or record (*n == 0, *rec), valid
 * until the next call. Returns as memfmt_read_batch(): 1, 0 at the end of
 * the data, < 0 for an error (and the same at every later call). */
int readahead_next(struct readahead *ra, const struct memfmt_record **rec, const struct memfmt_event **ev, size_t *n);
/** Stop the thread (at once, however far it read) and release; the reader
 * is the caller's again. Accepts NULL. */
void readahead_free(struct readahead *ra);

#endif
