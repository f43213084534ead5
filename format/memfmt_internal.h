// SPDX-License-Identifier: MIT
/* Byte-level helpers shared by the format library, the recorder and memrec:
 * varints, the file header layout, and the pipe ("wire") protocol between
 * the preloaded recorder and memrec. Not installed; only format/, recorder/
 * and memrec.c include it. Everything here is allocation-free and
 * async-signal-safe. */
#ifndef MEMFMT_INTERNAL_H
#define MEMFMT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct memfmt_record;
struct memfmt_event;

/* ---- varint.c: LEB128 unsigned integers ---- */

#define MEMFMT_VARINT_MAX 10

/** Write `v` as LEB128 at `p`; returns bytes written (1..10). Caller ensures
 * MEMFMT_VARINT_MAX bytes of room. Inline: it is on the recorder's hot path. */
static inline size_t memfmt_put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/** Read a LEB128 value from [*pp, end). Returns 0 and advances *pp, or
 * MEMFMT_E_TRUNCATED if the bytes end first, MEMFMT_E_CORRUPT if the value
 * is longer than 64 bits. */
int memfmt_get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out);

/** The same, inline for the decoders' hot loops: one-byte values at once,
 * longer ones without a bounds check per byte when a whole varint fits
 * before `end`; anything else (the buffer's last bytes, a 10-byte value,
 * corrupt input) through memfmt_get_varint(). */
static inline int memfmt_get_varint_fast(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    if (p < end && !(*p & 0x80)) {
        *out = *p;
        *pp = p + 1;
        return 0;
    }
    if (end - p >= MEMFMT_VARINT_MAX) {
        uint64_t r = 0;
        for (unsigned i = 0; i < MEMFMT_VARINT_MAX - 1; i++) {
            r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
            if (!(p[i] & 0x80)) {
                *out = r;
                *pp = p + i + 1;
                return 0;
            }
        }
    }
    return memfmt_get_varint(pp, end, out);
}

/* ---- file.c: header layout ---- */

/* 16 bytes at the start of the decompressed stream:
 * magic[8], version u16 LE, pointer size u8, little-endian u8, flags u32 LE. */
#define MEMFMT_MAGIC "\x89MEMREC\n"
#define MEMFMT_MAGIC_LEN 8
#define MEMFMT_HEADER_LEN 16

/* ---- events.c: the compact events inside EVENTS blocks ----
 *
 * Events are operations. Each has one byte: the high nibble is the
 * operation, the low nibble the kind (enum memfmt_kind). The operation's
 * bits 3-2 are its type, bit 1 NEW (the allocated (size, trace) pair is new:
 * it is written out and gets the next info id) and bit 0 TEMP (the freed
 * block is the current thread's latest allocation, freed as its next event:
 * a temporary, not named). Its fields, varints:
 *   type 0 ALLOC    NEW ? size, trace : info
 *   type 1 FREE     TEMP ? - : info
 *   type 2 REALLOC  (TEMP ? - : old info), then NEW ? size, trace : info
 *   type 3 THREAD   thread index (NEW and TEMP clear): later events are its
 * The current thread and each thread's latest allocated info carry over from
 * one block to the next: they are state of the whole stream.
 *
 * Version 2 stores a block in columns, each field where its kind of value
 * is: the lengths of the first four, then the operation bytes, the info ids,
 * the sizes, the traces, and the thread indexes (the rest). Values of one
 * kind side by side compress faster and smaller than interleaved ones.
 * Version 1 interleaved every operation's fields after its byte. */

#define MEMFMT_EVENTS_MAX 65536 /* payload bytes per block, at most */
#define MEMFMT_EVENT_MAX 48 /* bytes one operation takes, at most */
#define MEMFMT_EVENTS_HEAD_MAX 20 /* the column lengths: four varints of at most 5 bytes */

enum memfmt_ev_op {
    MEMFMT_OP_ALLOC = 0 << 2,
    MEMFMT_OP_FREE = 1 << 2,
    MEMFMT_OP_REALLOC = 2 << 2,
    MEMFMT_OP_THREAD = 3 << 2,
    MEMFMT_OP_NEW = 1 << 1,
    MEMFMT_OP_TEMP = 1 << 0,
};

enum memfmt_ev_col {
    MEMFMT_COL_OPS,
    MEMFMT_COL_INFO,
    MEMFMT_COL_SIZE,
    MEMFMT_COL_TRACE,
    MEMFMT_COL_THREAD,
    MEMFMT_NCOLS,
};

