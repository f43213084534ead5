// SPDX-License-Identifier: MIT
/* The buffer core: per-thread event buffers, their registry, the events of
 * the allocation path and the flush rounds (service thread, exit, exec,
 * detach, fork). Part of the buffers layer with buflock.c (the locks),
 * seq.c (the numbers), sigevents.c (what signal handlers queued),
 * buffer_map.c (direct mappings) and crashflush.c (the flush from a fatal
 * signal); it calls only them, the base below (tracetree, unwind, sample,
 * pipe, conn, log, mem) and what its callers hand it (buffer_setup()'s
 * new-frame callback). There is no process-wide lock on the allocation
 * path: each thread appends to its own buffer under its own (uncontended)
 * lock and writes full buffers to the pipe with one write(2) of at most
 * PIPE_BUF bytes, which the kernel keeps whole.
 *
 * Ordering across threads: every event takes a number (seq.c) while its
 * thread holds its buffer lock; allocations take it after
 * the real allocator returned, frees before the real free is called, so a
 * free always numbers after its allocation and a reuse of the address after
 * the free. Every flush period the service thread (service.c) takes the
 * sync point S (seq_sync_point()), then locks and flushes every buffer, then
 * sends SYNC(S): memrec then knows all events numbered below S have arrived
 * and can write them in order. */
#define _GNU_SOURCE
#include "buffer.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "callclock.h"
#include "clock.h"
#include "conn.h"
#include "buflock.h"
#include "guard.h"
#include "mem.h"
#include "memwire.h"
#include "options.h"
#include "pipe.h"
#include "sample.h"
#include "seq.h"
#include "shmbuf.h"
#include "sigdefer.h"
#include "sigevents.h"
#include "tbuf.h"
#include "tracetree.h"
#include "unwind.h"
#include "varint.h"

static atomic_uint next_stream = 1;
static atomic_int direct; /* after exit started: flush after every event */
static atomic_uint tree_gen; /* bumped when a module goes away: trees restart */
static atomic_int records_lost; /* a dropped batch held a record (a module): buffer_records_lost() */
/* Bumped by every buffer_setup(): a buffer made in an earlier recording
 * (memrec attached again) starts its lifetime over at its first event in
 * this one. */
static atomic_uint rec_gen;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t exit_key;
static struct tbuf service_buf; /* stream 0: SYNC and service records */
static void (*new_frame)(uint64_t ip); /* buffer_setup(): modules_note_frame() */

/* ---- the registry of buffers ---- */

static struct tbuf *registry;

/* Run fn on every registered buffer while its owner is outside its
 * critical section; the caller holds the registry. All buffers are
 * announced at once and one barrier serves them all. A buffer whose owner
 * is inside (or holds the lock word) is let go at once and taken alone
 * afterwards: never wait for one owner while holding another's lock, for
 * the first may be waiting, inside the recorder, for a lock of the program
 * that the second holds (dl_iterate_phdr's, with a callback that
 * allocates). */
static void for_each_quiet(void (*fn)(struct tbuf *))
{
    for (struct tbuf *b = registry; b; b = b->next) {
        b->quiet_later = !buflock_try(&b->lk.lock);
        if (!b->quiet_later) {
            buflock_others_want(&b->lk);
        }
    }
    buflock_others_barrier();
    for (struct tbuf *b = registry; b; b = b->next) {
        if (b->quiet_later) {
            continue;
        }
        if (buflock_asym && atomic_load_explicit(&b->lk.busy, memory_order_acquire)) {
            b->quiet_later = 1;
        } else {
            fn(b);
        }
        buflock_others_done(&b->lk);
    }
    for (struct tbuf *b = registry; b; b = b->next) {
        if (b->quiet_later) {
            b->quiet_later = 0;
            buflock_take(&b->lk.lock);
            buflock_others_want(&b->lk);
            buflock_others_barrier();
            buflock_others_wait(&b->lk);
            fn(b);
            buflock_others_done(&b->lk);
        }
    }
}

/* A for_each_quiet() that only waits: see seq_go_shared() in tbuf_create(). */
static void quiet(struct tbuf *b)
{
    (void)b;
}

/* The registry of buffers: taken when a thread starts or ends, and by the
 * service thread; never on the allocation path. */
static void reg_acquire(void)
{
    pthread_mutex_lock(&reg_lock);
}

static void reg_release(void)
{
    pthread_mutex_unlock(&reg_lock);
}

int tbuf_registry_try(void)
{
    return pthread_mutex_trylock(&reg_lock) == 0;
}

struct tbuf *tbuf_registry_first(void)
{
    return registry;
}

void tbuf_registry_release(void)
{
    pthread_mutex_unlock(&reg_lock);
}

/* ---- thread buffers ---- */

