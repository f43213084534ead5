// SPDX-License-Identifier: MIT
/* The zstd-compressed file's incremental reader, for the analyzer: a
 * decompressing thread runs ahead of the record decoding. It reports where
 * the data stops instead of failing silently. Never linked into the
 * recorder. */
#include "memfmt.h"
#include "memfmt_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

/* ---- reader ---- */

#define READER_SLICE 4096

/* The decoded window holds at least one whole record of the maximum size.
 * It starts small and grows to READER_RAW_CAP only when a record needs it:
 * most files are small, and a fresh 2.3 MiB buffer per file costs page
 * faults (the fuzz targets open thousands of files a second). */
#define READER_RAW_CAP (2 * MEMFMT_MAX_RECORD + (256u << 10))
#define READER_RAW_START (256u << 10)

/* Files up to this size are decompressed without a thread: starting one
 * costs more than the overlap saves. */
#define READER_THREAD_MIN (1u << 20)

/* Decompression runs ahead in a thread of its own, so that zstd (15-20% of
 * an analysis) overlaps the decoding of the records: it hands over pieces
 * of decompressed bytes through a ring of PIECES buffers. Without a thread
 * (pthread_create failed), the reader makes each piece itself when it
 * needs one. Either way the bytes, statuses and offsets are the same. */
#define PIECE_CAP (128u << 10)
#define PIECES 4

/* What decompresses: the file, zstd and its progress. Owned by the
 * decompressing thread while it runs. */
struct inflater {
    int fd;
    int saved_errno;
    ZSTD_DStream *dctx;
    uint8_t *zin; /* compressed input */
    size_t zin_cap;
    size_t piece_cap; /* PIECE_CAP, or less for a small file */
    ZSTD_inBuffer zbuf;
    int file_eof;
    size_t frame_left; /* last ZSTD_decompressStream hint: 0 = frame complete */
    int seen_frame;
    int magic_ok; /* the file starts like zstd: later errors are corruption */
    int zerr; /* a status, given after the data decoded before it */
};

/* Decompressed bytes (rc 1), or the end: 0 clean, < 0 a status. */
struct piece {
    uint8_t *data;
    size_t len;
    int rc;
    int saved_errno;
};

struct memfmt_reader {
    int own_fd;
    int saved_errno;
    struct inflater z;
    struct piece pieces[PIECES];
    int threaded;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned made, taken; /* pieces handed over and taken back, counting on */
    int stop;
    struct piece *cur; /* the piece being copied into the window, or NULL */
    size_t cur_pos;
    int ended; /* a piece with rc <= 0 was taken: end_rc from now on */
    int end_rc;
    uint8_t *raw; /* decompressed window */
    size_t raw_cap; /* up to READER_RAW_CAP */
    size_t raw_start, raw_end;
    uint64_t raw_base; /* stream offset of raw[0] */
    struct memfmt_header hdr;
    const uint8_t *blk; /* the EVENTS block being read (inside raw), or NULL */
    int ev_err; /* a bad event found after events memfmt_read_batch() handed out first */
    struct memfmt_evstate ev;
};

/* Read more compressed bytes. Returns 0, or MEMFMT_E_IO. */
static int fill_zin(struct inflater *z)
{
    if (z->zbuf.pos < z->zbuf.size || z->file_eof) {
        return 0;
    }
    for (;;) {
        ssize_t k = read(z->fd, z->zin, z->zin_cap);
        if (k < 0) {
            if (errno == EINTR) {
                continue;
            }
            z->saved_errno = errno;
            return MEMFMT_E_IO;
        }
        if (k == 0) {
            z->file_eof = 1;
        }
        z->zbuf.src = z->zin;
        z->zbuf.size = (size_t)k;
        z->zbuf.pos = 0;
        return 0;
    }
}

/* Decompress more at dst + *len (room up to cap). Returns 1 when bytes
 * were added, 0 at the clean end of input, or a negative status; a status
 * found after some bytes decoded is kept and given at the next call. */
