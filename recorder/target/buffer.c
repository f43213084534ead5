// SPDX-License-Identifier: MIT
/* Per-thread event buffers, the pipe, sequence numbers and flush rounds:
 * the buffers layer, which calls only the base below it (tracetree, unwind,
 * sample, conn, log, mem) and what its callers hand it (buffer_setup()'s
 * new-frame callback, the crash handler's wait). There is no process-wide
 * lock on the allocation path: each thread appends to its own buffer under
 * its own (uncontended) spinlock and writes full buffers to the pipe with
 * one write(2) of at most PIPE_BUF bytes, which the kernel keeps whole.
 *
 * Ordering across threads: every event takes a number from one counter
 * (atomic once a second thread records, see take_seq()) while its thread
 * holds its buffer lock; allocations take it after
 * the real allocator returned, frees before the real free is called, so a
 * free always numbers after its allocation and a reuse of the address after
 * the free. Every flush period the service thread (service.c) reads the counter (S),
 * then locks and flushes every buffer, then sends SYNC(S): memrec then knows
 * all events numbered below S have arrived and can write them in order. */
#define _GNU_SOURCE
#include "buffer.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "cfi.h"
#include "conn.h"
#include "guard.h"
#include "mem.h"
#include "memfmt.h"
#include "memwire.h"
#include "options.h"
#include "pipe.h"
#include "sample.h"
#include "sigdefer.h"
#include "tracetree.h"
#include "unwind.h"

struct tbuf {
    atomic_int lock; /* see buf_lock() */
    atomic_int busy; /* the owner holds the buffer without `lock` (see owner_lock()) */
    atomic_int wants; /* another thread holds `lock` and waits for busy == 0 */
    int owner_slow; /* the owner holds `lock` */
    int quiet_later; /* for_each_quiet(): its owner was inside, take it alone afterwards */
    uint32_t stream;
    pid_t tid;
    int orphan; /* created after the thread's exit destructor */
    uint64_t prev_seq; /* delta base of the current batch */
    uint32_t tree_gen;
    int owner_holds; /* the owner holds the lock (inside lock_mine .. unlock_mine) */
    /* End of the complete events not yet handed to write(2): what a crash
     * handler interrupting the owner while it holds the lock can send. */
    atomic_size_t done;
    atomic_uint_fast64_t calls, bytes; /* sampling: every allocation, counted exactly */
    size_t len; /* bytes used in data, header included */
    struct tracetree tree;
    struct unwind_ctx unwind;
    struct tbuf *next; /* registry */
    uint8_t data[MEMFMT_WIRE_BATCH];
};

/* Room an event needs at most; a buffer with less is flushed first. */
#define EVENT_ROOM 80

HIDDEN atomic_int rec_enabled;

static atomic_uint_fast64_t seq_counter = 1;
static atomic_uint next_stream = 1;
static atomic_int direct; /* after exit started: flush after every event */
static atomic_uint tree_gen; /* bumped when a module goes away: trees restart */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t exit_key;
static struct tbuf service_buf; /* stream 0: SYNC and service records */
static void (*new_frame)(uint64_t ip); /* buffer_setup(): modules_note_frame() */

/* ---- locks ---- */

/* A thread's buffer lock is contended only by the service thread, for a
 * moment every flush period: the owner's path is one exchange and one
 * store. But the holder may block in write(2) while the pipe is full, so a
 * waiter spins briefly and then sleeps in short naps instead of burning the
 * CPU that memrec needs to drain the pipe. */
static void wait_a_little(int *spins)
{
    if (++*spins < 64) {
        __builtin_ia32_pause();
        return;
    }
    struct timespec nap = {0, 20 * 1000};
    nanosleep(&nap, NULL);
}

static void buf_lock(atomic_int *l)
{
    int spins = 0;
    while (atomic_exchange_explicit(l, 1, memory_order_acquire)) {
        wait_a_little(&spins);
    }
}

