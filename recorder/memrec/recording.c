// SPDX-License-Identifier: MIT
/* One recorded process on memrec's side (recording.h). */
#define _GNU_SOURCE
#include "recording.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sys/ioctl.h>

#include "memwire.h"
#include "roots.h"
#include "stopworld.h"
#include "u64map.h"
#include "util.h"

#define READ_CHUNK (1u << 20)

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int create_output(const char *name)
{
    return open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

struct recording *recording_open(pid_t pid, const char *outname, uint32_t flags, int level, uint64_t sample_rate)
{
    int out_fd = create_output(outname);
    if (out_fd < 0) {
        return NULL;
    }
    struct recording *r = xcalloc(1, sizeof *r);
    r->pid = pid;
    r->outname = xstrdup(outname);
    r->out_fd = out_fd;
    r->pidfd = -1;
    r->area_fd = -1;
    r->last_batch = xcalloc(1, sizeof *r->last_batch);
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        die("cannot create a pipe: %s", strerror(errno));
    }
    /* A big pipe lets the program run ahead of us for a while. */
    fcntl(p[0], F_SETPIPE_SZ, 1 << 20);
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    r->rfd = p[0];
    r->wfd = p[1];
    struct memfmt_header hdr = {MEMFMT_VERSION, (uint8_t)sizeof(void *), 1, flags};
    int rc;
    r->w = memfmt_writer_new(out_fd, &hdr, level, &rc);
    if (!r->w) {
        die("cannot start '%s': %s", outname, memfmt_strerror(rc));
    }
    r->acct = accounting_new(0);
    if (sample_rate) {
        accounting_set_sample_rate(r->acct, sample_rate);
        r->sampled = 1;
    }
    r->start_ms = mono_ms();
    r->merge = merge_new(r->w, r->acct, r->start_ms);
    char statm[64];
    snprintf(statm, sizeof statm, "/proc/%d/statm", (int)pid);
    r->statm_fd = open(statm, O_RDONLY | O_CLOEXEC);
    r->buf = xmalloc(READ_CHUNK + MEMFMT_WIRE_BATCH);
    r->how = MEMFMT_END_UNKNOWN;
    return r;
}

void recording_free(struct recording *r)
{
    merge_free(r->merge);
    accounting_free(r->acct);
    memfmt_writer_free(r->w);
    free(r->outname);
    free(r->buf);
    free(r->held);
    u64map_release(r->last_batch);
    free(r->last_batch);
    free(r);
}

/* What tells a stream's batches apart (memwire.h, "the buffer area"): its
 * length and its first 64 bytes (`p` at the stream field, `n` bytes). */
static uint64_t batch_key(const uint8_t *p, size_t n)
{
    uint64_t h = u64map_mix(n + 1);
    for (size_t i = 0; i < n && i < 64; i++) {
        h = u64map_mix(h ^ p[i]) + i;
    }
    return h ? h : 1;
}

static uint64_t batch_stream_key(const uint8_t *p)
{
    uint32_t stream;
    memcpy(&stream, p, 4);
    return (uint64_t)stream + 1;
}

/* Writing failed (a full disk, a quota): said once. From here on the
 * pipe is drained and what comes is dropped (drain()): the program must
 * never wait on a recording that cannot go on. */
static void fail_write(struct recording *r, int rc)
{
    if (r->failed) {
        return;
    }
    r->failed = 1;
    r->len = 0;
    int e = memfmt_writer_errno(r->w);
    error("cannot write '%s': %s", r->outname, e ? strerror(e) : memfmt_strerror(rc));
}

