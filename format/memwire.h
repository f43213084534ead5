// SPDX-License-Identifier: MIT
/* The contract between the recorder in the target and memrec: the pipe
 * ("wire") batch framing and event tags, the connection protocol on
 * memrec's socket, and the wire event decoder (wire.c). Not installed;
 * included by format/wire.c, recorder/ and the tests. Everything here is
 * allocation-free and async-signal-safe. */
#ifndef MEMFMT_MEMWIRE_H
#define MEMFMT_MEMWIRE_H

#include <stddef.h>
#include <stdint.h>

#include "varint.h"

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
    MEMFMT_W_HELLO =
        1, /* tid, born: first event of a stream (no seq); born = CLOCK_MONOTONIC ns of the thread's first event (0: unknown) */
    MEMFMT_W_NODE = 2, /* parent(local id), ip: local ids are 1, 2, ... (no seq) */
    MEMFMT_W_ALLOC = 3, /* seq, kind, size, addr, trace */
    MEMFMT_W_FREE = 4, /* seq, kind, addr */
    MEMFMT_W_REALLOC = 5, /* seq of the free part, seq of the alloc part, kind, old, new, size, trace */
    MEMFMT_W_SYNC = 6, /* seq, ms, rss: every event with a smaller seq is already in the pipe */
    MEMFMT_W_RECORD = 7, /* seq, len, a file record as memfmt_encode writes it (module, process...) */
    MEMFMT_W_LOST =
        8, /* count, first ms, last ms: events dropped (memrec did not read within the bound), CLOCK_MONOTONIC ms of the first and latest drop; no seq */
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
    /* memrec --time: ALLOC, FREE and REALLOC with one more field at the
     * end, the ticks the forwarded call spent in the allocator (TSC ticks
     * or CLOCK_MONOTONIC ns, as memrec chose with MEMREC_TIME). */
    MEMFMT_W_ALLOC_T = 22,
    MEMFMT_W_FREE_T = 23,
    MEMFMT_W_REALLOC_T = 24,
    MEMFMT_W_TIMES = 25, /* wall ns, cpu ns: the thread's lifetime and CPU time so far (as it ends); no seq */
    MEMFMT_W_PROC_CPU = 15, /* user ns, system ns: the process's CPU time as it exits (getrusage); no seq */
    MEMFMT_W_EXECING = 19, /* the image is about to exec (sent after its last SYNC); no seq */
};

/* ---- the connection protocol: how a recorder reaches memrec ----
 *
 * memrec listens on an abstract unix socket of type SOCK_SEQPACKET whose
 * name is in MEMREC_SOCK. A recorder connects, sends one request and gets
 * one reply; when memrec accepts, the reply carries (SCM_RIGHTS) the write
 * end of the pipe of the recording the process belongs to. The socket only
 * hands out pipes and takes buffer areas (below): while the process runs,
 * events always travel through the pipe. memrec checks
 * the peer's pid and uid with SO_PEERCRED, not the request's word. */

#define MEMFMT_CONN_MAGIC 0x314e434du /* "MCN1" */

enum memfmt_conn_kind {
    MEMFMT_CONN_START = 1, /* a process image starts: the first one, after exec, in a fork child */
    MEMFMT_CONN_REOPEN = 2, /* the image lost its descriptor (the program closed or replaced it) */
    /* The program ends normally (after its exit handlers and destructors)
     * and its events are all in the pipe: memrec classifies its live
     * blocks (reachability), stopping it meanwhile, then answers with no
     * descriptor (status 0: the scan ran or was skipped; 1: not recorded). */
    MEMFMT_CONN_REACH = 3,
    MEMFMT_CONN_AREA = 4, /* the request carries (SCM_RIGHTS) the image's buffer area; the reply carries nothing */
};

struct memfmt_conn_request {
    uint32_t magic;
    uint32_t kind; /* enum memfmt_conn_kind */
    int32_t pid, ppid;
};

/* MEMFMT_CONN_REACH: the second message after the request, the
 * recorder's own mappings (`count` {start, len} pairs of u64 follow) and
 * its service thread, which memrec leaves out of the roots. */