static void buf_unlock(atomic_int *l)
{
    atomic_store_explicit(l, 0, memory_order_release);
}

/* The owner of a thread buffer takes it on every allocation and free; the
 * service thread (and a crash handler, and the exit of its thread) about
 * every 10 ms. Where membarrier(2) works, the frequent side costs no atomic
 * read-modify-write: the owner stores busy = 1, then reads `wants`; another
 * thread takes `lock`, stores wants = 1, calls membarrier(), which runs a
 * full barrier on every CPU that runs a thread of the process, and then
 * waits for busy == 0. Either the owner sees wants = 1 (and takes `lock`
 * like anyone else), or the other side sees busy = 1 and waits: the
 * owner's store cannot still hide in its CPU's store buffer once the
 * barrier ran there. Elsewhere both sides take `lock`. */
static int asym;

static int membarrier(int cmd)
{
    return (int)syscall(SYS_membarrier, cmd, 0, 0);
}

static void asym_setup(void)
{
    int cmds = membarrier(MEMBARRIER_CMD_QUERY);
    asym = cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
           membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

static inline __attribute__((always_inline)) void owner_lock(struct tbuf *b)
{
    if (asym) {
        atomic_store_explicit(&b->busy, 1, memory_order_relaxed);
        atomic_signal_fence(memory_order_seq_cst);
        if (__builtin_expect(!atomic_load_explicit(&b->wants, memory_order_acquire), 1)) {
            b->owner_slow = 0;
            return;
        }
        atomic_store_explicit(&b->busy, 0, memory_order_release);
    }
    buf_lock(&b->lock);
    b->owner_slow = 1;
}

static inline __attribute__((always_inline)) void owner_unlock(struct tbuf *b)
{
    if (b->owner_slow) {
        buf_unlock(&b->lock);
    } else {
        atomic_store_explicit(&b->busy, 0, memory_order_release);
    }
}

/* Another thread's side, for buffers whose `lock` it holds: announce, then
 * one barrier for all of them (membarrier() costs a few microseconds), then
 * wait for each owner to leave. */
static void others_want(struct tbuf *b)
{
    if (asym) {
        atomic_store(&b->wants, 1);
    }
}

static void others_barrier(void)
{
    if (asym) {
        membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
    }
}

static void others_wait(struct tbuf *b)
{
    int spins = 0;
    while (asym && atomic_load_explicit(&b->busy, memory_order_acquire)) {
        wait_a_little(&spins);
    }
}

static void others_done(struct tbuf *b)
{
    if (asym) {
        atomic_store_explicit(&b->wants, 0, memory_order_release);
    }
    buf_unlock(&b->lock);
}

static int buf_trylock(atomic_int *l)
{
    return !atomic_exchange_explicit(l, 1, memory_order_acquire);
}

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
        b->quiet_later = !buf_trylock(&b->lock);
        if (!b->quiet_later) {
            others_want(b);
        }
    }
    others_barrier();
    for (struct tbuf *b = registry; b; b = b->next) {
        if (b->quiet_later) {
            continue;
        }
        if (asym && atomic_load_explicit(&b->busy, memory_order_acquire)) {
            b->quiet_later = 1;
        } else {
            fn(b);
        }
        others_done(b);
    }
    for (struct tbuf *b = registry; b; b = b->next) {
        if (b->quiet_later) {
            b->quiet_later = 0;
            buf_lock(&b->lock);
            others_want(b);
            others_barrier();
            others_wait(b);
            fn(b);
            others_done(b);
        }
    }
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

static void batch_reset(struct tbuf *b)
{
    atomic_store_explicit(&b->done, MEMFMT_WIRE_HEADER, memory_order_relaxed);
    b->len = MEMFMT_WIRE_HEADER;
    b->prev_seq = 0;
    uint32_t s = b->stream;
    memcpy(b->data + 4, &s, 4);
}