static int inflate_some(struct inflater *z, uint8_t *dst, size_t cap, size_t *len)
{
    if (z->zerr) {
        return z->zerr;
    }
    for (;;) {
        int rc = fill_zin(z);
        if (rc < 0) {
            z->zerr = rc;
            return rc;
        }
        if (z->zbuf.pos == z->zbuf.size && z->file_eof) {
            if (!z->seen_frame) {
                return MEMFMT_E_EMPTY;
            }
            return z->frame_left == 0 ? 0 : MEMFMT_E_TRUNCATED;
        }
        if (z->zbuf.pos == 0 && !z->seen_frame && !z->magic_ok && z->zbuf.size >= 4) {
            /* Check the zstd magic before handing arbitrary bytes to zstd,
             * so "not a recording" is told apart from "corrupt". A skippable
             * frame (magic 0x184D2A50-0x184D2A5F) may come first, as zstd
             * allows. */
            const uint8_t *m = z->zin;
            int zstd_frame = m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd;
            int skippable = (m[0] & 0xf0) == 0x50 && m[1] == 0x2a && m[2] == 0x4d && m[3] == 0x18;
            if (!zstd_frame && !skippable) {
                z->zerr = MEMFMT_E_NOT_MEMREC;
                return z->zerr;
            }
            z->magic_ok = 1;
        }
        ZSTD_outBuffer out = {dst, cap, *len};
        /* Small slices: when zstd finds corruption, what it decoded in the
         * same call is lost, so keep each call's share of the data small. */
        ZSTD_inBuffer slice = {z->zbuf.src, z->zbuf.size, z->zbuf.pos};
        if (slice.size - slice.pos > READER_SLICE) {
            slice.size = slice.pos + READER_SLICE;
        }
        size_t ret = ZSTD_decompressStream(z->dctx, &out, &slice);
        z->zbuf.pos = slice.pos;
        if (ZSTD_isError(ret)) {
            z->zerr = z->seen_frame || z->magic_ok ? MEMFMT_E_CORRUPT : MEMFMT_E_NOT_MEMREC;
            if (ZSTD_getErrorCode(ret) == ZSTD_error_frameParameter_windowTooLarge) {
                z->zerr = MEMFMT_E_WINDOW;
            }
            if (out.pos > *len) {
                *len = out.pos; /* hand out what did decode first */
                return 1;
            }
            return z->zerr;
        }
        z->seen_frame = 1;
        z->frame_left = ret;
        if (out.pos > *len) {
            *len = out.pos;
            return 1;
        }
    }
}

/* Fill piece p: at least half of it, or up to the end of the data. */
static void make_piece(struct inflater *z, struct piece *p)
{
    p->len = 0;
    int rc = 1;
    while (p->len < z->piece_cap / 2 && (rc = inflate_some(z, p->data, z->piece_cap, &p->len)) > 0) {
    }
    p->rc = p->len > 0 ? 1 : rc;
    p->saved_errno = z->saved_errno;
}

static void *inflate_main(void *arg)
{
    memfmt_reader *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        while (!r->stop && r->made - r->taken == PIECES) {
            pthread_cond_wait(&r->cv, &r->mu);
        }
        int stop = r->stop;
        unsigned slot = r->made % PIECES;
        pthread_mutex_unlock(&r->mu);
        if (stop) {
            return NULL;
        }
        struct piece *p = &r->pieces[slot];
        make_piece(&r->z, p);
        pthread_mutex_lock(&r->mu);
        r->made++;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        if (p->rc <= 0) {
            return NULL; /* the end: nothing more to make */
        }
    }
}

/* The next piece, made by the thread or here. */
static struct piece *take_piece(memfmt_reader *r)
{
    if (!r->threaded) {
        make_piece(&r->z, &r->pieces[0]);
        return &r->pieces[0];
    }
    pthread_mutex_lock(&r->mu);
    while (r->made == r->taken) {
        pthread_cond_wait(&r->cv, &r->mu);
    }
    struct piece *p = &r->pieces[r->taken % PIECES];
    pthread_mutex_unlock(&r->mu);
    return p;
}