static void batch_reset(struct tbuf *b)
{
    atomic_store_explicit(&b->done, MEMFMT_WIRE_HEADER, memory_order_relaxed);
    b->len = MEMFMT_WIRE_HEADER;
    b->prev_seq = 0;
    b->nev = 0;
    b->nrec = 0;
    uint32_t s = b->stream;
    memcpy(b->data + 4, &s, 4);
}

int tbuf_flush(struct tbuf *b)
{
    if (b->len <= MEMFMT_WIRE_HEADER) {
        return PIPE_SENT;
    }
    if (b->lost_tree) {
        /* The rest of a stream that lost a batch: its node ids may name
         * nodes memrec never got. It is dropped too, and the stream starts
         * over at the owner's next event (restart_tree()). */
        pipe_count_drop(b->nev);
        if (b->nrec) {
            atomic_store(&records_lost, 1);
        }
        batch_reset(b);
        return PIPE_DROPPED;
    }
    uint32_t n = (uint32_t)(b->len - 4);
    memcpy(b->data, &n, 4);
    /* Interrupted during the write, a crash handler cannot know whether
     * the batch went out: it sends nothing rather than twice. */
    atomic_store_explicit(&b->done, MEMFMT_WIRE_HEADER, memory_order_release);
    atomic_store_explicit(&b->inflight, b->len, memory_order_release);
    int rc = pipe_send(b->data, b->len, b->nev);
    atomic_store_explicit(&b->inflight, 0, memory_order_release);
    if (rc == PIPE_DROPPED && b != &service_buf) {
        /* memrec no longer knows this stream's latest nodes. The service
         * stream (SYNC, records) has none and just goes on. */
        b->lost_tree = 1;
        b->tree_gen = ~atomic_load(&tree_gen);
    }
    if (rc == PIPE_DROPPED && b->nrec) {
        atomic_store(&records_lost, 1);
    }
    batch_reset(b);
    return rc;
}

void tbuf_emit_node(void *ctx, uint32_t parent, uint64_t ip)
{
    struct tbuf *b = ctx;
    /* A new frame in a module not announced yet (loaded a moment ago, maybe
     * running its constructor): announce it now, before the node. */
    if (ip && new_frame) {
        new_frame(ip);
    }
    tbuf_ensure_room(b, 1 + 2 * MEMFMT_VARINT_MAX);
    b->data[b->len++] = MEMFMT_W_NODE;
    tbuf_put(b, parent);
    tbuf_put(b, ip);
}

static void say_hello(struct tbuf *b)
{
    b->data[b->len++] = MEMFMT_W_HELLO;
    tbuf_put(b, (uint64_t)b->tid);
    tbuf_put(b, b->born_ns);
}

