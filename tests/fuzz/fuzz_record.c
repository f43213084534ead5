// SPDX-License-Identifier: MIT
/* libFuzzer target: arbitrary bytes as a run of file records
 * (memfmt_decode), as the payload of an EVENTS block (memfmt_event_decode)
 * and as a run of wire events (memfmt_wire_decode). The decoders must stay
 * inside the buffer, consume at least one byte per success, point strings
 * into the record, and give back what encodes and decodes to the same
 * thing again. Never asserts on its input: it aborts only when a decoder
 * breaks its contract. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memfmt.h"
#include "memfmt_internal.h"
#include "memwire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void contract(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_record: contract broken: %s\n", what);
        abort();
    }
}

/* A decoded field pointing into the record: inside [lo, hi), and readable
 * (the sum makes ASan look at every byte). */
static unsigned inside(const void *p, uint32_t n, const uint8_t *lo, const uint8_t *hi)
{
    if (n == 0) {
        return 0;
    }
    const uint8_t *b = p;
    contract(b != NULL && b >= lo && b <= hi && (size_t)(hi - b) >= n, "a decoded string lies inside its record");
    unsigned sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        sum += b[i];
    }
    return sum;
}

static unsigned check_fields(const struct memfmt_record *rec, const uint8_t *lo, const uint8_t *hi)
{
    unsigned sum = 0;
    switch (rec->tag) {
    case MEMFMT_REC_PROCESS:
        sum += inside(rec->u.process.exe, rec->u.process.exe_len, lo, hi);
        sum += inside(rec->u.process.cmdline, rec->u.process.cmdline_len, lo, hi);
        break;
    case MEMFMT_REC_MODULE:
        sum += inside(rec->u.module.path, rec->u.module.path_len, lo, hi);
        sum += inside(rec->u.module.build_id, rec->u.module.build_id_len, lo, hi);
        contract(rec->u.module.nsegments <= MEMFMT_MAX_SEGMENTS, "a module has at most MEMFMT_MAX_SEGMENTS segments");
        break;
    case MEMFMT_REC_PACK_STRING: sum += inside(rec->u.pack_string.str, rec->u.pack_string.len, lo, hi); break;
    case MEMFMT_REC_PACK_FRAMES:
        contract(rec->u.pack_frames.nframes >= 1 && rec->u.pack_frames.nframes <= MEMFMT_MAX_PACK_FRAMES,
                 "a PACK_FRAMES record has 1 to MEMFMT_MAX_PACK_FRAMES frames");
        break;
    default: break;
    }
    return sum;
}

/* Room for any record a decoder accepts: the payload is at most
 * MEMFMT_MAX_RECORD bytes, plus tag and length. Static: 1 MiB each. */
#define ENC_CAP (MEMFMT_MAX_RECORD + 64)
static uint8_t enc1[ENC_CAP], enc2[ENC_CAP];

/* encode(decode(x)) is a fixed point: a decoded record encodes (its fields
 * never take more room than the bytes they came from), and decoding and
 * encoding that again gives the same bytes. */
static void round_trip(const struct memfmt_record *rec)
{
    if (rec->tag == MEMFMT_REC_EVENTS || rec->tag >= MEMFMT_REC_ALLOC) {
        /* Not encodable one by one: events go through EVENTS blocks, and
         * a raw record with an event's tag is refused by the file reader. */
        contract(memfmt_encode(rec, enc1, ENC_CAP) == MEMFMT_E_INVALID, "events do not encode as records");
        return;
    }
    int n1 = memfmt_encode(rec, enc1, ENC_CAP);
    contract(n1 > 0, "a decoded record encodes");
    struct memfmt_record again;
    memset(&again, 0, sizeof again);
    int d = memfmt_decode(enc1, (size_t)n1, &again);
    contract(d == n1, "an encoded record decodes whole");
    contract(again.tag == rec->tag, "the tag survives a round trip");
    check_fields(&again, enc1, enc1 + n1);
    int n2 = memfmt_encode(&again, enc2, ENC_CAP);
    contract(n2 == n1 && memcmp(enc1, enc2, (size_t)n1) == 0, "encode(decode(encode(r))) == encode(r)");
}

/* ---- records ---- */

static unsigned decode_records(const uint8_t *data, size_t size)
{
    unsigned sum = 0;
    size_t pos = 0;
    while (pos < size) {
        struct memfmt_record rec;
        memset(&rec, 0, sizeof rec);
        int n = memfmt_decode(data + pos, size - pos, &rec);
        if (n <= 0) {
            contract(n == MEMFMT_E_TRUNCATED || n == MEMFMT_E_CORRUPT || n == MEMFMT_E_TOOBIG,
                     "decode fails with TRUNCATED, CORRUPT or TOOBIG");
            break;
        }
        contract((size_t)n <= size - pos, "decode consumes no more than it was given");
        sum += check_fields(&rec, data + pos, data + pos + n);
        round_trip(&rec);
        pos += (size_t)n;
    }
    return sum;
}

/* ---- events ---- */

/* Events are compared whole: both sides start zeroed and the decoder
 * fills in every field of the event it returns, so the bytes of two equal
 * events are equal, padding included. */