static void give_back_piece(memfmt_reader *r)
{
    if (!r->threaded) {
        return;
    }
    pthread_mutex_lock(&r->mu);
    r->taken++;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* Move decompressed bytes into the window. Returns > 0 when bytes were
 * added, 0 at the clean end of input, or a negative status. */
static int refill(memfmt_reader *r)
{
    if (r->raw_start > 0) {
        size_t keep = r->raw_end - r->raw_start;
        memmove(r->raw, r->raw + r->raw_start, keep);
        r->raw_base += r->raw_start;
        r->raw_start = 0;
        r->raw_end = keep;
    }
    if (r->ended) {
        return r->end_rc;
    }
    if (!r->cur) {
        r->cur = take_piece(r);
        r->cur_pos = 0;
        r->saved_errno = r->cur->saved_errno;
        if (r->cur->rc <= 0) {
            r->ended = 1;
            r->end_rc = r->cur->rc;
            r->cur = NULL;
            return r->end_rc;
        }
    }
    if (r->raw_end == r->raw_cap && r->raw_cap < READER_RAW_CAP) {
        /* No block is being read here (next_record() cleared it): nothing
         * points into the window. */
        size_t ncap = r->raw_cap * 2 < READER_RAW_CAP ? r->raw_cap * 2 : READER_RAW_CAP;
        uint8_t *nraw = realloc(r->raw, ncap);
        if (!nraw) {
            return MEMFMT_E_NOMEM;
        }
        r->raw = nraw;
        r->raw_cap = ncap;
    }
    size_t room = r->raw_cap - r->raw_end;
    if (room == 0) {
        return MEMFMT_E_TOOBIG; /* a record larger than the window */
    }
    size_t n = r->cur->len - r->cur_pos;
    n = n < room ? n : room;
    memcpy(r->raw + r->raw_end, r->cur->data + r->cur_pos, n);
    r->raw_end += n;
    r->cur_pos += n;
    if (r->cur_pos == r->cur->len) {
        r->cur = NULL;
        give_back_piece(r);
    }
    return 1;
}

/* After a decode that stopped at `n`: 1 when the window got more bytes and
 * the decode should be tried again, else what the caller returns — `n`
 * itself for anything but a record cut by the window's end, 0 at the clean
 * end of the data, TRUNCATED when bytes of a cut record are left over, or
 * the refill's error. */
static int refill_after(memfmt_reader *r, int n)
{
    if (n != MEMFMT_E_TRUNCATED) {
        return n;
    }
    int rc = refill(r);
    if (rc == 0) {
        /* Clean end of the compressed data: leftover bytes are a cut record. */
        return r->raw_end > r->raw_start ? MEMFMT_E_TRUNCATED : 0;
    }
    return rc < 0 ? rc : 1;
}

static int read_header(memfmt_reader *r)
{
    while (r->raw_end < MEMFMT_HEADER_LEN) {
        int rc = refill(r);
        /* What did arrive must at least start like our magic. */
        if (rc <= 0 && r->raw_end > 0 &&
            memcmp(r->raw, MEMFMT_MAGIC, r->raw_end < MEMFMT_MAGIC_LEN ? r->raw_end : MEMFMT_MAGIC_LEN) != 0) {
            return MEMFMT_E_NOT_MEMREC;
        }
        if (rc == 0) {
            return r->raw_end == 0 ? MEMFMT_E_EMPTY : MEMFMT_E_TRUNCATED;
        }
        if (rc < 0) {
            return rc;
        }
    }
    const uint8_t *h = r->raw;
    if (memcmp(h, MEMFMT_MAGIC, MEMFMT_MAGIC_LEN) != 0) {
        return MEMFMT_E_NOT_MEMREC;
    }
    r->hdr.version = (uint16_t)(h[8] | (h[9] << 8));
    r->hdr.pointer_size = h[10];
    r->hdr.little_endian = h[11];
    r->hdr.flags = (uint32_t)h[12] | ((uint32_t)h[13] << 8) | ((uint32_t)h[14] << 16) | ((uint32_t)h[15] << 24);
    if (r->hdr.version == 0) {
        return MEMFMT_E_CORRUPT;
    }
    if (r->hdr.version > MEMFMT_VERSION) {
        return MEMFMT_E_VERSION;
    }
    r->raw_start = MEMFMT_HEADER_LEN;
    memfmt_evstate_layout(&r->ev, r->hdr.version, r->hdr.flags);
    return 0;
}

memfmt_reader *memfmt_reader_open_fd(int fd, int *rc)
{
    memfmt_reader *r = calloc(1, sizeof *r);
    if (!r) {
        *rc = MEMFMT_E_NOMEM;
        return NULL;
    }
    r->z.fd = fd;
    r->z.dctx = ZSTD_createDStream();
    struct stat st;
    int is_small = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= (off_t)READER_THREAD_MIN;
    /* A small file gets small buffers: fresh large ones cost page faults
     * (the fuzz targets open thousands of files a second). */
    r->z.zin_cap = ZSTD_DStreamInSize();
    r->z.piece_cap = PIECE_CAP;
    if (is_small && (size_t)st.st_size + 1 < r->z.zin_cap) {
        r->z.zin_cap = (size_t)st.st_size < 4096 ? 4096 : (size_t)st.st_size + 1;
        r->z.piece_cap = 32u << 10;
    }
    r->z.zin = malloc(r->z.zin_cap);
    r->raw_cap = is_small ? READER_RAW_START / 4 : READER_RAW_START;
    r->raw = malloc(r->raw_cap);
    int want_thread = !is_small;
    int pieces_ok = 1;
    for (int i = 0; i < (want_thread ? PIECES : 1); i++) {
        r->pieces[i].data = malloc(r->z.piece_cap);
        pieces_ok &= r->pieces[i].data != NULL;
    }
    if (!r->z.dctx || !r->z.zin || !r->raw || !pieces_ok ||
        ZSTD_isError(ZSTD_DCtx_setParameter(r->z.dctx, ZSTD_d_windowLogMax, MEMFMT_MAX_WINDOW_LOG))) {
        memfmt_reader_free(r);
        *rc = MEMFMT_E_NOMEM;
        return NULL;
    }
    r->z.zbuf.src = r->z.zin;
    if (want_thread) {
        pthread_mutex_init(&r->mu, NULL);
        pthread_cond_init(&r->cv, NULL);
        r->threaded = pthread_create(&r->thread, NULL, inflate_main, r) == 0;
        if (!r->threaded) {
            pthread_mutex_destroy(&r->mu);
            pthread_cond_destroy(&r->cv);
        }
    }
    *rc = read_header(r);
    if (*rc < 0) {
        int e = r->saved_errno; /* the read failed in the decompressing thread */
        memfmt_reader_free(r);
        errno = e;
        return NULL;
    }
    return r;
}

memfmt_reader *memfmt_reader_open(const char *path, int *rc)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *rc = MEMFMT_E_IO;
        return NULL;
    }
    memfmt_reader *r = memfmt_reader_open_fd(fd, rc);
    if (!r) {
        int e = errno;
        close(fd);
        errno = e;
        return NULL;
    }
    r->own_fd = 1;
    return r;
}