/* Split the bytes read into whole batches; keep a partial tail. */
static int feed(struct recording *r)
{
    size_t pos = 0;
    while (r->len - pos >= 4) {
        uint32_t n;
        memcpy(&n, r->buf + pos, 4);
        if (n < 4 || n > MEMFMT_WIRE_BATCH) {
            /* The stream is out of step: nothing after this can be trusted. */
            r->bad_batches++;
            r->len = 0;
            return 0;
        }
        if (r->len - pos - 4 < n) {
            break;
        }
        if (r->area_fd >= 0) {
            /* For the batch a killed process may have been writing (read_area()). */
            u64map_put(r->last_batch, batch_stream_key(r->buf + pos + 4), batch_key(r->buf + pos + 4, n));
        }
        int rc = merge_batch(r->merge, r->buf + pos + 4, n);
        if (rc < 0 && rc != MEMFMT_E_CORRUPT && rc != MEMFMT_E_TRUNCATED) {
            return rc;
        }
        if (rc < 0) {
            r->bad_batches++;
        }
        pos += 4 + n;
    }
    memmove(r->buf, r->buf + pos, r->len - pos);
    r->len -= pos;
    return 0;
}

/* After a failure: read what the process sends and drop it, as fast as
 * it comes, bounded like recording_pump()'s reads. */
static void drain(struct recording *r)
{
    uint64_t t0 = mono_ms();
    for (int i = 0; i < 64 && (i == 0 || mono_ms() - t0 < 50); i++) {
        ssize_t k = read(r->rfd, r->buf, READ_CHUNK);
        if (k == 0) {
            r->eof = 1;
        }
        if (k <= 0) {
            return;
        }
    }
}

/* Bytes recording_slurp() read ahead: merged before anything read later. */
static void pump_held(struct recording *r)
{
    size_t pos = 0;
    while (pos < r->held_len && !r->failed) {
        size_t k = r->held_len - pos < READ_CHUNK ? r->held_len - pos : READ_CHUNK;
        memcpy(r->buf + r->len, r->held + pos, k);
        r->len += k;
        pos += k;
        int rc = feed(r);
        if (rc < 0) {
            fail_write(r, rc);
        }
    }
    free(r->held);
    r->held = NULL;
    r->held_len = r->held_cap = 0;
}

void recording_slurp(struct recording *r)
{
    /* Past this, merge instead: the process keeps writing. */
    const size_t max_held = (size_t)256 << 20;
    while (!r->eof && r->held_len < max_held) {
        if (r->held_cap - r->held_len < READ_CHUNK) {
            r->held_cap = r->held_cap ? 2 * r->held_cap : 4 * (size_t)READ_CHUNK;
            r->held = xrealloc(r->held, r->held_cap);
        }
        ssize_t k = read(r->rfd, r->held + r->held_len, READ_CHUNK);
        if (k == 0) {
            r->eof = 1;
        }
        if (k <= 0) {
            return;
        }
        r->held_len += (size_t)k;
    }
    if (r->held_len >= max_held) {
        pump_held(r);
    }
}

void recording_pump(struct recording *r)
{
    if (r->ns_per_tick) {
        merge_set_clock(r->merge, r->ns_per_tick());
    }
    if (r->held) {
        pump_held(r);
    }
    if (r->failed) {
        drain(r);
        return;
    }
    /* Bounded in time as well, so that the caller's loop answers a signal
     * soon although the process writes as fast as we merge. */
    uint64_t t0 = mono_ms();
    for (int i = 0; i < 64 && !r->failed && (i == 0 || mono_ms() - t0 < 50); i++) {
        ssize_t k = read(r->rfd, r->buf + r->len, READ_CHUNK);
        if (k == 0) {
            r->eof = 1;
        }
        if (k <= 0) {
            return;
        }
        r->len += (size_t)k;
        int rc = feed(r);
        if (rc < 0) {
            fail_write(r, rc);
        }
    }
}

/* ---- the buffer area ---- */

int recording_set_area(struct recording *r, int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        return -1;
    }
    if (r->area_fd >= 0) {
        close(r->area_fd); /* an earlier image's: its buffers were flushed at the exec */
    }
    r->area_fd = fd;
    return 0;
}

/* The area is written by the process: every field is checked before it is
 * used, and a short read (a file cut meanwhile) ends the reading. */
