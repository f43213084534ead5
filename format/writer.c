// SPDX-License-Identifier: MIT
/* The zstd-compressed file's streaming writer, for memrec. It flushes on
 * request so that a file cut short still decodes up to its last flush.
 * Never linked into the recorder. */
#include "memfmt.h"
#include "memfmt_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

/* ---- writer ---- */

#define WRITER_IN_CAP (256u << 10)

struct memfmt_writer {
    int fd;
    int failed; /* sticky status after an error */
    int saved_errno;
    ZSTD_CCtx *cctx;
    uint8_t *in;
    size_t in_len;
    uint8_t *out;
    size_t out_cap;
    uint64_t written;
    /* The open EVENTS block, column by column (version 2 layout): each
     * column has room for a whole block; col[c] is where it goes on. */
    uint8_t *col_start[MEMFMT_NCOLS];
    uint8_t *col[MEMFMT_NCOLS];
    struct memfmt_evstate ev;
};

static int write_all(memfmt_writer *w, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(w->fd, p, n);
        if (k < 0) {
            if (errno == EINTR) {
                continue;
            }
            w->saved_errno = errno;
            return MEMFMT_E_IO;
        }
        p += k;
        n -= (size_t)k;
        w->written += (uint64_t)k;
    }
    return 0;
}

/* Feed `n` bytes at `p` to zstd with `op` and write what comes out. */
static int compress_bytes(memfmt_writer *w, const uint8_t *p, size_t n, ZSTD_EndDirective op)
{
    if (w->failed) {
        return w->failed;
    }
    ZSTD_inBuffer in = {p, n, 0};
    for (;;) {
        ZSTD_outBuffer out = {w->out, w->out_cap, 0};
        size_t left = ZSTD_compressStream2(w->cctx, &out, &in, op);
        if (ZSTD_isError(left)) {
            w->failed = MEMFMT_E_ZSTD;
            return w->failed;
        }
        int rc = write_all(w, w->out, out.pos);
        if (rc < 0) {
            w->failed = rc;
            return rc;
        }
        int done = (op == ZSTD_e_continue) ? in.pos == in.size : left == 0;
        if (done) {
            break;
        }
    }
    return 0;
}

/* Feed the pending input to zstd with `op` and write what comes out. */
static int compress_pending(memfmt_writer *w, ZSTD_EndDirective op)
{
    int rc = compress_bytes(w, w->in, w->in_len, op);
    if (rc == 0) {
        w->in_len = 0;
    }
    return rc;
}

/* Bytes in all columns of the open EVENTS block. */
static size_t block_bytes(const memfmt_writer *w)
{
    size_t n = 0;
    for (int c = 0; c < MEMFMT_NCOLS; c++) {
        n += (size_t)(w->col[c] - w->col_start[c]);
    }
    return n;
}

/* Move the open EVENTS block, if any, into the pending input. */
static int close_block(memfmt_writer *w)
{
    size_t bytes = block_bytes(w);
    if (!bytes) {
        return 0;
    }
    size_t len[MEMFMT_NCOLS];
    for (int c = 0; c < MEMFMT_NCOLS; c++) {
        len[c] = (size_t)(w->col[c] - w->col_start[c]);
    }
    if (WRITER_IN_CAP - w->in_len < 1 + MEMFMT_VARINT_MAX + MEMFMT_EVENTS_HEAD_MAX + bytes) {
        int rc = compress_pending(w, ZSTD_e_continue);
        if (rc < 0) {
            return rc;
        }
    }
    /* The payload is written after a length of the most bytes it can take,
     * then moved up to its real length's end. */
    uint8_t *rec = w->in + w->in_len;
    uint8_t *payload = rec + 1 + MEMFMT_VARINT_MAX;
    size_t n = memfmt_event_block_write(payload, w->col_start, len, &w->ev);
    rec[0] = MEMFMT_REC_EVENTS;
    size_t k = memfmt_put_varint(rec + 1, n);
    memmove(rec + 1 + k, payload, n);
    w->in_len += 1 + k + n;
    for (int c = 0; c < MEMFMT_NCOLS; c++) {
        w->col[c] = w->col_start[c];
    }
    return 0;
}