static uint64_t ns_of(const struct timespec *ts)
{
    return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

static uint64_t ns_of_tv(const struct timeval *tv)
{
    return (uint64_t)tv->tv_sec * 1000000000u + (uint64_t)tv->tv_usec * 1000u;
}

/* A thread's lifetime so far and its CPU time over it, given its CPU
 * clock `cpu_ns` read just before (THREAD_TIMES in the file), into its
 * buffer, held by the caller. Both count from the buffer's making: the
 * thread's CPU clock also counts what it ran before its first event (the
 * loader, an earlier process image, the time before an attach), which
 * would make it exceed the lifetime. */
static void put_times_as(struct tbuf *b, uint64_t cpu_ns)
{
    uint64_t now = clock_read_ns(CLOCK_MONOTONIC);
    tbuf_ensure_room(b, 1 + 2 * MEMFMT_VARINT_MAX);
    b->data[b->len++] = MEMFMT_W_TIMES;
    tbuf_put(b, now > b->born_ns ? now - b->born_ns : 0);
    tbuf_put(b, cpu_ns > b->born_cpu_ns ? cpu_ns - b->born_cpu_ns : 0);
}

/* The owner's times, read by the thread itself. */
static void put_times(struct tbuf *b)
{
    put_times_as(b, clock_read_ns(CLOCK_THREAD_CPUTIME_ID));
}

/* The CPU clock of another thread of this process, by its tid: the id
 * pthread_getcpuclockid() would give (the kernel's CPUCLOCK_SCHED with
 * its per-thread bit, over the complemented tid), made from the tid since
 * buffers keep tids, not pthread_t. */
static clockid_t thread_cpu_clock(pid_t tid)
{
    return (clockid_t)((~(unsigned)tid << 3) | 6u);
}

/* The thread's lifetime in recording `gen` starts now: called by the
 * owner, at its buffer's making or at its first event in a later
 * recording. The CPU clock is read after the monotonic one, so that the
 * CPU span lies within the lifetime. */
static void start_life(struct tbuf *b, unsigned gen)
{
    b->rec_gen = gen;
    b->born_ns = clock_read_ns(CLOCK_MONOTONIC);
    b->born_cpu_ns = clock_read_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* A buffer lives in a slot of the area memrec holds (shmbuf.c), so that
 * its complete events (up to `done`) survive a SIGKILL; past the area's
 * slots, in private memory. */
static struct tbuf *tbuf_alloc(void)
{
    struct tbuf *b = shmbuf_take();
    return b ? b : mem_map(sizeof *b);
}

static void tbuf_release_mem(struct tbuf *b)
{
    if (!shmbuf_give(b)) {
        mem_unmap(b, sizeof *b);
    }
}

static struct tbuf *tbuf_create(void)
{
    struct tbuf *b = tbuf_alloc();
    if (!b) {
        return NULL;
    }
    b->stream = atomic_fetch_add(&next_stream, 1);
    b->tid = gettid_cached();
    b->orphan = tstate.exited;
    b->tree_gen = atomic_load(&tree_gen);
    start_life(b, atomic_load(&rec_gen));
    unwind_thread_init(&b->unwind);
    batch_reset(b);
    say_hello(b);
    reg_acquire();
    if (registry && !seq_is_shared()) {
        /* Every number is taken inside a buffer's critical section: after
         * the switch, waiting once for each owner to be outside it (the
         * flush's protocol) leaves no plain increment in flight, and every
         * later section reads the shared counter (see buflock_owner_take()
         * for why the owner's side needs no barrier of its own). */
        seq_go_shared();
        for_each_quiet(quiet);
    }
    b->next = registry;
    registry = b;
    reg_release();
    /* The key's destructor flushes this buffer when the thread exits. */
    pthread_setspecific(exit_key, b);
    return b;
}

static void unregister(struct tbuf *b)
{
    reg_acquire();
    for (struct tbuf **pp = &registry; *pp; pp = &(*pp)->next) {
        if (*pp == b) {
            *pp = b->next;
            break;
        }
    }
    reg_release();
}

/* Sampling: the thread's exact totals so far (cumulative). */
void tbuf_put_counts(struct tbuf *b)
{
    if (!opts.sample_rate) {
        return;
    }
    tbuf_ensure_room(b, 1 + 2 * MEMFMT_VARINT_MAX);
    b->data[b->len++] = MEMFMT_W_COUNTS;
    tbuf_put(b, atomic_load_explicit(&b->calls, memory_order_relaxed));
    tbuf_put(b, atomic_load_explicit(&b->bytes, memory_order_relaxed));
}

/* Called by the owner at its exit, outside the hooks. */
static void tbuf_destroy(struct tbuf *b)
{
    buflock_owner_take(&b->lk);
    tbuf_put_counts(b);
    put_times(b);
    tbuf_ensure_room(b, 1);
    b->data[b->len++] = MEMFMT_W_BYE;
    tbuf_flush(b);
    buflock_owner_release(&b->lk);
    unregister(b);
    tracetree_release(&b->tree);
    unwind_thread_release(&b->unwind);
    tbuf_release_mem(b);
}

static void on_thread_exit(void *arg)
{
    struct tbuf *b = arg;
    int saved = tstate.in_hook;
    tstate.in_hook = 1;
    if (b && tstate.buf == b) {
        tstate.buf = NULL;
        tbuf_destroy(b);
    }
    sigdefer_release();
    tstate.exited = 1;
    tstate.in_hook = saved;
}

/* Modules went away, or a batch of the stream was dropped (pipe_send()'s
 * bound): node ids restart with a new stream, so memrec never confuses old
 * and new trees of one thread, nor misses a node. A new attach makes them go
 * away too: then this is the thread's first event in the new recording,
 * where its lifetime and CPU time start over. */
static __attribute__((noinline)) void restart_tree(struct tbuf *b, uint32_t g)
{
    tbuf_flush(b);
    b->lost_tree = 0;
    tracetree_release(&b->tree);
    b->tree_gen = g;
    b->stream = atomic_fetch_add(&next_stream, 1);
    unsigned r = atomic_load(&rec_gen);
    if (b->rec_gen != r) {
        start_life(b, r);
    }
    batch_reset(b);
    say_hello(b);
}

/* The pipe is stalled (memrec does not read, the bound passed): the event
 * is skipped before its stack is walked, and counted, so that the program
 * runs at full speed meanwhile. Every 4096th skip asks the pipe whether it
 * takes writes again, should no other write find out (no service thread). */
static __attribute__((noinline)) int skip_event(struct tbuf *b)
{
    uint64_t n = atomic_fetch_add_explicit(&b->skipped, 1, memory_order_relaxed);
    if ((n & 4095) == 4095 && pipe_probe()) {
        atomic_fetch_sub_explicit(&b->skipped, 1, memory_order_relaxed);
        return 0;
    }
    return 1;
}

/* Lock this thread's buffer, creating it on first use, and restart its
 * trace tree if modules went away since it was built. What signal handlers
 * queued while the thread was inside the recorder goes first: it happened
 * before the event the caller is about to number. */
static inline __attribute__((always_inline)) struct tbuf *lock_mine(void)
{
    struct tbuf *b = tstate.buf;
    if (__builtin_expect(tstate.forking, 0) && buffer_in_fork_child()) {
        return NULL;
    }
    if (!b) {
        b = tbuf_create();
        if (!b) {
            return NULL;
        }
        tstate.buf = b;
    }
    if (__builtin_expect(atomic_load_explicit(&pipe_stalled, memory_order_relaxed), 0) && skip_event(b)) {
        return NULL;
    }
    buflock_owner_take(&b->lk);
    b->owner_holds = 1;
    uint32_t g = atomic_load_explicit(&tree_gen, memory_order_relaxed);
    if (__builtin_expect(b->tree_gen != g, 0)) {
        restart_tree(b, g);
    }
    if (__builtin_expect(tstate.deferred, 0)) {
        sigevents_emit(b);
    }
    return b;
}

static inline __attribute__((always_inline)) void unlock_mine(struct tbuf *b)
{
    if (b->len > MEMFMT_WIRE_BATCH - TBUF_EVENT_ROOM || atomic_load_explicit(&direct, memory_order_relaxed)) {
        tbuf_flush(b);
    }
    atomic_store_explicit(&b->done, b->len, memory_order_release);
    b->owner_holds = 0;
    buflock_owner_release(&b->lk);
}

struct tbuf *tbuf_lock_mine(void)
{
    return lock_mine();
}

void tbuf_unlock_mine(struct tbuf *b)
{
    unlock_mine(b);
}

uint32_t tbuf_capture(struct tbuf *b)
{
    uint64_t ips[UNWIND_MAX_DEPTH];
    uint64_t hash;
    int deferred;
    int n = unwind_capture_hash(&b->unwind, ips, opts.max_depth, &hash, &deferred);
    uint32_t leaf = tracetree_lookup(&b->tree, n, hash);
    if (leaf) {
        return leaf;
    }
    if (deferred) {
        unwind_fill(&b->unwind, ips, n);
    }
    return tracetree_insert(&b->tree, ips, n, hash, tbuf_emit_node, b);
}

/* ---- events ---- */

/* Sampling: count every allocation exactly (the owner is the only
 * writer, the service thread reads). Returns 0 when the thread has no
 * buffer (and nothing can be recorded). */
static __attribute__((noinline)) struct tbuf *first_buffer(void)
{
    struct tbuf *b = tbuf_create();
    tstate.buf = b;
    return b;
}

/* Inlined: in sampling mode it runs for every allocation. */
static inline __attribute__((always_inline)) int count_call(size_t size)
{
    struct tbuf *b = tstate.buf;
    if (__builtin_expect(!b, 0) && !(b = first_buffer())) {
        return 0;
    }
    atomic_store_explicit(&b->calls, atomic_load_explicit(&b->calls, memory_order_relaxed) + 1, memory_order_relaxed);
    atomic_store_explicit(&b->bytes, atomic_load_explicit(&b->bytes, memory_order_relaxed) + size,
                          memory_order_relaxed);
    if (__builtin_expect(tstate.counted != b, 0) && tstate.rng) {
        /* For sample_skips() and sample_count(): the hooks count most
         * allocations inline; only once the thread is seeded (see there). */
        tstate.calls_at = &b->calls;
        tstate.bytes_at = &b->bytes;
        tstate.counted = b;
    }
    return 1;
}

/* Sampling: count the allocation and say whether this one is recorded. */
int tbuf_sampled(void *p, size_t size)
{
    return count_call(size) && sample_hit(size) && sample_add(p);
}

/* Sampling: what signal handlers queued goes out before the set of
 * sampled blocks is asked or changed. Their calls came first, and may be
 * of this very address: a handler's block freed at once and now handed out
 * again. Added to the set before the queue's free of it was sent, the
 * block would be taken for the queued one, its free sent unmatched and
 * the new block's own free dropped. */
static inline __attribute__((always_inline)) void queue_first(void)
{
    if (__builtin_expect(tstate.deferred, 0)) {
        buffer_send_deferred();
    }
}

void buffer_alloc(unsigned kind, void *p, size_t size)
{
    if (opts.sample_rate) {
        queue_first();
    }
    if (opts.sample_rate && !tbuf_sampled(p, size)) {
        return;
    }
    struct tbuf *b = lock_mine();
    if (!b) {
        return;
    }
    uint32_t trace = tbuf_capture(b);
    tbuf_ensure_room(b, TBUF_EVENT_ROOM);
    tbuf_put_numbered(b, opts.time ? MEMFMT_W_ALLOC_T : MEMFMT_W_ALLOC);
    tbuf_put(b, kind);
    tbuf_put(b, size);
    tbuf_put(b, (uint64_t)(uintptr_t)p);
    tbuf_put(b, trace);
    if (opts.time) {
        tbuf_put(b, tstate.ticks);
    }
    unlock_mine(b);
}

void buffer_free(unsigned kind, void *p)
{
    if (opts.sample_rate) {
        queue_first();
    }
    if (opts.sample_rate && !sample_remove(p)) {
        return; /* not a sampled block */
    }
    struct tbuf *b = lock_mine();
    if (!b) {
        return;
    }
    tbuf_ensure_room(b, TBUF_EVENT_ROOM);
    tbuf_put_numbered(b, opts.time ? MEMFMT_W_FREE_T : MEMFMT_W_FREE);
    tbuf_put(b, kind);
    tbuf_put(b, (uint64_t)(uintptr_t)p);
    if (opts.time) {
        tbuf_put(b, tstate.ticks);
    }
    unlock_mine(b);
}

/* A timed free is written before the real free, number and all, as an
 * untimed one is; only its time is missing, and the buffer stays held
 * until the time is added (as a realloc's is), so that neither the service
 * thread nor a crash flush sends the event without it. */
static inline __attribute__((always_inline)) int free_begin(unsigned kind, void *p)
{
    if (opts.sample_rate) {
        queue_first();
    }
    if (opts.sample_rate && !sample_remove(p)) {
        return 0; /* not a sampled block */
    }
    struct tbuf *b = lock_mine();
    if (!b) {
        return 0;
    }
    tbuf_ensure_room(b, TBUF_EVENT_ROOM);
    tbuf_put_numbered(b, MEMFMT_W_FREE_T);
    tbuf_put(b, kind);
    tbuf_put(b, (uint64_t)(uintptr_t)p);
    return 1;
}

static inline __attribute__((always_inline)) void free_end(uint64_t ticks)
{
    struct tbuf *b = tstate.buf;
    tbuf_put(b, ticks);
    if (__builtin_expect(tstate.deferred, 0)) {
        sigevents_emit(b); /* handlers that ran during the call: numbered after the free */
    }
    unlock_mine(b);
}

int buffer_free_begin(unsigned kind, void *p)
{
    return free_begin(kind, p);
}

void buffer_free_end(uint64_t ticks)
{
    free_end(ticks);
}

/* The same in one call, for free(): a call less on the path of every
 * timed free, which the two TSC reads already make dearer. */
void buffer_free_timed(unsigned kind, void *p, void (*release)(void *))
{
    if (!free_begin(kind, p)) {
        release(p);
        return;
    }
    uint64_t t0 = alloctime_now();
    release(p);
    free_end(alloctime_now() - t0);
}

/* Pool blocks are not put in the sampled set: they are known by (pool,
 * address), and a reset frees blocks the recorder never sees one by one.
 * So every pool free and reset is sent and memrec, which keeps the sampled
 * pool blocks, ignores the rest. */
void buffer_pool(unsigned tag, const void *pool, const void *p, size_t size)
{
    if (opts.sample_rate && tag == MEMFMT_W_POOL_ALLOC && !(count_call(size) && sample_hit(size))) {
        return;
    }
    struct tbuf *b = lock_mine();
    if (!b) {
        return;
    }
    uint32_t trace = tag == MEMFMT_W_POOL_ALLOC ? tbuf_capture(b) : 0;
    tbuf_ensure_room(b, TBUF_EVENT_ROOM);
    tbuf_put_numbered(b, (uint8_t)tag);
    tbuf_put(b, (uint64_t)(uintptr_t)pool);
    if (tag != MEMFMT_W_POOL_RESET) {
        tbuf_put(b, (uint64_t)(uintptr_t)p);
    }
    if (tag == MEMFMT_W_POOL_ALLOC) {
        tbuf_put(b, size);
        tbuf_put(b, trace);
    }
    unlock_mine(b);
}

/* The buffer stays locked between begin and end, so that the service thread
 * cannot declare the free part's number complete before it is written. */
uint64_t buffer_realloc_begin(void)
{
    struct tbuf *b = lock_mine();
    if (!b) {
        return 0;
    }
    return seq_take();
}

void buffer_realloc_end(uint64_t seq_free, unsigned kind, void *old, void *p, size_t size)
{
    struct tbuf *b = tstate.buf;
    if (!seq_free || !b) {
        return;
    }
    if (__builtin_expect(tstate.deferred, 0)) {
        sigevents_emit(b); /* handlers that ran during the call */
    }
    if (!p && (size != 0 || !old)) {
        /* Failed: nothing was freed or allocated. */
        unlock_mine(b);
        return;
    }
    uint32_t trace = p ? tbuf_capture(b) : 0;
    tbuf_ensure_room(b, TBUF_EVENT_ROOM);
    uint64_t s2 = seq_take();
    /* The timed tags are the untimed ones with the ticks at the end. */
    uint8_t timed = opts.time ? MEMFMT_W_ALLOC_T - MEMFMT_W_ALLOC : 0;
    if (!p) {
        /* realloc(old, 0) freed old and returned NULL: a free. */
        b->data[b->len++] = (uint8_t)(MEMFMT_W_FREE + timed);
        tbuf_put_seq(b, seq_free);
        tbuf_put(b, kind);
        tbuf_put(b, (uint64_t)(uintptr_t)old);
    } else if (!old) {
        b->data[b->len++] = (uint8_t)(MEMFMT_W_ALLOC + timed);
        tbuf_put_seq(b, s2);
        tbuf_put(b, kind);
        tbuf_put(b, size);
        tbuf_put(b, (uint64_t)(uintptr_t)p);
        tbuf_put(b, trace);
    } else {
        b->data[b->len++] = (uint8_t)(MEMFMT_W_REALLOC + timed);
        tbuf_put_seq(b, seq_free);
        tbuf_put_seq(b, s2);
        tbuf_put(b, kind);
        tbuf_put(b, (uint64_t)(uintptr_t)old);
        tbuf_put(b, (uint64_t)(uintptr_t)p);
        tbuf_put(b, size);
        tbuf_put(b, trace);
    }
    if (timed) {
        tbuf_put(b, tstate.ticks);
    }
    unlock_mine(b);
}

void buffer_send_deferred(void)
{
    struct tbuf *b = lock_mine(); /* sends the queue */
    if (b) {
        unlock_mine(b);
    } else {
        tstate.deferred = 0;
    }
}

static void append_record(struct tbuf *b, const uint8_t *rec, size_t len)
{
    if (len + 1 + 2 * MEMFMT_VARINT_MAX > MEMFMT_WIRE_BATCH - MEMFMT_WIRE_HEADER - 8) {
        return;
    }
    tbuf_ensure_room(b, len + 1 + 2 * MEMFMT_VARINT_MAX);
    tbuf_put_numbered(b, MEMFMT_W_RECORD);
    tbuf_put(b, len);
    memcpy(b->data + b->len, rec, len);
    b->len += len;
    b->nrec++;
}

void buffer_record(const uint8_t *rec, size_t len)
{
    struct tbuf *b = tstate.buf;
    if (b && b->owner_holds) {
        /* Called while this thread records an event (a module found while
         * its stack is inserted): the buffer is already ours. */
        append_record(b, rec, len);
        return;
    }
    b = lock_mine();
    if (!b) {
        if (atomic_load(&pipe_stalled)) {
            atomic_store(&records_lost, 1); /* skipped: said again later */
        }
        return;
    }
    append_record(b, rec, len);
    unlock_mine(b);
}

void buffer_modules_gone(void)
{
    atomic_fetch_add(&tree_gen, 1);
}

int buffer_records_lost(void)
{
    if (!atomic_load(&records_lost) || atomic_load(&pipe_stalled)) {
        return 0;
    }
    atomic_store(&records_lost, 0);
    return 1;
}

/* ---- flush rounds (the service thread, exit, exec, detach) ---- */

/* A buffer whose thread exited after its exit destructor ran has no owner
 * left to flush it: the service thread flushes and reclaims it. */
static int owner_gone(const struct tbuf *b)
{
    return b->orphan && syscall(SYS_tgkill, getpid(), b->tid, 0) < 0 && errno == ESRCH;
}

static void flush_one(struct tbuf *b)
{
    uint64_t skipped = atomic_exchange_explicit(&b->skipped, 0, memory_order_relaxed);
    if (skipped) {
        pipe_count_drop(skipped);
    }
    tbuf_put_counts(b);
    tbuf_flush(b);
}

/* flush_one() as the process image ends (exec): the thread gets its
 * lifetime and CPU time so far, read from its CPU clock; those of a thread
 * that is gone (its tid may be reused) stay unknown. */
static void flush_with_times(struct tbuf *b)
{
    struct timespec ts;
    /* Not a buffer with no event in this recording (made in an earlier
     * attach): memrec has not heard of its thread. */
    if (b->rec_gen == atomic_load(&rec_gen) && !owner_gone(b) && clock_gettime(thread_cpu_clock(b->tid), &ts) == 0) {
        put_times_as(b, ns_of(&ts));
    }
    flush_one(b);
}

/* The same at the process's end, but for the thread that runs the exit,
 * which said its own times. */
static void flush_one_at_end(struct tbuf *b)
{
    if (b == tstate.buf) {
        flush_one(b);
    } else {
        flush_with_times(b);
    }
}

static void flush_all(void (*flush)(struct tbuf *))
{
    struct tbuf *dead = NULL;
    reg_acquire();
    for_each_quiet(flush);
    for (struct tbuf **pp = &registry; *pp;) {
        struct tbuf *b = *pp;
        if (owner_gone(b)) {
            *pp = b->next;
            b->next = dead;
            dead = b;
            continue;
        }
        pp = &b->next;
    }
    reg_release();
    while (dead) {
        struct tbuf *b = dead;
        dead = b->next;
        tracetree_release(&b->tree);
        unwind_thread_release(&b->unwind);
        tbuf_release_mem(b);
    }
}

/* `flush` is flush_one(), or one that adds the threads' times as the
 * image or the process ends. */
static void sync_point_with(void (*flush)(struct tbuf *))
{
    uint64_t s = seq_sync_point();
    uint64_t ms = clock_mono_ms();
    flush_all(flush);
    buflock_take(&service_buf.lk.lock);
    /* Batches dropped since the last round (memrec did not read within
     * the bound): how many events, over which span, before the SYNC; said
     * again next round if this batch is dropped too. */
    uint64_t lost = 0, first_ms, last_ms;
    if (pipe_lost(&lost, &first_ms, &last_ms)) {
        tbuf_ensure_room(&service_buf, 1 + 3 * MEMFMT_VARINT_MAX + TBUF_EVENT_ROOM);
        service_buf.data[service_buf.len++] = MEMFMT_W_LOST;
        tbuf_put(&service_buf, lost);
        tbuf_put(&service_buf, first_ms);
        tbuf_put(&service_buf, last_ms);
    }
    tbuf_ensure_room(&service_buf, TBUF_EVENT_ROOM);
    service_buf.data[service_buf.len++] = MEMFMT_W_SYNC;
    tbuf_put_seq(&service_buf, s);
    tbuf_put(&service_buf, ms);
    tbuf_put(&service_buf, 0);
    if (tbuf_flush(&service_buf) == PIPE_SENT && lost) {
        pipe_lost_said(lost); /* else said again next round */
    }
    buflock_release(&service_buf.lk.lock);
}

static void sync_point(void)
{
    sync_point_with(flush_one);
}

/* A record of the service thread's own (heapinfo.c) goes into the service
 * batch, stream 0, like SYNC: through a thread buffer the service thread
 * would become a thread of the recording (a THREAD record, and the counter
 * switched to atomic adds). It is numbered by a load of the counter, not
 * an increment (the owners may increment it with plain stores): the
 * number of the latest event taken, so that it is concurrent with that
 * event and below the next SYNC's number, which releases it (with the
 * next event's number, a process that sleeps would hold it back). */
void buffer_service_record(const uint8_t *rec, size_t len)
{
    if (len + 1 + 2 * MEMFMT_VARINT_MAX > MEMFMT_WIRE_BATCH - MEMFMT_WIRE_HEADER - 8) {
        return;
    }
    /* The counter starts at 1; with the TSC, any reading before the next
     * round's is below its number. */
    uint64_t s = seq_use_tsc ? seq_take() : seq_sync_point() - 1;
    buflock_take(&service_buf.lk.lock);
    tbuf_ensure_room(&service_buf, len + 1 + 2 * MEMFMT_VARINT_MAX);
    service_buf.data[service_buf.len++] = MEMFMT_W_RECORD;
    tbuf_put_seq(&service_buf, s);
    tbuf_put(&service_buf, len);
    memcpy(service_buf.data + service_buf.len, rec, len);
    service_buf.len += len;
    buflock_release(&service_buf.lk.lock);
}

uint64_t buffer_events_taken(void)
{
    return seq_use_tsc ? 0 : atomic_load_explicit(&seq_counter, memory_order_relaxed);
}

/* ---- set-up, exit, fork, exec ---- */

/* The first batch of a process image says so: after an exec the new image
 * writes into the pipe its predecessor used, and memrec must know where
 * one ends and the next begins (sequence numbers and streams restart). */
static void say_image(void)
{
    buflock_take(&service_buf.lk.lock);
    batch_reset(&service_buf);
    service_buf.data[service_buf.len++] = MEMFMT_W_IMAGE;
    tbuf_put(&service_buf, (uint64_t)getpid());
    tbuf_flush(&service_buf);
    buflock_release(&service_buf.lk.lock);
}

/* Before the first event of the image: the buffers go into an area memrec
 * holds, or, where memrec does not take it (or there is no memfd), into
 * private memory as before. */
static void share_area(void)
{
    int afd = shmbuf_setup(sizeof(struct tbuf), offsetof(struct tbuf, done), sizeof(size_t),
                           offsetof(struct tbuf, data), opts.sample_rate ? offsetof(struct tbuf, calls) : 0,
                           opts.sample_rate ? offsetof(struct tbuf, bytes) : 0, offsetof(struct tbuf, inflight));
    if (afd < 0) {
        return;
    }
    if (conn_send_area(afd) != 0) {
        shmbuf_forget(); /* nobody would read it: private buffers are cheaper to keep apart */
    }
    sys_close(afd);
}

int buffer_setup(int fd, void (*on_new_frame)(uint64_t ip))
{
    static int once;
    if (!once) {
        seq_setup(opts.tsc_order);
        buflock_setup();
        if (opts.sample_rate && sample_setup() < 0) {
            return -1;
        }
        if (pthread_key_create(&exit_key, on_thread_exit) != 0) {
            return -1;
        }
        once = 1;
    }
    new_frame = on_new_frame;
    atomic_fetch_add(&rec_gen, 1);
    share_area();
    pipe_open(fd);
    atomic_store(&direct, 0);
    service_buf.stream = 0;
    say_image();
    atomic_store(&rec_enabled, 1);
    return 0;
}

void buffer_finish(int status)
{
    /* This thread ends with the process: its times now, and those of the
     * threads still running at the sync point below. */
    struct tbuf *own = tstate.buf;
    /* Not when this thread is inside its own buffer (a handler that
     * interrupted it calls _exit): it would take its own lock twice. */
    if (own && !own->owner_holds && atomic_load_explicit(&rec_enabled, memory_order_relaxed)) {
        int saved = tstate.in_hook;
        tstate.in_hook = 1;
        buflock_owner_take(&own->lk);
        own->owner_holds = 1;
        put_times(own);
        atomic_store_explicit(&own->done, own->len, memory_order_release);
        own->owner_holds = 0;
        buflock_owner_release(&own->lk);
        tstate.in_hook = saved;
    }
    atomic_store(&direct, 1);
    sync_point_with(flush_one_at_end);
    /* The process's CPU time, for memrec when it is not the parent (a
     * followed descendant, an attached process) and has no wait status. */
    struct rusage ru;
    int have_cpu = getrusage(RUSAGE_SELF, &ru) == 0;
    buflock_take(&service_buf.lk.lock);
    tbuf_ensure_room(&service_buf, 2 + 3 * MEMFMT_VARINT_MAX);
    if (have_cpu) {
        service_buf.data[service_buf.len++] = MEMFMT_W_PROC_CPU;
        tbuf_put(&service_buf, ns_of_tv(&ru.ru_utime));
        tbuf_put(&service_buf, ns_of_tv(&ru.ru_stime));
    }
    service_buf.data[service_buf.len++] = MEMFMT_W_EXITING;
    tbuf_put(&service_buf, status >= 0 ? (uint64_t)status + 1 : 0);
    tbuf_flush(&service_buf);
    buflock_release(&service_buf.lk.lock);
}

void buffer_go_direct(void)
{
    atomic_store(&direct, 1);
    sync_point();
}

void buffer_detach(void)
{
    sync_point();
    atomic_store(&rec_enabled, 0);
    /* Events of calls that were already inside a hook, and the times so
     * far of the threads, which run on. */
    sync_point_with(flush_with_times);
    pipe_close();
}

void buffer_before_exec(void)
{
    /* Every thread ends with the image, this one included (if the exec
     * fails, the times a thread says later replace these). */
    sync_point_with(flush_with_times);
    /* Said last: if no new image follows, memrec knows the exec went to a
     * program the recorder cannot be in (set-user-ID: the kernel drops
     * LD_PRELOAD), rather than taking the silence for a crash. */
    buflock_take(&service_buf.lk.lock);
    tbuf_ensure_room(&service_buf, 1);
    service_buf.data[service_buf.len++] = MEMFMT_W_EXECING;
    tbuf_flush(&service_buf);
    buflock_release(&service_buf.lk.lock);
}

void buffer_sync(void)
{
    sync_point();
}

/* The fork hooks (init.c's atfork handlers). The area is a shared mapping:
 * a fork child writing into the buffer its thread inherited would write
 * into the parent's live buffer. Until the child handler has forgotten
 * the buffers, the forking thread checks, at each event, in which process
 * it runs (a system call, during fork() only). */
static pid_t forking_pid;

int buffer_in_fork_child(void)
{
    return getpid() != forking_pid;
}

void buffer_fork_prepare(void)
{
    forking_pid = getpid();
    tstate.forking = 1;
}

void buffer_fork_parent(void)
{
    tstate.forking = 0;
}

void buffer_forget(void)
{
    /* The child must not write into the parent's recording: its copies of
     * the buffers hold the parent's events. They are left as they are
     * (pages shared with the parent until written). */
    atomic_store(&rec_enabled, 0);
    pipe_forget();
    registry = NULL;
    shmbuf_forget(); /* the parent's: shared, not copied */
    tstate.forking = 0;
    if (buflock_asym) {
        buflock_setup(); /* a new address space: register it too */
    }
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    reg_lock = fresh; /* it may have been held by a thread that does not exist here */
    atomic_store(&service_buf.lk.lock, 0);
    service_buf.owner_holds = 0;
    tstate.buf = NULL;
    if (opts.sample_rate) {
        sample_forget();
    }
}