static int area_header_ok(const struct memfmt_area_header *h)
{
    uint64_t end = (uint64_t)h->first + (uint64_t)h->slots * h->slot_size;
    return h->magic == MEMFMT_AREA_MAGIC && h->slots > 0 && h->slots <= (1u << 16) && h->slot_size >= 4096 &&
           h->slot_size <= (1u << 20) && h->first >= sizeof *h && end <= ((uint64_t)1 << 36) &&
           (h->done_size == 4 || h->done_size == 8) && (uint64_t)h->done_at + h->done_size <= h->slot_size &&
           (uint64_t)h->data_at + MEMFMT_WIRE_BATCH <= h->slot_size && (uint64_t)h->calls_at + 8 <= h->slot_size &&
           (uint64_t)h->bytes_at + 8 <= h->slot_size && (uint64_t)h->inflight_at + h->done_size <= h->slot_size;
}

/* A little-endian integer of `n` bytes at `at` of the area; 0 when it
 * cannot be read. */
static uint64_t area_uint(int fd, off_t at, unsigned n, int *ok)
{
    uint8_t d[8] = {0};
    uint64_t v = 0;
    *ok = n <= 8 && pread(fd, d, n, at) == (ssize_t)n;
    for (unsigned k = n; *ok && k-- > 0;) {
        v = v << 8 | d[k];
    }
    return v;
}

/* What a killed process's threads had written and not sent: each slot's
 * batch up to its end of complete events, merged as the batch it would
 * have become. Called after the pipe is read to its end, so each stream's
 * events come after those it sent. */
static void read_area(struct recording *r)
{
    struct memfmt_area_header h;
    if (pread(r->area_fd, &h, sizeof h, 0) != (ssize_t)sizeof h || !area_header_ok(&h)) {
        return;
    }
    uint8_t *batch = xmalloc(MEMFMT_WIRE_BATCH + 1 + 2 * MEMFMT_VARINT_MAX); /* room for the counts */
    for (uint32_t i = 0; i < h.slots && !r->failed; i++) {
        off_t slot = (off_t)h.first + (off_t)i * h.slot_size;
        int ok;
        uint64_t done = area_uint(r->area_fd, slot + h.done_at, h.done_size, &ok);
        if (!ok) {
            break;
        }
        uint64_t calls = h.calls_at ? area_uint(r->area_fd, slot + h.calls_at, 8, &ok) : 0;
        uint64_t bytes = h.bytes_at && ok ? area_uint(r->area_fd, slot + h.bytes_at, 8, &ok) : 0;
        if (!ok) {
            break;
        }
        if (done < MEMFMT_WIRE_HEADER || done > MEMFMT_WIRE_BATCH) {
            continue; /* nothing there (a zero slot has done 0) */
        }
        uint64_t inflight = h.inflight_at ? area_uint(r->area_fd, slot + h.inflight_at, h.done_size, &ok) : 0;
        if (!ok) {
            break;
        }
        if (inflight > MEMFMT_WIRE_HEADER && inflight <= MEMFMT_WIRE_BATCH) {
            /* Killed while handing this batch to write(2): unless the
             * pipe brought it, it is here, and only here. */
            if (pread(r->area_fd, batch, (size_t)inflight, slot + h.data_at) != (ssize_t)inflight) {
                break;
            }
            uint64_t seen = 0;
            if (!u64map_get(r->last_batch, batch_stream_key(batch + 4), &seen) ||
                seen != batch_key(batch + 4, (size_t)inflight - 4)) {
                int rc = merge_batch(r->merge, batch + 4, (size_t)inflight - 4);
                if (rc == MEMFMT_E_CORRUPT || rc == MEMFMT_E_TRUNCATED) {
                    r->bad_batches++;
                } else if (rc < 0) {
                    fail_write(r, rc);
                    break;
                }
            }
            /* The batch being written is the slot's batch: no other
             * events are there, but the thread's counts may be newer. */
            done = MEMFMT_WIRE_HEADER;
        }
        if (done == MEMFMT_WIRE_HEADER && !calls) {
            continue;
        }
        if (pread(r->area_fd, batch, (size_t)done, slot + h.data_at) != (ssize_t)done) {
            break;
        }
        size_t n = (size_t)done;
        if (calls) {
            /* The thread's totals now, later than any it sent. */
            batch[n++] = MEMFMT_W_COUNTS;
            n += memfmt_put_varint(batch + n, calls);
            n += memfmt_put_varint(batch + n, bytes);
        }
        int rc = merge_batch(r->merge, batch + 4, n - 4);
        if (rc == MEMFMT_E_CORRUPT || rc == MEMFMT_E_TRUNCATED) {
            r->bad_batches++;
        } else if (rc < 0) {
            fail_write(r, rc);
        }
    }
    free(batch);
}