memfmt_writer *memfmt_writer_new(int fd, const struct memfmt_header *hdr, int level, int *rc)
{
    memfmt_writer *w = calloc(1, sizeof *w);
    if (!w) {
        *rc = MEMFMT_E_NOMEM;
        return NULL;
    }
    w->fd = fd;
    w->cctx = ZSTD_createCCtx();
    w->in = malloc(WRITER_IN_CAP);
    w->out_cap = ZSTD_CStreamOutSize();
    w->out = malloc(w->out_cap);
    int cols_ok = 1;
    for (int c = 0; c < MEMFMT_NCOLS; c++) {
        w->col[c] = w->col_start[c] = malloc(MEMFMT_EVENTS_MAX);
        cols_ok &= w->col[c] != NULL;
    }
    if (!w->cctx || !w->in || !w->out || !cols_ok) {
        memfmt_writer_free(w);
        *rc = MEMFMT_E_NOMEM;
        return NULL;
    }
    ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);

    uint8_t *h = w->in;
    memcpy(h, MEMFMT_MAGIC, MEMFMT_MAGIC_LEN);
    h[8] = (uint8_t)(hdr->version & 0xff);
    h[9] = (uint8_t)(hdr->version >> 8);
    h[10] = hdr->pointer_size;
    h[11] = hdr->little_endian;
    for (int i = 0; i < 4; i++) {
        h[12 + i] = (uint8_t)(hdr->flags >> (8 * i));
    }
    w->in_len = MEMFMT_HEADER_LEN;
    memfmt_evstate_layout(&w->ev, hdr->version, hdr->flags);
    *rc = 0;
    return w;
}

static int write_event(memfmt_writer *w, const struct memfmt_record *rec)
{
    if (block_bytes(w) + MEMFMT_EVENT_MAX + MEMFMT_EVENTS_HEAD_MAX > MEMFMT_EVENTS_MAX) {
        int rc = close_block(w);
        if (rc < 0) {
            return rc;
        }
    }
    return memfmt_event_encode(&w->ev, rec, w->col);
}

int memfmt_write(memfmt_writer *w, const struct memfmt_record *rec)
{
    if (w->failed) {
        return w->failed;
    }
    if (rec->tag == MEMFMT_REC_ALLOC || rec->tag == MEMFMT_REC_FREE || rec->tag == MEMFMT_REC_REALLOC) {
        return write_event(w, rec);
    }
    int rc0 = close_block(w);
    if (rc0 < 0) {
        return rc0;
    }
    if (WRITER_IN_CAP - w->in_len < 64) {
        int rc = compress_pending(w, ZSTD_e_continue);
        if (rc < 0) {
            return rc;
        }
    }
    int n = memfmt_encode(rec, w->in + w->in_len, WRITER_IN_CAP - w->in_len);
    if (n == MEMFMT_E_TOOBIG && w->in_len > 0) {
        int rc = compress_pending(w, ZSTD_e_continue);
        if (rc < 0) {
            return rc;
        }
        n = memfmt_encode(rec, w->in, WRITER_IN_CAP);
    }
    if (n < 0) {
        return n; /* a record that can never fit is the caller's error, not sticky */
    }
    w->in_len += (size_t)n;
    return 0;
}

int memfmt_write_raw(memfmt_writer *w, const uint8_t *rec, size_t len)
{
    if (w->failed) {
        return w->failed;
    }
    /* Any tag but 0: a record of a kind this build does not know (a
     * newer writer's, tags 64 and up too) is copied as it is, as readers
     * skip it. */
    if (len == 0 || rec[0] == 0) {
        return MEMFMT_E_INVALID;
    }
    int rc = close_block(w);
    if (rc < 0) {
        return rc;
    }
    if (WRITER_IN_CAP - w->in_len < len) {
        rc = compress_pending(w, ZSTD_e_continue);
        if (rc < 0) {
            return rc;
        }
    }
    if (len > WRITER_IN_CAP) {
        /* Larger than the input buffer (records go up to 1 MiB): straight to zstd. */
        return compress_bytes(w, rec, len, ZSTD_e_continue);
    }
    memcpy(w->in + w->in_len, rec, len);
    w->in_len += len;
    return 0;
}

int memfmt_writer_flush(memfmt_writer *w)
{
    int rc = close_block(w);
    return rc < 0 ? rc : compress_pending(w, ZSTD_e_flush);
}

int memfmt_writer_finish(memfmt_writer *w)
{
    int rc = close_block(w);
    return rc < 0 ? rc : compress_pending(w, ZSTD_e_end);
}

uint64_t memfmt_writer_bytes(const memfmt_writer *w)
{
    return w->written;
}

int memfmt_writer_errno(const memfmt_writer *w)
{
    return w->saved_errno;
}

void memfmt_writer_free(memfmt_writer *w)
{
    if (!w) {
        return;
    }
    ZSTD_freeCCtx(w->cctx);
    memfmt_evstate_release(&w->ev);
    for (int c = 0; c < MEMFMT_NCOLS; c++) {
        free(w->col_start[c]);
    }
    free(w->in);
    free(w->out);
    free(w);
}
