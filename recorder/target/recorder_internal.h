// SPDX-License-Identifier: MIT
/* Cross-file declarations of the recorder library, grouped by the file that
 * defines them. Everything here runs inside the target process: nothing may
 * call the hooked malloc, use stdio, or take a process-wide lock on the path
 * of an allocation. */
#ifndef RECORDER_INTERNAL_H
#define RECORDER_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hidden.h"

/* ---- resolve.c: the next allocator in the chain ---- */

struct real_funcs {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void *(*reallocarray)(void *, size_t, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
};

HIDDEN extern struct real_funcs real;

/** Resolve the real functions with dlsym(RTLD_NEXT). Safe to call from any
 * hook, any number of times; while it runs, allocations are served from a
 * static bootstrap pool. Aborts only if malloc/free cannot be found. */
HIDDEN void resolve_init(void);
/** True while resolve_init() is looking symbols up on this thread. */
HIDDEN int resolve_in_progress(void);
/** Bootstrap pool: allocation used before dlsym works. */
HIDDEN void *resolve_pool_alloc(size_t size, size_t align);
#define RESOLVE_POOL_SIZE (256u << 10)
/* The bootstrap pool itself (resolve.c), visible for the inline test below. */
HIDDEN extern unsigned char resolve_pool[RESOLVE_POOL_SIZE];

/** True if `p` came from the bootstrap pool (such blocks are never freed).
 * Inline: every free asks. */
static inline int resolve_pool_owns(const void *p)
{
    return (uintptr_t)p - (uintptr_t)resolve_pool < RESOLVE_POOL_SIZE;
}
/** Usable size of a pool block (for realloc out of the pool). */
HIDDEN size_t resolve_pool_size(const void *p);
/** From now on look the real functions up as the program sees them
 * (RTLD_DEFAULT): the recorder was loaded into a running process. */
HIDDEN void resolve_use_default(void);
/** Look up a C++ operator of the next library; NULL when none is loaded. */
HIDDEN void *resolve_next(const char *name);

/* ---- preload.c: the interposed functions, by number ---- */

#define PRELOAD_C_HOOKS 10 /* malloc ... pvalloc, in the order of struct real_funcs */
#define PRELOAD_HOOKS (PRELOAD_C_HOOKS + 20) /* then the twenty C++ operators new and delete */

/** Symbol name of interposed function i, 0 <= i < PRELOAD_HOOKS. */
HIDDEN const char *preload_hook_name(int i);
/** The function that interposed function i forwards to (the next
 * definition: glibc's, or a malloc preloaded after us), NULL when none is
 * loaded. May call dlsym: the caller holds tstate.in_hook. */
HIDDEN void *preload_hook_next(int i);

/* ---- guard.c: per-thread reentrancy state ---- */

struct tbuf;

struct thread_state {
    int in_hook; /* inside the recorder on this thread: nested calls pass through */
    struct tbuf *buf; /* this thread's event buffer, NULL until its first event */
    int exited; /* thread-exit destructor ran */
    void *frame; /* frame of the interposed function being recorded */
    int64_t sample_left; /* sampling: bytes until the next sample */
    uint64_t rng; /* sampling: random state, 0 until first used */
    struct tbuf *counted; /* sampling: the buffer calls_at and bytes_at point into */
    atomic_uint_fast64_t *calls_at, *bytes_at; /* sampling: its exact counters */
    pid_t tid; /* gettid(), 0 until first asked */
    int deferred; /* a signal handler queued calls in sigq (sigdefer.c) */
    int in_unwind; /* inside libunwind: a handler must not walk */
    struct sigdefer_queue *sigq; /* mapped at a handler's first queued call */
};

/** This thread's kernel id, asked once. */
HIDDEN pid_t gettid_cached(void);

HIDDEN extern __thread struct thread_state tstate __attribute__((tls_model("initial-exec")));

/* ---- options.c ---- */

struct rec_options {
    int max_depth; /* frames kept per stack */
    int verbose; /* MEMREC_VERBOSE */
    int freeres; /* free the C++ runtime's one-time pool at exit */
    int flush_ms; /* service thread period */
    int fast_unwind; /* use cfi.c before libunwind */
    int check_unwind; /* compare cfi.c with libunwind on every stack */
    int sample_rate; /* 0: record everything; else mean bytes between sampled allocations */
    int sample_seed; /* 0: a different sample every run */
    int tsc_order; /* order events by the TSC where the kernel trusts it */
};

HIDDEN extern struct rec_options opts;

/** Read MEMREC_* from `envp` (no getenv: it must work before libc is
 * fully set up, and never allocates). */
HIDDEN void options_init(char **envp);
/** Find `name`'s value in `envp`, or NULL. */
HIDDEN const char *options_env(char **envp, const char *name);

/* ---- log.c ---- */

/** Write one line "memrec: <msg>" to stderr with write(2), at most
 * 20 lines per process. Async-signal-safe, never allocates. */
HIDDEN void log_msg(const char *msg, const char *detail);
/** Write `v` in decimal into buf, NUL-terminated; returns the number of
 * digits. buf must hold LOG_U64_CHARS bytes (the recorder's only number
 * formatting: no stdio in the target). Async-signal-safe, never allocates. */
#define LOG_U64_CHARS 21
HIDDEN size_t log_fmt_u64(char *buf, uint64_t v);

/* ---- unwind.c ---- */

#include "cfi.h" /* UNWIND_MAX_DEPTH, struct cfi_cache, the stack hash */

/** In a signal handler that interrupted the recorder: the stack with
 * libunwind, without the recorder's frames, or 0 frames when the
 * interrupted code was itself inside libunwind (not reentrant) or
 * libunwind is not used. Async-signal-safe otherwise. */
HIDDEN int unwind_capture_in_signal(uint64_t *ips, int max);
/** Set up libunwind (caching policy) and learn our own text range and
 * libunwind's. */
HIDDEN void unwind_init(void);
/** Whether return address `ret` lies in libunwind's code. */
HIDDEN int unwind_is_caller(const void *ret);
/** pipe2() for libunwind's address checks: the pair goes near the top of
 * the program's descriptor range, and `fds` (libunwind's array) is
 * remembered for unwind_fd_closing(). -1 with errno when there is no room. */
HIDDEN int unwind_pipe2(int fds[2], int flags);
/** The program closes or replaces descriptors lo..hi: if libunwind's pair
 * is among them, it is dropped (libunwind opens another when it needs one). */
HIDDEN void unwind_fd_closing(int lo, int hi);
/** Never use libunwind (attached: it would leave descriptors behind);
 * stacks the fast walker cannot take are recorded without frames. */
HIDDEN void unwind_without_libunwind(void);
/* Per-thread unwinding state: the rule cache and the top of the stack. */
struct unwind_ctx {
    struct cfi_cache *cache; /* NULL: use libunwind only */
    uintptr_t stack_lo, stack_hi; /* this thread's stack, from pthread_getattr_np */
};

/** Prepare `u` for the calling thread (maps its cache). */
HIDDEN void unwind_thread_init(struct unwind_ctx *u);
/** Print the MEMREC_CHECK_UNWIND result, if that check is on. */
HIDDEN void unwind_report(void);
/** Release what unwind_thread_init() took. */
HIDDEN void unwind_thread_release(struct unwind_ctx *u);
/** Capture the caller's stack into `ips`, innermost first, skipping the
 * recorder's own frames wherever they are (deepbind_dlopen() between the
 * program's dlopen() and the loader). At most `max` entries; when the stack is deeper,
 * keeps the innermost quarter and the outermost rest, with a 0 entry marking
 * the gap. Returns the number of entries; *hash gets the stack's hash. */
HIDDEN int unwind_capture(struct unwind_ctx *u, uint64_t *ips, int max, uint64_t *hash);
/** The same, but the addresses may be left for unwind_fill(): *deferred
 * says whether they were (most stacks are known by their hash alone). */
HIDDEN int unwind_capture_hash(struct unwind_ctx *u, uint64_t *ips, int max, uint64_t *hash, int *deferred);
/** Write the addresses unwind_capture_hash() deferred (n of them). */
HIDDEN void unwind_fill(struct unwind_ctx *u, uint64_t *ips, int n);

/* ---- tracetree.c: stack -> trace id, per thread ---- */

#define TRACETREE_CACHE 4096

/* Whole stacks seen recently: hash of the ips -> leaf id. */
struct tracetree_hit {
    uint64_t hash;
    uint32_t leaf;
};

struct tracetree {
    uint64_t *keys_ip; /* open addressing; 0 ip = empty */
    uint32_t *keys_parent;
    uint32_t *ids;
    uint32_t cap; /* power of two */
    uint32_t count; /* nodes so far; ids are 1..count */
    size_t map_bytes;
    struct tracetree_hit *cache; /* TRACETREE_CACHE entries, mmap'd on first use */
};

/** Called for each new node so it can be written out before its first use. */
typedef void (*tracetree_emit_fn)(void *ctx, uint32_t parent, uint64_t ip);

/** The leaf id of a stack of n frames with stack hash `hash` if the tree
 * knows it from a recent insertion, else 0 (then insert it). */
HIDDEN uint32_t tracetree_lookup(struct tracetree *t, int n, uint64_t hash);
/** Insert the path of `ips` (innermost first), whose stack hash is `hash`,
 * and return the leaf id. New nodes are reported through `emit`, parents
 * first. Returns 0 if the tree cannot grow (mmap failed). */
HIDDEN uint32_t tracetree_insert(struct tracetree *t, const uint64_t *ips, int n, uint64_t hash, tracetree_emit_fn emit,
                                 void *ctx);
/** Unmap the tree's memory and reset it to empty. */
HIDDEN void tracetree_release(struct tracetree *t);

/* ---- buffer.c: per-thread buffers, sequence numbers, flush rounds ---- */

/** Set up the pipe and start recording. `new_frame` is called (inside the
 * recorder, the thread's buffer held) for every frame a thread's trace tree
 * meets for the first time: modules_note_frame(). Returns 0 or -1
 * (recording off). */
HIDDEN int buffer_setup(int fd, void (*new_frame)(uint64_t ip));
/** A flush round: take a sequence number S, flush every thread's buffer,
 * send SYNC(S) (the service thread, every flush period). */
HIDDEN void buffer_sync(void);
/** Detach: flush everything, stop recording, and close the pipe (the
 * caller stops the service thread first: service_stop()). A later buffer_setup() starts again. Called by the
 * service thread (attach_disarm()), which owns no buffer: the flush waits
 * for every owner to leave its buffer, so a thread that owns one must never
 * call it. */
HIDDEN void buffer_detach(void);
/** Record an allocation / free / realloc of this thread. */
HIDDEN void buffer_alloc(unsigned kind, void *p, size_t size);
HIDDEN void buffer_free(unsigned kind, void *p);
/** Realloc is recorded in two parts around the real call, so that another
 * thread's reuse of the old address is ordered after the free. */
HIDDEN uint64_t buffer_realloc_begin(void);
HIDDEN void buffer_realloc_end(uint64_t seq_free, unsigned kind, void *old, void *p, size_t size);
/** Send an already encoded file record (module list, process) in order.
 * May be called while the thread is recording an event. */
HIDDEN void buffer_record(const uint8_t *rec, size_t len);
/** Modules were unloaded: every thread restarts its trace tree, so that a
 * new module at the same address never inherits old nodes. */
HIDDEN void buffer_modules_gone(void);
/** Flush every thread's buffer and send everything directly from now on;
 * then tell memrec the image ends normally, with `status` (-1: not known). */
HIDDEN void buffer_finish(int status);
/** Flush every thread's buffer: the process is about to exec. */
HIDDEN void buffer_before_exec(void);
/** In a forked child: drop all state without touching the parent's pipe. */
HIDDEN void buffer_forget(void);
/** From a fatal signal's handler: send every thread's pending events.
 * Async-signal-safe; waits for each lock only as `wait_more` allows (it
 * naps and returns 1, or returns 0 when this lock's wait or the whole
 * flush's time is over; its *deadline starts at 0 for each lock), so a
 * lock held by the interrupted code or a stuck thread costs that buffer,
 * never a deadlock. The interrupted thread's own buffer, when that thread
 * was holding it, is sent up to its last complete event. */
HIDDEN void buffer_flush_from_signal(int (*wait_more)(int64_t *deadline));
/** From a fatal signal's handler, after the flush: tell memrec the process
 * dies of `sig`. Async-signal-safe. */
HIDDEN void buffer_say_signaled(int sig);

/** Record a pool event of include/memrec.h (wire tag MEMFMT_W_POOL_ALLOC,
 * _FREE or _RESET; `p` and `size` only where the tag has them). An
 * allocation gets the caller's stack and, when sampling, goes through the
 * same sampling as malloc; frees and resets are always sent, memrec
 * ignores those of blocks it does not know. Called between enter/leave. */
HIDDEN void buffer_pool(unsigned tag, const void *pool, const void *p, size_t size);

/** Direct mappings (maphooks.c); recorded in full even when sampling.
 * buffer_map: an anonymous range was mapped; the stack is captured.
 * Calls that unmap take a number before the real call (the buffer stays
 * locked) and end with exactly one of buffer_map_end (success: tag is
 * MEMFMT_W_UNMAP with kind, old, old_len; MEMFMT_W_MREMAP with all four;
 * MEMFMT_W_BRK with old and new break in old and p) or buffer_map_cancel
 * (the call failed). */
HIDDEN void buffer_map(uintptr_t addr, size_t len);
HIDDEN uint64_t buffer_map_begin(void);
HIDDEN void buffer_map_end(uint64_t seq, unsigned tag, unsigned kind, uintptr_t old, size_t old_len, uintptr_t p,
                           size_t len);
HIDDEN void buffer_map_cancel(uint64_t seq);

/** Send the calls signal handlers queued on this thread (sigdefer.c)
 * while it was inside the recorder. Called between the recorder's entry
 * and exit marks (hook_send_deferred() in init.c sets them). */
HIDDEN void buffer_send_deferred(void);

/** Global switches read on the hot path. */
HIDDEN extern atomic_int rec_enabled;

/* ---- conn.c: reaching memrec ---- */

/** Read MEMREC_SOCK, MEMREC_TARGET and MEMREC_FOLLOW from `envp`. */
HIDDEN void conn_init(char **envp);
/** Whether memrec wants this process recorded (it is the process memrec
 * started, or memrec follows forks). */
HIDDEN int conn_wanted(void);
/** Whether memrec records fork children too (--follow-fork). */
HIDDEN int conn_follows_forks(void);
/** Ask memrec for the pipe (enum memfmt_conn_kind). Returns a close-on-exec
 * descriptor placed high, or -1 (memrec absent, refused, unreachable). */
HIDDEN int conn_open(int kind);
/** close(2) without our own close() hook. */
HIDDEN int sys_close(int fd);
/** Move `fd` to a close-on-exec descriptor near the top of the program's
 * range (RLIMIT_NOFILE, at most 1024), so that the program's own open()
 * calls get the numbers they would get without us. Returns the new
 * descriptor (the old one is closed), or -1 when there is no room up
 * there (`fd` is left as it was). */
HIDDEN int conn_move_high(int fd);

/* ---- envhide.c: memrec's variables, out of the program's sight ---- */

#define ENVHIDE_LOCAL_ENTRIES 160

/** Where envhide_for_exec() builds an environment: on the caller's stack
 * when it is small (an exec after vfork() must not leave a mapping in the
 * parent), else in memory of its own. */
struct envhide_space {
    char **arr; /* mmap'd array, or NULL */
    size_t arr_bytes;
    char *str; /* mmap'd LD_PRELOAD string, or NULL */
    size_t str_bytes;
    char *local[ENVHIDE_LOCAL_ENTRIES];
    char preload_local[1024];
};

/** Started by memrec: take the variables memrec added out of `environ`
 * (in place: main()'s envp is the same array), keeping copies. Start-up
 * only (single-threaded, before the program's code); never allocates. */
HIDDEN void envhide_init(void);
/** Whether envhide_init() took anything out. */
HIDDEN int envhide_active(void);
/** The environment to hand to an exec or spawn that continues the
 * recording: `envp` with memrec's variables put back in front (LD_PRELOAD
 * merged with the program's own). Returns `envp` itself when there is
 * nothing to add or no memory. Call envhide_release() if the exec returns.
 * Async-signal-safe (system calls only). */
HIDDEN char *const *envhide_for_exec(char *const *envp, struct envhide_space *sp);
HIDDEN void envhide_release(struct envhide_space *sp);

/* ---- syshooks.c: descriptor and exec hooks ---- */

/** Look up the next definitions of the hooked system functions. */
HIDDEN void hooks_resolve(void);

/* ---- attach.c: memrec --pid ---- */

/** Attached: hook the objects loaded since the last call (service thread).
 * Returns 1 when memrec asked for the detach (then call attach_disarm()). */
HIDDEN int attach_poll(void);
/** Undo the attach: GOT slots back, every buffer sent, recording off, the
 * pipe closed (buffer_detach()). Only the service thread calls it, at a
 * detach request or when it ends because memrec is gone; idempotent. */
HIDDEN void attach_disarm(void);

/* ---- modules.c ---- */

/** Scan loaded modules and send records for those new or gone since the
 * last scan. Cheap when nothing changed. Returns 1 if modules went away. */
HIDDEN int modules_scan(void);
/** Whether ip lies in a module already announced. */
HIDDEN int modules_contains(uint64_t ip);
/** A new stack frame at ip (buffer_setup()'s callback): when it lies in no
 * module announced yet (loaded a moment ago, maybe running its
 * constructor), scan now, so its MODULE record comes before the frame. */
HIDDEN void modules_note_frame(uint64_t ip);
/** Send the PROCESS record. */
HIDDEN void modules_send_process(char **envp);
/** A number that changes whenever a scan finds modules loaded or gone. */
HIDDEN unsigned modules_generation(void);
/** In a fork child that starts its own recording: nothing is announced yet. */
HIDDEN void modules_forget(void);

/* ---- preloaded.c: objects present only because of the user's LD_PRELOAD ---- */

/** Classify the objects loaded right now (call once, at the first module
 * scan, when only the start-up objects are loaded; later calls do
 * nothing): which are preload-only and which is ld.so. Not thread-safe:
 * called under modules.c's scan lock. Never allocates. */
HIDDEN void preloaded_classify(void);
/** MODULE flags (enum memfmt_module_flags) of the object at (bias, phdr),
 * as dl_iterate_phdr gives them; 0 for any object loaded after start-up. */
HIDDEN uint32_t preloaded_flags(uintptr_t bias, const void *phdr);

/* ---- sample.c: sampling mode ---- */

/** Map the set of live sampled blocks. Returns 0 or -1. */
HIDDEN int sample_setup(void);
/** The slow part of sample_hit(): first use on a thread, or a sample. */
HIDDEN int sample_hit_slow(size_t size);

/** Whether an allocation of `size` bytes is sampled (Poisson over bytes).
 * Inline: it runs for every allocation in sampling mode. */
static inline int sample_hit(size_t size)
{
    int64_t left = tstate.sample_left - (int64_t)size;
    if (left > 0 && tstate.rng) {
        tstate.sample_left = left;
        return 0;
    }
    return sample_hit_slow(size);
}

/** Sampling: whether an allocation of `size` bytes, if it succeeds, is
 * only to be counted, which the caller may then do inline with
 * sample_count(): no sample is due and this thread's counters are known.
 * buffer.c notes them (tstate.counted) for the buffer the thread has now,
 * and only once sample_hit() seeded the thread's random state: rng is
 * never 0 here, so this says just what sample_hit() would. Never true
 * when sampling is off: then nothing notes counters. Otherwise the
 * allocation goes to buffer_alloc(), which counts it and decides as
 * always: the same allocations are sampled. Changes nothing. Inline: every
 * allocation asks. */
static inline int sample_skips(size_t size)
{
    struct tbuf *b = tstate.buf;
    return tstate.sample_left - (int64_t)size > 0 && b && b == tstate.counted;
}

/** After sample_skips(size) and a successful allocation, with nothing
 * recorded on this thread in between: count it (one call, `size` bytes)
 * and count the bytes down to the next sample. */
static inline void sample_count(size_t size)
{
    atomic_uint_fast64_t *calls = tstate.calls_at, *bytes = tstate.bytes_at;
    atomic_store_explicit(calls, atomic_load_explicit(calls, memory_order_relaxed) + 1, memory_order_relaxed);
    atomic_store_explicit(bytes, atomic_load_explicit(bytes, memory_order_relaxed) + size, memory_order_relaxed);
    tstate.sample_left -= (int64_t)size;
}

/** Whether a hook may enter the recorder the short way, setting in_hook
 * around the real call and leaving most allocations to sample_count():
 * this thread is not inside the recorder, recording is on, and its
 * counters are known (which implies that start-up is over, the real
 * functions are resolved and sampling is on). Whether the allocation is
 * sampled is still decided after the real call, by sample_skips(). */
static inline int sample_fast(void)
{
    struct tbuf *b = tstate.buf;
    return !tstate.in_hook && atomic_load_explicit(&rec_enabled, memory_order_relaxed) && b && b == tstate.counted;
}

/** Remember a sampled block; 0 when the set has no room for it. */
HIDDEN int sample_add(void *p);
#define SAMPLE_FILTER_SIZE (1u << 15)

/* Counters of live sampled blocks per hash of their address (sample.c). */
HIDDEN extern _Atomic uint8_t *sample_filter;

static inline uint32_t sample_filter_index(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0xC2B2AE3D27D4EB4Full;
    return (uint32_t)(h >> 49) & (SAMPLE_FILTER_SIZE - 1);
}

/** False when p is certainly not a live sampled block (fast, no lock). */
static inline int sample_maybe(const void *p)
{
    return atomic_load_explicit(&sample_filter[sample_filter_index(p)], memory_order_relaxed) != 0;
}

/** True when sampling is set up in this process and p is certainly not a
 * live sampled block: its free has nothing to record. The filter, not
 * opts.sample_rate, says whether sampling is on: a process that inherited
 * MEMREC_SAMPLE_RATE but is not recorded (a program a recorded script
 * runs) has the option and no filter. */
static inline int sample_free_unseen(const void *p)
{
    _Atomic uint8_t *f = sample_filter;
    return f && atomic_load_explicit(&f[sample_filter_index(p)], memory_order_relaxed) == 0;
}

/** Forget p if it was sampled; returns whether it was. */
HIDDEN int sample_remove(void *p);
/** In a fork child that starts its own recording: no block is sampled. */
HIDDEN void sample_forget(void);

/* ---- crash.c: flushing when the program dies of a fatal signal ---- */

/** Install the flushing handler for SIGSEGV, SIGBUS, SIGILL, SIGFPE,
 * SIGABRT, SIGTRAP and SIGSYS where their disposition is SIG_DFL (the
 * program's own handlers stay). Call when recording starts; may be called
 * again (in a forked child that starts recording). */
HIDDEN void crash_install(void);

/* ---- sigdefer.c: signal handlers' calls while their thread is inside ---- */

/* Calls queued per thread during one recorded call. A recorded call can
 * wait for a second or more when memrec drains the pipe slowly (a loaded
 * machine, a sanitized memrec), while a fast timer's handler keeps
 * allocating: 2,048 slots overflowed in 100 ms of a 50 us timer. The queue
 * is 2.5 MiB of address space per thread that ever queued, of which only
 * the pages used are touched. */
#define SIGDEFER_MAX 65536

enum sigdefer_op { SIGDEFER_ALLOC, SIGDEFER_FREE, SIGDEFER_REALLOC };

struct sigdefer_event {
    uint8_t op, kind; /* enum sigdefer_op, MEMFMT_K_* */
    void *old, *p; /* free and realloc: old; alloc and realloc: p */
    size_t size;
    uint64_t site; /* return address of the call */
};

/* Filled by handlers (any nesting: slots are taken with an atomic add),
 * emptied by the thread itself when no handler runs in between. Mapped
 * lazily: only the pages used are ever touched. */
struct sigdefer_queue {
    atomic_uint reserved; /* slots taken, may exceed SIGDEFER_MAX */
    struct sigdefer_event ev[SIGDEFER_MAX];
};

/** A hook entered while its thread is inside the recorder, with `frame`
 * its own frame and tstate.frame the recorded call's: 1 when a signal
 * handler interrupted the recorder (a signal frame lies between them, or
 * this runs on another stack), 0 for the recorder's own nested calls
 * (which pass through). Async-signal-safe. */
HIDDEN int sigdefer_classify(const void *frame);
/** In a handler that interrupted the recorder: queue one call made (its
 * real function already called) for the thread to send later, with its
 * call site `site`; it is recorded with the stack [site, gap marker]. When
 * the queue is full the call is counted as lost, said once on stderr.
 * Async-signal-safe. */
HIDDEN void sigdefer_add(unsigned op, unsigned kind, void *old, void *p, size_t size, const void *site);
/** Calls that could not be queued, since start. */
HIDDEN unsigned sigdefer_lost(void);
/** The thread ends: unmap its queue. */
HIDDEN void sigdefer_release(void);

/* ---- mem.c: the recorder's own memory ---- */

/** Zeroed, page-granular memory straight from mmap; NULL on failure. */
HIDDEN void *mem_map(size_t bytes);
HIDDEN void mem_unmap(void *p, size_t bytes);

#endif