void recording_close_write(struct recording *r)
{
    if (r->wfd >= 0) {
        close(r->wfd);
        r->wfd = -1;
    }
}

static uint64_t read_rss(int statm_fd)
{
    char buf[128];
    ssize_t n = pread(statm_fd, buf, sizeof buf - 1, 0);
    if (n <= 0) {
        return 0;
    }
    buf[n] = 0;
    unsigned long long size, resident;
    if (sscanf(buf, "%llu %llu", &size, &resident) != 2) {
        return 0;
    }
    return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

void recording_finish(struct recording *r, unsigned how, int value, uint64_t max_rss)
{
    if (r->finished) {
        return;
    }
    recording_pump(r);
    r->finished = 1;
    r->how = how;
    r->value = value;
    const struct merge_stats *ms = merge_stats(r->merge);
    if (how == MEMFMT_END_UNKNOWN && ms->signaled) {
        /* Not our child, so no wait status: the recorder's crash handler
         * said which signal kills it. */
        r->how = MEMFMT_END_SIGNALED;
        r->value = ms->signaled;
    } else if (how == MEMFMT_END_UNKNOWN && ms->exiting) {
        /* Not our child: the recorder said it exits. */
        r->how = MEMFMT_END_EXITED;
        r->value = ms->exit_status;
    } else if (how == MEMFMT_END_UNKNOWN && ms->execing) {
        /* It went on in a program no recorder came up in. */
        r->how = MEMFMT_END_EXEC_UNRECORDED;
    }
    uint64_t runtime = mono_ms() - r->start_ms;
    int rc = 0;
    if (!r->failed && r->gone && r->area_fd >= 0) {
        read_area(r);
    }
    if (!r->failed) {
        rc = merge_drain(r->merge);
        if (rc == 0 && max_rss) {
            rc = merge_rss(r->merge, max_rss);
        }
        if (rc == 0) {
            rc = merge_end(r->merge, r->how, r->value, runtime);
        }
        if (rc == 0) {
            rc = memfmt_writer_finish(r->w);
        }
        if (rc == 0 && fsync(r->out_fd) != 0 && errno != EINVAL) {
            rc = MEMFMT_E_IO;
        }
        if (rc < 0) {
            fail_write(r, rc);
        }
    }
    if (close(r->out_fd) != 0 && !r->failed) {
        r->failed = 1;
        error("cannot write '%s': %s", r->outname, strerror(errno));
    }
    close(r->rfd);
    if (r->area_fd >= 0) {
        close(r->area_fd);
        r->area_fd = -1;
    }
    recording_close_write(r);
    if (r->pidfd >= 0) {
        close(r->pidfd);
    }
    if (r->statm_fd >= 0) {
        close(r->statm_fd);
    }
    accounting_finish(r->acct);
}

void recording_sample_rss(struct recording *r)
{
    uint64_t rss = r->finished || r->failed || r->statm_fd < 0 ? 0 : read_rss(r->statm_fd);
    if (rss && rss != r->rss_seen) {
        r->rss_seen = rss;
        int rc = merge_rss(r->merge, rss);
        if (rc < 0) {
            fail_write(r, rc);
        }
    }
}

void recording_flush(struct recording *r)
{
    int rc = r->finished || r->failed ? 0 : memfmt_writer_flush(r->w);
    if (rc < 0) {
        fail_write(r, rc);
    }
}

/* ---- reachability at the end ---- */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The threads are stopped: whatever they wrote is in the pipe. Read it all
 * (the events of the blocks to classify). */
static void pump_all(struct recording *r)
{
    for (int i = 0; i < 4096 && !r->failed && !r->eof; i++) {
        int avail = 0;
        if (ioctl(r->rfd, FIONREAD, &avail) != 0 || avail <= 0) {
            break;
        }
        recording_pump(r);
    }
    if (r->held) {
        recording_pump(r);
    }
}

static const char *const skip_why[MEMFMT_REACH_COUNT] = {
    [MEMFMT_REACH_TOO_BIG] = "more live blocks than it classifies (16,777,216)",
    [MEMFMT_REACH_SAMPLED] = NULL, /* said by memprint, not here: expected */
};

void recording_reach(struct recording *r, const struct recording_reach_ask *a)
{
    if (r->finished || r->failed) {
        return;
    }
    uint64_t t0 = mono_ns();
    unsigned st = r->sampled ? MEMFMT_REACH_SAMPLED : merge_reach_check(r->merge);
    int rc = 0;
    if (st != MEMFMT_REACH_DONE) {
        if (!a->quiet && skip_why[st]) {
            warning("no reachability scan of process %d: %s", (int)r->pid, skip_why[st]);
        }
        rc = merge_reach_skipped(r->merge, st, mono_ns() - t0);
        if (rc < 0) {
            fail_write(r, rc);
        }
        return;
    }
    struct stopworld sw;
    char why[160];
    /* A thread that does not stop within a second is stuck in the kernel. */
    if (stopworld_stop(&sw, r->pid, t0 + 1000000000u, why, sizeof why) != 0) {
        if (!a->quiet) {
            warning("no reachability scan of process %d: %s", (int)r->pid, why);
        }
        rc = merge_reach_skipped(r->merge, MEMFMT_REACH_NO_STOP, mono_ns() - t0);
        if (rc < 0) {
            fail_write(r, rc);
        }
        return;
    }
    uint64_t stopped = mono_ns();
    pump_all(r);
    /* The recorder's service thread is no thread of the program's. */
    uint64_t *sp = xmalloc((sw.n + 1) * sizeof *sp);
    uint64_t *words = xmalloc((sw.n * STOPWORLD_NREGS + 1) * sizeof *words);
    size_t nsp = 0, nwords = 0;
    uint64_t service_sp = 0;
    for (size_t i = 0; i < sw.n; i++) {
        if (a->service_tid && sw.tids[i] == a->service_tid) {
            service_sp = sw.sp[i];
            continue;
        }
        sp[nsp++] = sw.sp[i];
        memcpy(words + nwords, sw.regs + i * STOPWORLD_NREGS, STOPWORLD_NREGS * sizeof *words);
        nwords += STOPWORLD_NREGS;
    }
    struct roots_skip skip = {a->own, a->nown, a->module, service_sp};
    struct reach_range *roots = NULL;
    size_t nroots = 0;
    struct memfmt_record res = {0};
    /* A stopped thread's maps: an ended main thread's are empty. */
    if (roots_collect(sw.n ? sw.tids[0] : r->pid, sp, nsp, &skip, &roots, &nroots) != 0) {
        snprintf(why, sizeof why, "cannot read its memory map: %s", strerror(errno));
        rc = merge_reach_skipped(r->merge, MEMFMT_REACH_NO_STOP, mono_ns() - t0);
        res.u.reach.status = MEMFMT_REACH_NO_STOP;
    } else {
        struct merge_reach_in in = {roots, nroots, words,  nwords, {stopworld_readv, &sw}, t0 + RECORDING_REACH_MAX_NS,
                                    nsp,   t0,     stopped};
        rc = merge_reach(r->merge, &in, &res);
    }
    stopworld_resume(&sw);
    free(roots);
    free(sp);
    free(words);
    if (rc < 0) {
        fail_write(r, rc);
    } else if (!a->quiet && res.u.reach.status == MEMFMT_REACH_TOO_SLOW) {
        warning("reachability scan of process %d given up after %llu s: no figure kept", (int)r->pid,
                (unsigned long long)(RECORDING_REACH_MAX_NS / 1000000000u));
    } else if (!a->quiet && res.u.reach.status == MEMFMT_REACH_NO_STOP) {
        warning("no reachability scan of process %d: %s", (int)r->pid, why);
    }
}