const struct memfmt_header *memfmt_reader_header(const memfmt_reader *r)
{
    return &r->hdr;
}

/* The next record after the EVENTS block being read, if any. Returns 1
 * with a record; for an EVENTS record, its block is entered (r->blk) and
 * the caller decodes it. 0 at the clean end, or a negative status. */
static int next_record(memfmt_reader *r, struct memfmt_record *rec)
{
    r->blk = NULL;
    for (;;) {
        int n = MEMFMT_E_TRUNCATED;
        if (r->raw_end > r->raw_start) {
            n = memfmt_decode(r->raw + r->raw_start, r->raw_end - r->raw_start, rec);
        }
        if (n > 0 && rec->tag == MEMFMT_REC_EVENTS) {
            /* Enter the block: its payload ends the record. The window is
             * not moved (refill) while a block is being read. */
            const uint8_t *p = r->raw + r->raw_start + 1;
            uint64_t plen;
            memfmt_get_varint(&p, r->raw + r->raw_end, &plen);
            if (memfmt_event_block(&r->ev, p, (size_t)plen, r->hdr.version) < 0) {
                return MEMFMT_E_CORRUPT;
            }
            r->blk = p;
            r->raw_start += (size_t)n;
            return 1;
        }
        if (n > 0 && (rec->tag == MEMFMT_REC_ALLOC || rec->tag == MEMFMT_REC_FREE || rec->tag == MEMFMT_REC_REALLOC)) {
            return MEMFMT_E_CORRUPT; /* events exist only inside blocks */
        }
        if (n > 0) {
            r->raw_start += (size_t)n;
            return 1;
        }
        int rc = refill_after(r, n);
        if (rc != 1) {
            return rc;
        }
    }
}