struct memfmt_info {
    uint64_t size;
    uint32_t trace;
    uint64_t live; /* decoder: blocks of this pair not freed yet */
};

struct memfmt_cursor {
    const uint8_t *p, *end;
};

/* Stream state shared by the encoder and the decoder. */
struct memfmt_evstate {
    uint32_t thread; /* current thread index */
    uint32_t *last_info; /* per thread: info of its latest allocation, 0 = none */
    size_t last_cap;
    struct memfmt_info *infos; /* decoder: per info id */
    size_t info_cap;
    uint32_t ninfo; /* ids in use are 1..ninfo */
    /* Decoder: the block being read. col[c] is where column c is read:
     * its own cursor in a version 2 block, all the one cursor cur[0] in a
     * version 1 block, whose single column interleaves them. */
    struct memfmt_cursor cur[MEMFMT_NCOLS];
    struct memfmt_cursor *col[MEMFMT_NCOLS];
};

/** Release the state's arrays; accepts a zeroed state. */
void memfmt_evstate_release(struct memfmt_evstate *st);
/** Encode one event (ALLOC/FREE/REALLOC record) into the columns of a
 * version 2 block: col[c] is where column c goes on, and moves past what
 * was written (at most MEMFMT_EVENT_MAX bytes in all). An info id above
 * every id used so far must be the next one (ninfo + 1): it is written out
 * as new. Returns 0, or a negative status (MEMFMT_E_NOMEM, MEMFMT_E_INVALID). */
int memfmt_event_encode(struct memfmt_evstate *st, const struct memfmt_record *ev, uint8_t *col[MEMFMT_NCOLS]);
/** Write the payload of a version 2 EVENTS block made of the columns
 * [col_start[c], col_start[c] + len[c]) at p, which has room for
 * MEMFMT_EVENTS_HEAD_MAX plus the columns. Returns the bytes written. */
size_t memfmt_event_block_write(uint8_t *p, uint8_t *const col_start[MEMFMT_NCOLS], const size_t len[MEMFMT_NCOLS]);
/** Start reading the payload of an EVENTS block of a file of `version`.
 * Returns 0, or MEMFMT_E_CORRUPT when its column lengths do not fit. */
int memfmt_event_block(struct memfmt_evstate *st, const uint8_t *payload, size_t len, unsigned version);
/** Decode operations of the block until one event is complete; fills `ev`
 * (every field). Returns 1 with an event, 0 when the block ended without
 * one, or MEMFMT_E_CORRUPT / MEMFMT_E_NOMEM (a block whose columns are not
 * all used up at its end is corrupt). */
int memfmt_event_decode(struct memfmt_evstate *st, struct memfmt_record *ev);
/** Where the decoder stands in the block's operations. */
static inline const uint8_t *memfmt_event_pos(const struct memfmt_evstate *st)
{
    return st->col[MEMFMT_COL_OPS]->p;
}
/** Decode operations of the block into `out` (`cap` >= 2 entries; see
 * struct memfmt_event) until the block ends or fewer than two entries are
 * left. Returns 0 with *n entries (0 entries: the block ended), or
 * MEMFMT_E_CORRUPT / MEMFMT_E_NOMEM with the *n entries decoded before the
 * bad operation, the decoder where memfmt_event_decode() would leave it. */
int memfmt_event_decode_batch(struct memfmt_evstate *st, struct memfmt_event *out, size_t cap, size_t *n);

/* ---- wire.c: the pipe protocol from the recorder to memrec ----
 *
 * The recorder writes batches with single write(2) calls of at most
 * MEMFMT_WIRE_BATCH bytes, so batches from different threads never
 * interleave (a pipe write of up to PIPE_BUF bytes is atomic).
 *
 * batch := len u32 LE (bytes after this field), stream u32 LE, events...
 * Each thread has its own stream number for its lifetime; stream 0 is the
 * recorder's service thread. Every event carries a sequence number taken
 * from one process-wide counter; within a batch it is delta-coded against
 * the previous event of the batch (the first against 0). memrec merges all
 * streams by sequence number. Node ids are local to a stream. */

#define MEMFMT_WIRE_BATCH 4096
#define MEMFMT_WIRE_HEADER 8