static void flush_locked(struct tbuf *b)
{
    if (b->len <= MEMFMT_WIRE_HEADER) {
        return;
    }
    uint32_t n = (uint32_t)(b->len - 4);
    memcpy(b->data, &n, 4);
    /* Interrupted during the write, a crash handler cannot know whether
     * the batch went out: it sends nothing rather than twice. */
    atomic_store_explicit(&b->done, MEMFMT_WIRE_HEADER, memory_order_release);
    pipe_send(b->data, b->len);
    batch_reset(b);
}

static void ensure_room(struct tbuf *b, size_t need)
{
    if (b->len + need > MEMFMT_WIRE_BATCH) {
        flush_locked(b);
    }
}

static void put(struct tbuf *b, uint64_t v)
{
    b->len += memfmt_put_varint(b->data + b->len, v);
}

/* Callers hold the buffer lock: see the ordering argument at the top. */
/* Where the kernel keeps time with the TSC it has checked that the
 * counters of all CPUs agree, and RDTSCP gives a number that orders events
 * across threads without a shared cache line to fight over: it waits for
 * every earlier instruction and load, and no later store can become visible
 * before it. Elsewhere, one atomic counter. */
static int use_tsc;

/* While a single thread records, nobody else takes numbers: a plain
 * increment does (an atomic one costs as much as the rest of the event,
 * mostly for the barrier it implies). The first buffer of a second thread
 * switches to the atomic counter for good, in seq_go_shared(). */
static atomic_int seq_shared;

static uint64_t take_seq(void)
{
#if defined(__x86_64__)
    if (use_tsc) {
        unsigned aux;
        return __builtin_ia32_rdtscp(&aux);
    }
#endif
    if (!atomic_load_explicit(&seq_shared, memory_order_relaxed)) {
        uint64_t s = atomic_load_explicit(&seq_counter, memory_order_relaxed);
        atomic_store_explicit(&seq_counter, s + 1, memory_order_relaxed);
        return s;
    }
    return atomic_fetch_add(&seq_counter, 1);
}

/* Called with the registry held, before a second buffer joins it. Every
 * number is taken inside a buffer's critical section: after the switch,
 * waiting once for each owner to be outside it (the flush's protocol)
 * leaves no plain increment in flight, and every later section reads
 * seq_shared = 1 (see owner_lock() for why the owner's side needs no
 * barrier of its own). */
static void quiet(struct tbuf *b)
{
    (void)b;
}

static void seq_go_shared(void)
{
    atomic_store(&seq_shared, 1);
    for_each_quiet(quiet);
}

static int tsc_is_clocksource(void)
{
#if defined(__x86_64__)
    char buf[16] = {0};
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    ssize_t n = read(fd, buf, sizeof buf - 1);
    sys_close(fd);
    return n >= 3 && memcmp(buf, "tsc", 3) == 0 && (n == 3 || buf[3] == '\n');
#else
    return 0;
#endif
}

static void put_seq(struct tbuf *b, uint64_t s)
{
    put(b, s - b->prev_seq);
    b->prev_seq = s;
}

/* An event's tag and its number, taken now: callers hold the buffer and
 * call it where the ordering rule (top of file) puts the number. */
static inline void put_numbered(struct tbuf *b, uint8_t tag)
{
    uint64_t s = take_seq();
    b->data[b->len++] = tag;
    put_seq(b, s);
}

/* ---- thread buffers ---- */

static void emit_node(void *ctx, uint32_t parent, uint64_t ip)
{
    struct tbuf *b = ctx;
    /* A new frame in a module not announced yet (loaded a moment ago, maybe
     * running its constructor): announce it now, before the node. */
    if (ip && new_frame) {
        new_frame(ip);
    }
    ensure_room(b, 1 + 2 * MEMFMT_VARINT_MAX);
    b->data[b->len++] = MEMFMT_W_NODE;
    put(b, parent);
    put(b, ip);
}

static void say_hello(struct tbuf *b)
{
    b->data[b->len++] = MEMFMT_W_HELLO;
    put(b, (uint64_t)b->tid);
}

