// SPDX-License-Identifier: MIT
/* recording: memrec's side of one recorded process: the pipe its recorder
 * writes into, the merger that orders what comes out of it, and the file
 * it becomes. memrec.c decides when a recording starts and ends. */
#ifndef RECORDING_H
#define RECORDING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "accounting.h"
#include "memfmt.h"
#include "merge.h"

struct recording {
    pid_t pid;
    int is_main; /* the process memrec started (or attached to) */
    int rfd, wfd; /* the pipe; memrec keeps the write end to hand out copies */
    int pidfd; /* processes memrec is not the parent of: readable once ended */
    int statm_fd;
    char *outname;
    int out_fd;
    memfmt_writer *w;
    struct accounting *acct;
    struct merge *merge;
    uint8_t *buf; /* bytes read, a partial batch at the end */
    size_t len;
    uint8_t *held; /* read ahead by recording_slurp(), not merged yet */
    size_t held_len, held_cap;
    uint64_t start_ms;
    uint64_t rss_seen;
    int finished;
    int eof; /* every write end is closed and the pipe is read to its end */
    int failed; /* writing the file failed (said once, on stderr) */
    int area_fd; /* the latest image's buffer area (memwire.h), -1: none */
    int gone; /* set before recording_finish(): the process has ended, its area may be read */
    struct u64map *last_batch; /* stream + 1 -> batch_key() of its latest batch from the pipe */
    int bad_batches;
    int sampled; /* memrec -s: only the sampled blocks are known (no reachability scan) */
    unsigned how; /* END record */
    int value;
    /* --time with the TSC: ns per tick, measured again before each merge
     * (timing.c); NULL when ticks are ns already. */
    double (*ns_per_tick)(void);
};

/** Create `outname` (new, 0600, never over an existing file or through a
 * symlink) and the pipe, for process `pid`; `flags` go into the file
 * header, `sample_rate` (0: none) to the accounting. Returns NULL with
 * errno when the file cannot be created; other failures are fatal. */
struct recording *recording_open(pid_t pid, const char *outname, uint32_t flags, int level, uint64_t sample_rate);
/** Keep `fd`, the buffer area a recorder handed over (memwire.h), in
 * place of an earlier image's: read by recording_finish() when `gone` is
 * set. Returns 0 (the descriptor is the recording's now), or -1 when it is
 * not a memfd-like regular file (the caller closes it). */
int recording_set_area(struct recording *r, int fd);
/** Read what the pipe holds now (never blocks) and merge it. */
void recording_pump(struct recording *r);
/** Read what the pipe holds now into memory without merging it (merged
 * by the next recording_pump() or recording_finish()), so that a writer
 * blocked on a full pipe goes on at once: the detach of memrec --pid waits
 * for the recorder's last writes. Never blocks; sets `eof`. */
void recording_slurp(struct recording *r);
/** Close memrec's own write end: once the process closes its copy, the
 * pipe reads end of file (`eof`), and the hub hands out no new copy. */
void recording_close_write(struct recording *r);
/** Write a resident-set sample if it changed (from /proc/PID/statm). */
void recording_sample_rss(struct recording *r);
/** Flush the compressed stream so far (a reader sees it). */
void recording_flush(struct recording *r);
/** The process ended (or is left): read the rest of the pipe, then, when
 * `gone` is set, the complete events its threads' buffers still hold in
 * the area (a process killed outright), write what is queued, STATS and END (`how`/`value`, or what the recorder said when
 * memrec could not know), and close. `max_rss` (0: none) is the kernel's
 * peak for the process. Idempotent. */
void recording_finish(struct recording *r, unsigned how, int value, uint64_t max_rss);
/* What the program said with its reachability request (hub.h). */
struct recording_reach_ask {
    const uint64_t *own; /* the recorder's own mappings: start, length pairs */
    size_t nown;
    pid_t service_tid; /* the recorder's thread, 0: none */
    const char *module; /* the recorder library's file name */
    int quiet; /* no message when the scan is skipped */
};

/* The longest memrec keeps the program stopped for its scan; past it the
 * scan is given up (the recorder waits 30 s for the answer: init.c). */
#define RECORDING_REACH_MAX_NS (10ull * 1000000000u)

/** The program ends normally and asks for its live blocks' reachability:
 * stop it, read what it wrote, classify its live blocks and write REACH
 * (and REACH_TRACE) records, let it go. Says on stderr why when the scan
 * is skipped or given up (unless `quiet`). Bounded by
 * RECORDING_REACH_MAX_NS. */
void recording_reach(struct recording *r, const struct recording_reach_ask *a);
/** Release; call after recording_finish(). */
void recording_free(struct recording *r);

#endif