enum memfmt_wire_tag {
    MEMFMT_W_HELLO = 1, /* tid: first event of a stream (no seq) */
    MEMFMT_W_NODE = 2, /* parent(local id), ip: local ids are 1, 2, ... (no seq) */
    MEMFMT_W_ALLOC = 3, /* seq, kind, size, addr, trace */
    MEMFMT_W_FREE = 4, /* seq, kind, addr */
    MEMFMT_W_REALLOC = 5, /* seq of the free part, seq of the alloc part, kind, old, new, size, trace */
    MEMFMT_W_SYNC = 6, /* seq, ms, rss: every event with a smaller seq is already in the pipe */
    MEMFMT_W_RECORD = 7, /* seq, len, a file record as memfmt_encode writes it (module, process...) */
    MEMFMT_W_LOST = 8, /* count of events dropped by the recorder (no seq) */
    MEMFMT_W_BYE = 9, /* the stream ends (thread exit); no seq */
    MEMFMT_W_COUNTS = 10, /* calls, bytes: the thread's exact totals so far (sampling); no seq */
    /* Direct mappings (recorder/maphooks.c). Only anonymous memory is sent,
     * except W_UNMAP for a MAP_FIXED file mapping placed over a range. */
    MEMFMT_W_MAP = 11, /* seq, addr, len, trace: an anonymous range mapped by mmap */
    MEMFMT_W_UNMAP = 12, /* seq, kind (enum memfmt_map_kind), addr, len: the range is gone */
    MEMFMT_W_MREMAP = 13, /* seq (old range gone), seq2 (new range made), old addr, old len, new addr, new len */
    MEMFMT_W_BRK = 14, /* seq, old break, new break, trace: the break moved */
    MEMFMT_W_POOL_ALLOC = 16, /* seq, pool, addr, size, trace: a block of a program's pool (memrec.h) */
    MEMFMT_W_POOL_FREE = 17, /* seq, pool, addr */
    MEMFMT_W_POOL_RESET = 18, /* seq, pool: every live block of the pool is freed */
    MEMFMT_W_IMAGE = 20, /* pid: a process image starts (first event of its first batch); no seq */
    MEMFMT_W_EXITING = 21, /* status + 1 (0: not known): the image ends normally; no seq */
    MEMFMT_W_SIGNALED = 26, /* signal: the process is dying of this fatal signal (crash.c); no seq */
    /* 15, 19, 22-25 are free for later tags (numbers never change). */
};

/* ---- the connection protocol: how a recorder reaches memrec ----
 *
 * memrec listens on an abstract unix socket of type SOCK_SEQPACKET whose
 * name is in MEMREC_SOCK. A recorder connects, sends one request and gets
 * one reply; when memrec accepts, the reply carries (SCM_RIGHTS) the write
 * end of the pipe of the recording the process belongs to. The socket only
 * hands out pipes: events always travel through the pipe. memrec checks
 * the peer's pid and uid with SO_PEERCRED, not the request's word. */

#define MEMFMT_CONN_MAGIC 0x314e434du /* "MCN1" */

enum memfmt_conn_kind {
    MEMFMT_CONN_START = 1, /* a process image starts: the first one, after exec, in a fork child */
    MEMFMT_CONN_REOPEN = 2, /* the image lost its descriptor (the program closed or replaced it) */
};

struct memfmt_conn_request {
    uint32_t magic;
    uint32_t kind; /* enum memfmt_conn_kind */
    int32_t pid, ppid;
};

struct memfmt_conn_reply {
    uint32_t magic;
    int32_t status; /* 0: recorded, a descriptor comes with the reply; 1: not recorded */
};

/** One decoded wire event. */
struct memfmt_wire_event {
    unsigned tag;
    uint64_t seq; /* absolute, after delta decoding */
    uint64_t seq2; /* REALLOC: seq of the alloc part */
    uint32_t kind;
    uint64_t size;
    uint64_t addr; /* ALLOC/FREE: the block; REALLOC: the old block */
    uint64_t addr2; /* REALLOC: the new block */
    uint64_t a, b,
        c; /* HELLO tid; NODE parent/ip; SYNC ms/rss; LOST count; POOL_* a trace, b pool; MAP/BRK: trace in a */
    const uint8_t *rec; /* RECORD bytes */
    uint32_t rec_len;
};

/** Decode one wire event from [*pp, end); `prev_seq` holds the previous
 * sequence number of the batch and is updated. Returns 0, or
 * MEMFMT_E_TRUNCATED / MEMFMT_E_CORRUPT. */
int memfmt_wire_decode(const uint8_t **pp, const uint8_t *end, uint64_t *prev_seq, struct memfmt_wire_event *ev);

#endif