#define MEMFMT_CONN_MAX_RANGES 1024

struct memfmt_conn_ranges {
    uint32_t count;
    uint32_t complete; /* 0: the recorder made more mappings than it could list */
    int32_t service_tid; /* 0: none */
    uint32_t pad;
};

/* ---- the buffer area: the threads' batches, shared with memrec ----
 *
 * A process image keeps its threads' batch buffers in one memfd mapping
 * and hands the memfd to memrec (MEMFMT_CONN_AREA) before its first event,
 * so that memrec can still read the events of a process killed outright
 * (SIGKILL, the OOM killer), which nothing in the process could send.
 * The area is a header (this struct) at offset 0 and `slots` slots of
 * `slot_size` bytes from offset `first`. In a slot, the `done_size`-byte
 * little-endian integer at `done_at` is the end of the complete events of
 * the batch at `data_at`: the batch's bytes [MEMFMT_WIRE_HEADER, done) are
 * whole events that did not go through the pipe (a batch handed to
 * write(2) has done = MEMFMT_WIRE_HEADER first), and bytes 4..8 of the
 * batch are its stream. With sampling, the 8-byte counters at `calls_at`
 * and `bytes_at` are the thread's exact totals, which memrec sends on as a
 * COUNTS event. A batch being handed to write(2) has its length at
 * `inflight_at` until the call returns: killed meanwhile, the process may or
 * may not have put it in the pipe (a write of up to PIPE_BUF bytes is
 * whole or nothing), and memrec takes it from the slot unless the latest
 * batch of that stream it read from the pipe has the same length and the
 * same first 64 bytes (two batches of a stream only do when they hold the
 * same totals alone, a COUNTS event, which may be taken once: otherwise
 * the first event's number, a new node or a later time tells them apart).
 * A slot of no thread is all zeros (a slot is zeroed when its thread's
 * buffer is given back); one with done <= MEMFMT_WIRE_HEADER, no counts
 * and nothing in flight holds nothing. memrec reads the area only once the
 * process is gone (never while it runs), and only after everything in the
 * pipe, and treats it as untrusted input like the pipe: a slot that does
 * not decode is dropped. */

#define MEMFMT_AREA_MAGIC 0x31415241u /* "ARA1" */

struct memfmt_area_header {
    uint32_t magic;
    uint32_t slots;
    uint32_t slot_size;
    uint32_t first;
    uint32_t done_at;
    uint32_t done_size; /* 4 or 8 */
    uint32_t data_at;
    uint32_t calls_at; /* sampling: the thread's exact call count so far, 8 bytes (0 when not sampling) */
    uint32_t bytes_at; /* and its bytes, 8 bytes */
    uint32_t inflight_at; /* the length of the batch being written to the pipe, done_size bytes (0: none) */
};

struct memfmt_conn_reply {
    uint32_t magic;
    /* 0: recorded, a descriptor comes with the reply (MEMFMT_CONN_REACH:
     * done); 1: not recorded; MEMFMT_CONN_WORKING: the request is taken,
     * the answer follows on the same connection */
    int32_t status;
};

#define MEMFMT_CONN_WORKING 2

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
        c; /* HELLO tid/born; NODE parent/ip; SYNC ms/rss; LOST count/first ms/last ms; POOL_* a trace, b pool; MAP/BRK: trace in a; TIMES wall/cpu */
    uint64_t ticks; /* *_T: time in the allocator, in ticks; 0 for the untimed tags */
    const uint8_t *rec; /* RECORD bytes */
    uint32_t rec_len;
};

/** Decode one wire event from [*pp, end); `prev_seq` holds the previous
 * sequence number of the batch and is updated. Returns 0, or
 * MEMFMT_E_TRUNCATED / MEMFMT_E_CORRUPT. */
int memfmt_wire_decode(const uint8_t **pp, const uint8_t *end, uint64_t *prev_seq, struct memfmt_wire_event *ev);

#endif
