// SPDX-License-Identifier: MIT
/* Byte-level layout internal to the format library: the file header and the
 * compact events inside EVENTS blocks (varints are in varint.h, the pipe
 * protocol in memwire.h). Not installed; only the .c files of format/ include it, and
 * the tests of those internals (tests/integration/test_rules.py lists
 * them). */
#ifndef MEMFMT_INTERNAL_H
#define MEMFMT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct memfmt_record;
struct memfmt_event;

#include "varint.h"
#include "timecode.h"

/* ---- writer.c, reader.c: header layout ---- */

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
 * Version 1 interleaved every operation's fields after its byte.
 *
 * Version 3, in a file with MEMFMT_HF_TIMED: one more column, the time of
 * each ALLOC, FREE and REALLOC in the allocator (ns, varints); the lengths
 * of the first five come first, and the times are the rest. A file
 * without the flag has exactly the version 2 layout.
 *
 * Version 4, timed: the time column starts with a byte that says how the
 * times are written, as varints (as in version 3) or with a Huffman code
 * made for the block (timecode.h). Untimed, it is version 2's layout. */

#define MEMFMT_EVENTS_MAX 65536 /* payload bytes per block, at most */
#define MEMFMT_EVENT_MAX 48 /* bytes one operation takes, at most (a timed REALLOC: 1 + 4 + 5 + 10 + 5 + 10) */
/* The column lengths (five varints of at most 5 bytes) and the time
 * column's coding byte. */
#define MEMFMT_EVENTS_HEAD_MAX 26

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
    MEMFMT_COL_TIME, /* timed files only */
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
    /* Set by memfmt_evstate_layout() before the first block: */
    int timed; /* each event has a time (version 3 and MEMFMT_HF_TIMED) */
    int timecode; /* version 4 and timed: the time column starts with its coding (timecode.h) */
    /* Decoder: the block being read. col[c] is where column c is read:
     * its own cursor in a version 2 block, all the one cursor cur[0] in a
     * version 1 block, whose single column interleaves them. */
    struct memfmt_cursor cur[MEMFMT_NCOLS];
    struct memfmt_cursor *col[MEMFMT_NCOLS];
    /* Decoder: the block's time column when it is Huffman-coded (huffman
     * set), and the table it is read with (made at the first such block). */
    int huffman;
    struct timecode_reader tc;
    uint16_t *tc_table;
};

/** Set the layout of the file's EVENTS blocks from its header's version
 * and flags: whether events have times (version 3 on, with
 * MEMFMT_HF_TIMED; versions 1 and 2 never had times, whatever their flags
 * say) and whether the time column starts with its coding (version 4 on).
 * Before the first block, for the writer and the reader alike. */
void memfmt_evstate_layout(struct memfmt_evstate *st, unsigned version, uint32_t flags);
/** Release the state's arrays; accepts a zeroed state. */
void memfmt_evstate_release(struct memfmt_evstate *st);
/** Encode one event (ALLOC/FREE/REALLOC record) into the columns of a
 * version 2 block: col[c] is where column c goes on, and moves past what
 * was written (at most MEMFMT_EVENT_MAX bytes in all). An info id above
 * every id used so far must be the next one (ninfo + 1): it is written out
 * as new. Returns 0, or a negative status (MEMFMT_E_NOMEM, MEMFMT_E_INVALID). */
int memfmt_event_encode(struct memfmt_evstate *st, const struct memfmt_record *ev, uint8_t *col[MEMFMT_NCOLS]);
/** Write the payload of an EVENTS block in the layout st->timed and
 * st->timecode say (version 2, 3 or 4) made of the columns
 * [col_start[c], col_start[c] + len[c]) at p, which has room for
 * MEMFMT_EVENTS_HEAD_MAX plus the columns. Returns the bytes written. */
size_t memfmt_event_block_write(uint8_t *p, uint8_t *const col_start[MEMFMT_NCOLS], const size_t len[MEMFMT_NCOLS],
                                const struct memfmt_evstate *st);
/** Start reading the payload of an EVENTS block of a file of `version`
 * (st->timed and st->timecode say whether its events have times, and how
 * they are written). Returns 0, MEMFMT_E_CORRUPT when its column lengths
 * do not fit or its time column's code is impossible, or MEMFMT_E_NOMEM. */
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

#endif