static struct tbuf *tbuf_create(void)
{
    struct tbuf *b = mem_map(sizeof *b);
    if (!b) {
        return NULL;
    }
    b->stream = atomic_fetch_add(&next_stream, 1);
    b->tid = gettid_cached();
    b->orphan = tstate.exited;
    b->tree_gen = atomic_load(&tree_gen);
    unwind_thread_init(&b->unwind);
    batch_reset(b);
    say_hello(b);
    reg_acquire();
    if (registry && !atomic_load(&seq_shared)) {
        seq_go_shared();
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
static void put_counts(struct tbuf *b)
{
    if (!opts.sample_rate) {
        return;
    }
    ensure_room(b, 1 + 2 * MEMFMT_VARINT_MAX);
    b->data[b->len++] = MEMFMT_W_COUNTS;
    put(b, atomic_load_explicit(&b->calls, memory_order_relaxed));
    put(b, atomic_load_explicit(&b->bytes, memory_order_relaxed));
}

/* Called by the owner at its exit, outside the hooks. */
static void tbuf_destroy(struct tbuf *b)
{
    owner_lock(b);
    put_counts(b);
    ensure_room(b, 1);
    b->data[b->len++] = MEMFMT_W_BYE;
    flush_locked(b);
    owner_unlock(b);
    unregister(b);
    tracetree_release(&b->tree);
    unwind_thread_release(&b->unwind);
    mem_unmap(b, sizeof *b);
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

/* Modules went away: node ids restart with a new stream, so memrec never
 * confuses old and new trees of one thread. */
static __attribute__((noinline)) void restart_tree(struct tbuf *b, uint32_t g)
{
    flush_locked(b);
    tracetree_release(&b->tree);
    b->tree_gen = g;
    b->stream = atomic_fetch_add(&next_stream, 1);
    batch_reset(b);
    say_hello(b);
}

static void emit_deferred(struct tbuf *b);

/* Lock this thread's buffer, creating it on first use, and restart its
 * trace tree if modules went away since it was built. What signal handlers
 * queued while the thread was inside the recorder goes first: it happened
 * before the event the caller is about to number. */
static inline __attribute__((always_inline)) struct tbuf *lock_mine(void)
{
    struct tbuf *b = tstate.buf;
    if (!b) {
        b = tbuf_create();
        if (!b) {
            return NULL;
        }
        tstate.buf = b;
    }
    owner_lock(b);
    b->owner_holds = 1;
    uint32_t g = atomic_load_explicit(&tree_gen, memory_order_relaxed);
    if (__builtin_expect(b->tree_gen != g, 0)) {
        restart_tree(b, g);
    }
    if (__builtin_expect(tstate.deferred, 0)) {
        emit_deferred(b);
    }
    return b;
}

static inline __attribute__((always_inline)) void unlock_mine(struct tbuf *b)
{
    if (b->len > MEMFMT_WIRE_BATCH - EVENT_ROOM || atomic_load_explicit(&direct, memory_order_relaxed)) {
        flush_locked(b);
    }
    atomic_store_explicit(&b->done, b->len, memory_order_release);
    b->owner_holds = 0;
    owner_unlock(b);
}

static uint32_t capture(struct tbuf *b)
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
    return tracetree_insert(&b->tree, ips, n, hash, emit_node, b);
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
static int sampled(void *p, size_t size)
{
    return count_call(size) && sample_hit(size) && sample_add(p);
}

void buffer_alloc(unsigned kind, void *p, size_t size)
{
    if (opts.sample_rate && !sampled(p, size)) {
        return;
    }
    struct tbuf *b = lock_mine();
    if (!b) {
        return;
    }
    uint32_t trace = capture(b);
    ensure_room(b, EVENT_ROOM);
    put_numbered(b, MEMFMT_W_ALLOC);
    put(b, kind);
    put(b, size);
    put(b, (uint64_t)(uintptr_t)p);
    put(b, trace);
    unlock_mine(b);
}

void buffer_free(unsigned kind, void *p)
{
    if (opts.sample_rate && !sample_remove(p)) {
        return; /* not a sampled block */
    }
    struct tbuf *b = lock_mine();
    if (!b) {
        return;
    }
    ensure_room(b, EVENT_ROOM);
    put_numbered(b, MEMFMT_W_FREE);
    put(b, kind);
    put(b, (uint64_t)(uintptr_t)p);
    unlock_mine(b);
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
    uint32_t trace = tag == MEMFMT_W_POOL_ALLOC ? capture(b) : 0;
    ensure_room(b, EVENT_ROOM);
    put_numbered(b, (uint8_t)tag);
    put(b, (uint64_t)(uintptr_t)pool);
    if (tag != MEMFMT_W_POOL_RESET) {
        put(b, (uint64_t)(uintptr_t)p);
    }
    if (tag == MEMFMT_W_POOL_ALLOC) {
        put(b, size);
        put(b, trace);
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
    return take_seq();
}

void buffer_realloc_end(uint64_t seq_free, unsigned kind, void *old, void *p, size_t size)
{
    struct tbuf *b = tstate.buf;
    if (!seq_free || !b) {
        return;
    }
    if (__builtin_expect(tstate.deferred, 0)) {
        emit_deferred(b); /* handlers that ran during the call */
    }
    if (!p && (size != 0 || !old)) {
        /* Failed: nothing was freed or allocated. */
        unlock_mine(b);
        return;
    }
    uint32_t trace = p ? capture(b) : 0;
    ensure_room(b, EVENT_ROOM);
    uint64_t s2 = take_seq();
    if (!p) {
        /* realloc(old, 0) freed old and returned NULL: a free. */
        b->data[b->len++] = MEMFMT_W_FREE;
        put_seq(b, seq_free);
        put(b, kind);
        put(b, (uint64_t)(uintptr_t)old);
    } else if (!old) {
        b->data[b->len++] = MEMFMT_W_ALLOC;
        put_seq(b, s2);
        put(b, kind);
        put(b, size);
        put(b, (uint64_t)(uintptr_t)p);
        put(b, trace);
    } else {
        b->data[b->len++] = MEMFMT_W_REALLOC;
        put_seq(b, seq_free);
        put_seq(b, s2);
        put(b, kind);
        put(b, (uint64_t)(uintptr_t)old);
        put(b, (uint64_t)(uintptr_t)p);
        put(b, size);
        put(b, trace);
    }
    unlock_mine(b);
}

/* ---- calls queued by signal handlers (sigdefer.c) ---- */

/* A queued call's stack: its call site, then the gap marker that says
 * its callers are not known (docs/capture.md, "Signals and threads"). */
static uint32_t trace_of(struct tbuf *b, const struct sigdefer_event *e)
{
    const uint64_t ips[2] = {e->site, 0};
    uint64_t h = stack_hash_step(stack_hash_step(STACK_HASH_SEED, ips[1]), ips[0]);
    uint32_t leaf = tracetree_lookup(&b->tree, 2, h);
    return leaf ? leaf : tracetree_insert(&b->tree, ips, 2, h, emit_node, b);
}

static void emit_free(struct tbuf *b, unsigned kind, void *p)
{
    if (opts.sample_rate && !sample_remove(p)) {
        return;
    }
    ensure_room(b, EVENT_ROOM);
    put_numbered(b, MEMFMT_W_FREE);
    put(b, kind);
    put(b, (uint64_t)(uintptr_t)p);
}

static void emit_alloc(struct tbuf *b, const struct sigdefer_event *e)
{
    if (opts.sample_rate && !sampled(e->p, e->size)) {
        return;
    }
    uint32_t trace = trace_of(b, e);
    ensure_room(b, EVENT_ROOM);
    put_numbered(b, MEMFMT_W_ALLOC);
    put(b, e->kind);
    put(b, e->size);
    put(b, (uint64_t)(uintptr_t)e->p);
    put(b, trace);
}

static void emit_one(struct tbuf *b, const struct sigdefer_event *e)
{
    if (e->op == SIGDEFER_FREE || (e->op == SIGDEFER_REALLOC && !e->p)) {
        emit_free(b, e->kind, e->old);
        return;
    }
    if (e->op == SIGDEFER_ALLOC || !e->old) {
        emit_alloc(b, e);
        return;
    }
    if (opts.sample_rate) {
        /* As do_realloc() samples: the parts apart, each if sampled. */
        emit_free(b, e->kind, e->old);
        emit_alloc(b, e);
        return;
    }
    uint32_t trace = trace_of(b, e);
    ensure_room(b, EVENT_ROOM);
    uint64_t s1 = take_seq();
    uint64_t s2 = take_seq();
    b->data[b->len++] = MEMFMT_W_REALLOC;
    put_seq(b, s1);
    put_seq(b, s2);
    put(b, e->kind);
    put(b, (uint64_t)(uintptr_t)e->old);
    put(b, (uint64_t)(uintptr_t)e->p);
    put(b, e->size);
    put(b, trace);
}

/* Handlers run to their end before this thread goes on, so every slot
 * below `reserved` is complete when read here; slots a handler takes while
 * this runs are found by the compare-exchange, which fails then. */
static void emit_deferred(struct tbuf *b)
{
    struct sigdefer_queue *q = tstate.sigq;
    tstate.deferred = 0;
    atomic_signal_fence(memory_order_seq_cst);
    if (!q) {
        return;
    }
    unsigned from = 0;
    for (;;) {
        unsigned n = atomic_load(&q->reserved);
        for (unsigned i = from; i < n && i < SIGDEFER_MAX; i++) {
            emit_one(b, &q->ev[i]);
        }
        from = n;
        if (atomic_compare_exchange_strong(&q->reserved, &n, 0)) {
            return;
        }
    }
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

/* ---- direct mappings (maphooks.c) ---- */

void buffer_map(uintptr_t addr, size_t len)
{
    struct tbuf *b = lock_mine();
    if (!b) {
        return;
    }
    uint32_t trace = capture(b);
    ensure_room(b, EVENT_ROOM);
    put_numbered(b, MEMFMT_W_MAP);
    put(b, addr);
    put(b, len);
    put(b, trace);
    unlock_mine(b);
}

/* As for realloc, the buffer stays locked from begin to end: the number
 * taken before the call cannot be declared complete before it is written. */
uint64_t buffer_map_begin(void)
{
    return buffer_realloc_begin();
}

void buffer_map_end(uint64_t seq, unsigned tag, unsigned kind, uintptr_t old, size_t old_len, uintptr_t p, size_t len)
{
    struct tbuf *b = tstate.buf;
    if (!seq || !b) {
        return;
    }
    uint32_t trace = tag == MEMFMT_W_BRK && p > old ? capture(b) : 0;
    ensure_room(b, EVENT_ROOM);
    b->data[b->len++] = (uint8_t)tag;
    if (tag == MEMFMT_W_UNMAP) {
        put_seq(b, seq);
        put(b, kind);
        put(b, old);
        put(b, old_len);
    } else if (tag == MEMFMT_W_MREMAP) {
        put_seq(b, seq);
        put_seq(b, take_seq());
        put(b, old);
        put(b, old_len);
        put(b, p);
        put(b, len);
    } else {
        /* The break: growth is numbered after the call, like an allocation;
         * shrinking before it, like a free. */
        put_seq(b, p > old ? take_seq() : seq);
        put(b, old);
        put(b, p);
        put(b, trace);
    }
    unlock_mine(b);
}

void buffer_map_cancel(uint64_t seq)
{
    struct tbuf *b = tstate.buf;
    if (seq && b) {
        unlock_mine(b);
    }
}

static void append_record(struct tbuf *b, const uint8_t *rec, size_t len)
{
    if (len + 1 + 2 * MEMFMT_VARINT_MAX > MEMFMT_WIRE_BATCH - MEMFMT_WIRE_HEADER - 8) {
        return;
    }
    ensure_room(b, len + 1 + 2 * MEMFMT_VARINT_MAX);
    put_numbered(b, MEMFMT_W_RECORD);
    put(b, len);
    memcpy(b->data + b->len, rec, len);
    b->len += len;
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
        return;
    }
    append_record(b, rec, len);
    unlock_mine(b);
}

/* ---- crash ---- */

static int lock_bounded(atomic_int *l, int (*wait_more)(int64_t *))
{
    int64_t deadline = 0;
    while (atomic_exchange_explicit(l, 1, memory_order_acquire)) {
        if (!wait_more(&deadline)) {
            return 0;
        }
    }
    return 1;
}

static void flush_one_from_signal(struct tbuf *b, int mine, int (*wait_more)(int64_t *))
{
    if (mine && b->owner_holds) {
        /* The interrupted code holds the lock (say, abort() inside the real
         * realloc): nobody else touches the buffer, and the events before
         * the one being written are complete. */
        size_t done = atomic_load_explicit(&b->done, memory_order_acquire);
        if (done > MEMFMT_WIRE_HEADER) {
            b->len = done;
            flush_locked(b);
        }
        return;
    }
    if (!lock_bounded(&b->lock, wait_more)) {
        return;
    }
    others_want(b);
    others_barrier();
    int64_t deadline = 0;
    while (asym && atomic_load_explicit(&b->busy, memory_order_acquire)) {
        if (!wait_more(&deadline)) {
            others_done(b); /* its owner is stuck inside the recorder: leave it */
            return;
        }
    }
    put_counts(b);
    flush_locked(b);
    others_done(b);
}

void buffer_flush_from_signal(int (*wait_more)(int64_t *))
{
    struct tbuf *mine = tstate.buf;
    int64_t deadline = 0;
    int have_registry = 1;
    while (pthread_mutex_trylock(&reg_lock) != 0) {
        if (!wait_more(&deadline)) {
            have_registry = 0;
            break;
        }
    }
    if (!have_registry) {
        if (mine) {
            flush_one_from_signal(mine, 1, wait_more);
        }
        return;
    }
    for (struct tbuf *b = registry; b; b = b->next) {
        flush_one_from_signal(b, b == mine, wait_more);
    }
    pthread_mutex_unlock(&reg_lock);
}

void buffer_say_signaled(int sig)
{
    /* A batch of its own, built on the stack: the service buffer's lock
     * may be held by the thread that crashed. memrec needs this only for
     * processes it is not the parent of (--follow-fork). */
    uint8_t b[MEMFMT_WIRE_HEADER + 1 + MEMFMT_VARINT_MAX];
    size_t n = MEMFMT_WIRE_HEADER;
    b[n++] = MEMFMT_W_SIGNALED;
    n += memfmt_put_varint(b + n, (uint64_t)sig);
    uint32_t len = (uint32_t)(n - 4), stream = 0;
    memcpy(b, &len, 4);
    memcpy(b + 4, &stream, 4);
    pipe_send(b, n);
}

void buffer_modules_gone(void)
{
    atomic_fetch_add(&tree_gen, 1);
}

/* ---- flush rounds (the service thread, exit, exec, detach) ---- */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A buffer whose thread exited after its exit destructor ran has no owner
 * left to flush it: the service thread flushes and reclaims it. */
static int owner_gone(const struct tbuf *b)
{
    return b->orphan && syscall(SYS_tgkill, getpid(), b->tid, 0) < 0 && errno == ESRCH;
}

static void flush_one(struct tbuf *b)
{
    put_counts(b);
    flush_locked(b);
}

static void flush_all(void)
{
    struct tbuf *dead = NULL;
    reg_acquire();
    for_each_quiet(flush_one);
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
        mem_unmap(b, sizeof *b);
    }
}

static void sync_point(void)
{
    uint64_t s = use_tsc ? take_seq() : atomic_load(&seq_counter);
    uint64_t ms = now_ms();
    flush_all();
    buf_lock(&service_buf.lock);
    ensure_room(&service_buf, EVENT_ROOM);
    service_buf.data[service_buf.len++] = MEMFMT_W_SYNC;
    put_seq(&service_buf, s);
    put(&service_buf, ms);
    put(&service_buf, 0);
    flush_locked(&service_buf);
    buf_unlock(&service_buf.lock);
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
    uint64_t s = use_tsc ? take_seq() : atomic_load(&seq_counter) - 1; /* the counter starts at 1 */
    buf_lock(&service_buf.lock);
    ensure_room(&service_buf, len + 1 + 2 * MEMFMT_VARINT_MAX);
    service_buf.data[service_buf.len++] = MEMFMT_W_RECORD;
    put_seq(&service_buf, s);
    put(&service_buf, len);
    memcpy(service_buf.data + service_buf.len, rec, len);
    service_buf.len += len;
    buf_unlock(&service_buf.lock);
}

uint64_t buffer_events_taken(void)
{
    return use_tsc ? 0 : atomic_load_explicit(&seq_counter, memory_order_relaxed);
}

/* ---- set-up, exit, fork, exec ---- */

/* The first batch of a process image says so: after an exec the new image
 * writes into the pipe its predecessor used, and memrec must know where
 * one ends and the next begins (sequence numbers and streams restart). */
static void say_image(void)
{
    buf_lock(&service_buf.lock);
    batch_reset(&service_buf);
    service_buf.data[service_buf.len++] = MEMFMT_W_IMAGE;
    put(&service_buf, (uint64_t)getpid());
    flush_locked(&service_buf);
    buf_unlock(&service_buf.lock);
}

int buffer_setup(int fd, void (*on_new_frame)(uint64_t ip))
{
    static int once;
    if (!once) {
        use_tsc = opts.tsc_order && tsc_is_clocksource();
        asym_setup();
        if (opts.sample_rate && sample_setup() < 0) {
            return -1;
        }
        if (pthread_key_create(&exit_key, on_thread_exit) != 0) {
            return -1;
        }
        once = 1;
    }
    new_frame = on_new_frame;
    pipe_open(fd);
    atomic_store(&direct, 0);
    service_buf.stream = 0;
    say_image();
    atomic_store(&rec_enabled, 1);
    return 0;
}

void buffer_finish(int status)
{
    atomic_store(&direct, 1);
    sync_point();
    buf_lock(&service_buf.lock);
    ensure_room(&service_buf, 1 + MEMFMT_VARINT_MAX);
    service_buf.data[service_buf.len++] = MEMFMT_W_EXITING;
    put(&service_buf, status >= 0 ? (uint64_t)status + 1 : 0);
    flush_locked(&service_buf);
    buf_unlock(&service_buf.lock);
}

void buffer_detach(void)
{
    sync_point();
    atomic_store(&rec_enabled, 0);
    /* Events of calls that were already inside a hook. */
    sync_point();
    pipe_close();
}

void buffer_before_exec(void)
{
    sync_point();
}

void buffer_sync(void)
{
    sync_point();
}

void buffer_forget(void)
{
    /* The child must not write into the parent's recording: its copies of
     * the buffers hold the parent's events. They are left as they are
     * (pages shared with the parent until written). */
    atomic_store(&rec_enabled, 0);
    pipe_forget();
    registry = NULL;
    if (asym) {
        asym_setup(); /* a new address space: register it too */
    }
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    reg_lock = fresh; /* it may have been held by a thread that does not exist here */
    atomic_store(&service_buf.lock, 0);
    service_buf.owner_holds = 0;
    tstate.buf = NULL;
    if (opts.sample_rate) {
        sample_forget();
    }
}