int memfmt_read(memfmt_reader *r, struct memfmt_record *rec)
{
    if (r->ev_err) {
        return r->ev_err;
    }
    for (;;) {
        if (r->blk) {
            int rc = memfmt_event_decode(&r->ev, rec);
            if (rc != 0) {
                return rc;
            }
        }
        int rc = next_record(r, rec);
        if (rc <= 0 || rec->tag != MEMFMT_REC_EVENTS) {
            return rc;
        }
    }
}

int memfmt_read_batch(memfmt_reader *r, struct memfmt_record *rec, struct memfmt_event *evs, size_t cap, size_t *n)
{
    *n = 0;
    if (r->ev_err) {
        return r->ev_err;
    }
    for (;;) {
        if (r->blk) {
            int rc = memfmt_event_decode_batch(&r->ev, evs, cap, n);
            if (rc < 0) {
                /* Hand out the events before the bad operation first; the
                 * decoder stays where it stopped, for the offset. */
                r->ev_err = rc;
                if (*n == 0) {
                    return rc;
                }
            }
            if (*n > 0) {
                rec->tag = MEMFMT_REC_EVENTS;
                return 1;
            }
        }
        int rc = next_record(r, rec);
        if (rc <= 0 || rec->tag != MEMFMT_REC_EVENTS) {
            return rc;
        }
    }
}

int memfmt_read_raw(memfmt_reader *r, const uint8_t **rec, size_t *len, unsigned *tag)
{
    struct memfmt_record tmp;
    for (;;) {
        int n = MEMFMT_E_TRUNCATED;
        if (r->raw_end > r->raw_start) {
            n = memfmt_decode(r->raw + r->raw_start, r->raw_end - r->raw_start, &tmp);
        }
        if (n > 0) {
            if (tmp.tag == MEMFMT_REC_ALLOC || tmp.tag == MEMFMT_REC_FREE || tmp.tag == MEMFMT_REC_REALLOC) {
                return MEMFMT_E_CORRUPT; /* events exist only inside blocks */
            }
            /* The window moves only in refill(), which is not called
             * again before the caller is done with this record. */
            *rec = r->raw + r->raw_start;
            *len = (size_t)n;
            *tag = tmp.tag;
            r->raw_start += (size_t)n;
            return 1;
        }
        int rc = refill_after(r, n);
        if (rc != 1) {
            return rc;
        }
    }
}

uint64_t memfmt_reader_offset(const memfmt_reader *r)
{
    if (r->blk) {
        return r->raw_base + (uint64_t)(memfmt_event_pos(&r->ev) - r->raw);
    }
    return r->raw_base + r->raw_start;
}

int memfmt_reader_errno(const memfmt_reader *r)
{
    return r->saved_errno;
}

void memfmt_reader_free(memfmt_reader *r)
{
    if (!r) {
        return;
    }
    if (r->threaded) {
        pthread_mutex_lock(&r->mu);
        r->stop = 1;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        pthread_join(r->thread, NULL);
        pthread_mutex_destroy(&r->mu);
        pthread_cond_destroy(&r->cv);
    }
    if (r->own_fd) {
        close(r->z.fd);
    }
    ZSTD_freeDStream(r->z.dctx);
    memfmt_evstate_release(&r->ev);
    free(r->z.zin);
    for (int i = 0; i < PIECES; i++) {
        free(r->pieces[i].data);
    }
    free(r->raw);
    free(r);
}