static void decode_events(const uint8_t *data, size_t size, unsigned version, int timed)
{
    struct memfmt_evstate dec, enc, dec2;
    memset(&dec, 0, sizeof dec);
    memset(&enc, 0, sizeof enc);
    memset(&dec2, 0, sizeof dec2);
    uint32_t flags = timed ? MEMFMT_HF_TIMED : 0;
    memfmt_evstate_layout(&dec, version, flags);
    memfmt_evstate_layout(&enc, version, flags);
    memfmt_evstate_layout(&dec2, version, flags);
    if (memfmt_event_block(&dec, data, size, version) < 0) {
        contract(version >= 2, "only a version 2 block has column lengths to refuse");
        memfmt_evstate_release(&dec); /* a refused Huffman time column may have made its table */
        return;
    }
    int enc_ok = 1;
    for (;;) {
        struct memfmt_record ev;
        memset(&ev, 0, sizeof ev);
        const uint8_t *before = memfmt_event_pos(&dec);
        int rc = memfmt_event_decode(&dec, &ev);
        if (rc == 0) {
            for (int c = 0; c < MEMFMT_NCOLS; c++) {
                contract(dec.col[c]->p == dec.col[c]->end, "a block that ends cleanly used up every column");
            }
            break;
        }
        if (rc < 0) {
            contract(rc == MEMFMT_E_CORRUPT || rc == MEMFMT_E_NOMEM, "event decode fails with CORRUPT or NOMEM");
            break;
        }
        contract(rc == 1, "event decode returns 1 with an event");
        contract(memfmt_event_pos(&dec) > before && memfmt_event_pos(&dec) <= data + size,
                 "an event consumes operation bytes inside the block");
        contract(ev.tag == MEMFMT_REC_ALLOC || ev.tag == MEMFMT_REC_FREE || ev.tag == MEMFMT_REC_REALLOC,
                 "event decode returns ALLOC, FREE or REALLOC");
        uint32_t kind = ev.tag == MEMFMT_REC_FREE ? ev.u.free.kind : ev.u.alloc.kind;
        contract(kind < 16, "an event's kind fits its nibble");
        /* Encode the event again with a writer's state into a block of its
         * own and decode that with a fresh reader's state: the same event
         * must come back. */
        if (enc_ok) {
            uint8_t cols[MEMFMT_NCOLS][MEMFMT_EVENT_MAX];
            uint8_t *start[MEMFMT_NCOLS], *col[MEMFMT_NCOLS];
            for (int c = 0; c < MEMFMT_NCOLS; c++) {
                start[c] = col[c] = cols[c];
            }
            int n = memfmt_event_encode(&enc, &ev, col);
            if (n == MEMFMT_E_NOMEM) {
                enc_ok = 0; /* the decoder got the memory, the encoder did not: stop comparing */
                continue;
            }
            contract(n == 0, "a decoded event encodes");
            size_t len[MEMFMT_NCOLS], total = 0;
            for (int c = 0; c < MEMFMT_NCOLS; c++) {
                len[c] = (size_t)(col[c] - start[c]);
                total += len[c];
            }
            contract(total > 0 && total <= MEMFMT_EVENT_MAX,
                     "a decoded event encodes in at most MEMFMT_EVENT_MAX bytes");
            uint8_t block[MEMFMT_EVENTS_HEAD_MAX + MEMFMT_EVENT_MAX];
            size_t blen = memfmt_event_block_write(block, start, len, &enc);
            struct memfmt_record back, none;
            memset(&back, 0, sizeof back);
            contract(memfmt_event_block(&dec2, block, blen, version < 2 ? 2 : version) == 0 &&
                         memfmt_event_decode(&dec2, &back) == 1 && memfmt_event_decode(&dec2, &none) == 0,
                     "a re-encoded event decodes whole, as a block of its own");
            contract(memcmp(&ev, &back, sizeof ev) == 0, "decode(encode(event)) == event");
        }
    }
    memfmt_evstate_release(&dec);
    memfmt_evstate_release(&enc);
    memfmt_evstate_release(&dec2);
}

/* ---- wire ---- */

static unsigned decode_wire(const uint8_t *data, size_t size)
{
    unsigned sum = 0;
    const uint8_t *p = data;
    const uint8_t *end = data + size;
    uint64_t prev_seq = 0;
    while (p < end) {
        struct memfmt_wire_event ev;
        memset(&ev, 0, sizeof ev);
        const uint8_t *before = p;
        int rc = memfmt_wire_decode(&p, end, &prev_seq, &ev);
        if (rc < 0) {
            contract(rc == MEMFMT_E_TRUNCATED || rc == MEMFMT_E_CORRUPT, "wire decode fails with TRUNCATED or CORRUPT");
            break;
        }
        contract(rc == 0, "wire decode returns 0 on success");
        contract(p > before && p <= end, "wire decode consumes at least one byte, inside the buffer");
        if (ev.tag == MEMFMT_W_RECORD) {
            sum += inside(ev.rec, ev.rec_len, before, p);
            /* memrec hands these bytes to the file as records. */
            sum += decode_records(ev.rec, ev.rec_len);
        }
    }
    return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    volatile unsigned sink = decode_records(data, size) + decode_wire(data, size);
    (void)sink;
    decode_events(data, size, 1, 0);
    decode_events(data, size, 2, 0);
    decode_events(data, size, 3, 1);
    decode_events(data, size, 4, 1);
    return 0;
}
