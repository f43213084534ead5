// SPDX-License-Identifier: MIT
/* memfmt: the memrec file format. The only public description in code of
 * what a recording holds; docs/format.md is the byte-level specification.
 * Writer used by memrec, reader used by the analyzer. */
#ifndef MEMFMT_H
#define MEMFMT_H

#include <stddef.h>
#include <stdint.h>

#define MEMFMT_VERSION 4

/* ---- status codes: append only, numbers never change ---- */
enum memfmt_status {
    MEMFMT_OK = 0,
    MEMFMT_E_IO = -1, /* read/write failed; errno is kept in the handle */
    MEMFMT_E_NOT_MEMREC = -2, /* no memrec magic at the start */
    MEMFMT_E_VERSION = -3, /* written by a newer format version */
    MEMFMT_E_TRUNCATED = -4, /* data stops in the middle of a record or frame */
    MEMFMT_E_CORRUPT = -5, /* bytes that cannot be a valid record */
    MEMFMT_E_NOMEM = -6,
    MEMFMT_E_TOOBIG = -7, /* a record larger than MEMFMT_MAX_RECORD */
    MEMFMT_E_ZSTD = -8, /* compressor failure */
    MEMFMT_E_EMPTY = -9, /* the file holds no bytes at all */
    MEMFMT_E_INVALID = -10, /* the caller passed something that cannot be written */
    MEMFMT_E_WINDOW = -11, /* a zstd frame needs a window above MEMFMT_MAX_WINDOW_LOG */
};

/** Name of a status code, as a lowercase phrase ("truncated"). Never NULL. */
const char *memfmt_strerror(int code);

/* ---- records ---- */

/* Tags of the file records. Readers skip tags they do not know. */
enum memfmt_tag {
    MEMFMT_REC_PROCESS = 1, /* who was recorded */
    MEMFMT_REC_MODULE = 2, /* a module (executable, shared object) is mapped */
    MEMFMT_REC_UNMODULE = 3, /* a module was unloaded */
    MEMFMT_REC_THREAD = 4, /* a thread index is introduced */
    MEMFMT_REC_NODE = 5, /* a trace-tree node: (parent, ip); ids are implicit */
    MEMFMT_REC_EVENTS = 6, /* a block of compact allocation events (see below) */
    MEMFMT_REC_TIME = 9, /* milliseconds since start; later events are at or after */
    MEMFMT_REC_RSS = 10, /* sampled resident set size */
    MEMFMT_REC_END = 11, /* the recording ended; how the process ended */
    MEMFMT_REC_STATS = 12, /* recorder counters (lost events, unmatched frees) */
    MEMFMT_REC_COUNTS = 13, /* sampling: a thread's exact calls and bytes so far */
    MEMFMT_REC_MAP = 14, /* anonymous mapped memory changed (mmap/munmap/mremap/brk/sbrk) */
    MEMFMT_REC_BASELINE = 15, /* attached: the allocator's own view of the heap at attach (mallinfo2) */
    MEMFMT_REC_HEAPINFO = 16, /* version 3: the allocator's own view of the heap, sampled (mallinfo2) */
    MEMFMT_REC_THREAD_TIMES = 17, /* a thread ended (or the recording did): its lifetime and CPU time */
    MEMFMT_REC_PACK_STRING = 18, /* packed file: the next string of the pack's table (ids implicit, from 1) */
    MEMFMT_REC_PACK_FRAMES = 19, /* packed file: the symbolized frames of one address of a module */
    /* 20 to 23 are kept for later pack records. */
    MEMFMT_REC_LOST = 24, /* events the recorder dropped (memrec --max-wait), and when */
    MEMFMT_REC_LAYOUT = 25, /* memrec's view of glibc's main heap from the live blocks' addresses */
    MEMFMT_REC_REACH = 26, /* the live blocks' reachability at the program's end: totals (memrec's scan) */
    MEMFMT_REC_REACH_TRACE = 27, /* after REACH: one stack's blocks that are not plainly reachable */

    /* Events. They are never stored as records of their own: the writer
     * packs them into EVENTS blocks and the reader hands them out one by
     * one with these tags, each with its slot resolved. */
    MEMFMT_REC_ALLOC = 64, /* a block is allocated; takes a slot */
    MEMFMT_REC_FREE = 65, /* the block in a slot is freed */
    MEMFMT_REC_REALLOC = 66, /* one call frees a slot and allocates a new block */
};

/* Allocation and free functions, stored in ALLOC/FREE/REALLOC records. */
enum memfmt_kind {
    MEMFMT_K_MALLOC = 0,
    MEMFMT_K_CALLOC = 1,
    MEMFMT_K_REALLOC = 2,
    MEMFMT_K_REALLOCARRAY = 3,
    MEMFMT_K_POSIX_MEMALIGN = 4,
    MEMFMT_K_ALIGNED_ALLOC = 5,
    MEMFMT_K_MEMALIGN = 6,
    MEMFMT_K_VALLOC = 7,
    MEMFMT_K_PVALLOC = 8,
    MEMFMT_K_NEW = 9, /* operator new, any form */
    MEMFMT_K_NEW_ARRAY = 10, /* operator new[], any form */
    MEMFMT_K_FREE = 11,
    MEMFMT_K_DELETE = 12,
    MEMFMT_K_DELETE_ARRAY = 13,
    MEMFMT_K_POOL_ALLOC = 14, /* a block of a program's own pool (memrec.h) */
    MEMFMT_K_POOL_FREE = 15, /* a pool block given back, or dropped by a pool reset */
    MEMFMT_K_COUNT = 16, /* EVENTS keeps the kind in 4 bits: 16 at most */
};

/* Calls that change mapped memory, stored in MAP records. */
enum memfmt_map_kind {
    MEMFMT_MK_MMAP = 0, /* mmap/mmap64: a new range, or MAP_FIXED replacing ranges */
    MEMFMT_MK_MUNMAP = 1,
    MEMFMT_MK_MREMAP = 2, /* a range resized or moved: the delta goes to its trace */
    MEMFMT_MK_BRK = 3, /* brk or sbrk moved the break */
    MEMFMT_MK_COUNT = 4,
};

/* How the recorded process ended (END record). */
enum memfmt_end_how {
    MEMFMT_END_EXITED = 0, /* value = exit status */
    MEMFMT_END_SIGNALED = 1, /* value = signal number */
    MEMFMT_END_DETACHED = 2, /* recording stopped while the process ran on */
    MEMFMT_END_UNKNOWN = 3, /* memrec lost track of the process */
    MEMFMT_END_EXEC_UNRECORDED = 4, /* it exec'd a program the recorder cannot run in (set-user-ID...) */
};

/* Header flags. */
enum memfmt_header_flags {
    MEMFMT_HF_ATTACHED = 1 << 0, /* recording began in a running process */
    /* Events carry the time spent in the underlying allocator (memrec
     * --time): a column of durations in every EVENTS block (version 3). */
    MEMFMT_HF_TIMED = 1 << 1,
    MEMFMT_HF_PACKED = 1 << 2, /* memprint --pack: the file carries its frames (PACK_* records) */
};

struct memfmt_header {
    uint16_t version;
    uint8_t pointer_size;
    uint8_t little_endian;
    uint32_t flags;
};

/* Limits on variable-length fields, so a reader never trusts a length. */
#define MEMFMT_MAX_RECORD (1u << 20)
#define MEMFMT_MAX_SEGMENTS 64
#define MEMFMT_MAX_THREADS (1u << 20) /* thread indexes are below this; writers reuse them */
#define MEMFMT_MAX_PACK_FRAMES 64 /* frames of one address in a PACK_FRAMES record (an inline chain) */
#define MEMFMT_MAX_LAYOUT 16 /* ranked traces in a LAYOUT record */
/* The largest zstd window a reader accepts: 2^27 bytes (128 MiB), what the
 * zstd command accepts without --memory. memrec writes windows of 2^23 at
 * most (level 19); a file recompressed with zstd --long=27 still opens. A
 * frame asking for more is refused with MEMFMT_E_WINDOW before anything is
 * allocated for it. */
#define MEMFMT_MAX_WINDOW_LOG 27

/* MODULE flags: what the recorder knew of a module when it was loaded. */
enum memfmt_module_flags {
    /* Loaded at start only because of the user's LD_PRELOAD: not reachable
     * through DT_NEEDED from the executable (or from memrec's preload
     * library); never the executable, ld.so, libc or the vdso. */
    MEMFMT_MODF_PRELOAD_ONLY = 1 << 0,
    MEMFMT_MODF_LOADER = 1 << 1, /* the dynamic loader, ld.so */
};

/* PACK_FRAMES: one frame of an address, innermost first. */
enum memfmt_pack_frame_flags {
    MEMFMT_PF_INLINED = 1 << 0, /* an inlined function expanded at the address */
};

struct memfmt_pack_frame {
    uint32_t function; /* PACK_STRING id of the function's name as memprint shows it; 0 = unknown */
    uint32_t file; /* PACK_STRING id of the source file; 0 = unknown */
    uint32_t line; /* 0 = unknown */
    uint32_t flags; /* enum memfmt_pack_frame_flags; readers ignore unknown bits */
};

/* REACH: what came of the reachability scan (docs/format.md, "Reachability"). */
enum memfmt_reach_status {
    MEMFMT_REACH_DONE = 0, /* every live block was classified; the figures hold */
    MEMFMT_REACH_TOO_BIG = 1, /* skipped: the live blocks or the bytes to read were above memrec's bound */
    MEMFMT_REACH_TOO_SLOW = 2, /* given up: the scan passed its time bound (no figure is kept) */
    MEMFMT_REACH_NO_STOP = 3, /* skipped: the threads could not be stopped or read (ptrace refused) */
    MEMFMT_REACH_SAMPLED = 4, /* not available: a sampled recording knows only its sampled blocks */
    MEMFMT_REACH_COUNT = 5,
};

/* LAYOUT: the heaps a record lays out. */
enum memfmt_layout_heap {
    MEMFMT_HEAP_MAIN = 0, /* glibc's main heap, the program break's area */
    MEMFMT_HEAP_ARENAS = 1, /* the heaps of glibc's thread arenas, together */
};

/* LAYOUT: one heap's top, for the records that lay out several heaps. */
struct memfmt_layout_top {
    uint32_t trace; /* the stack of its top live block */
    uint64_t size; /* that block's requested bytes */
    uint64_t held_pages; /* free whole pages directly below it */
    uint64_t free_pages; /* free whole pages of the heap below its top block's end */
    uint64_t live_blocks; /* live blocks in the heap */
};

/* LAYOUT: one call stack's share of the main heap's layout. */
struct memfmt_layout_entry {
    uint32_t trace; /* the stack of the blocks (leaf node id, 0 = no stack) */
    uint64_t held_pages; /* free whole pages directly below its blocks (below each, down to the next live block) */
    uint64_t blocks; /* its live blocks that have such pages below them */
    uint64_t pages_alone; /* pages that hold live bytes of its blocks and of no other stack's */
};

struct memfmt_segment {
    uint64_t vaddr; /* address relative to the load bias */
    uint64_t memsz;
    uint32_t flags; /* PF_X | PF_W | PF_R */
};

/* One decoded record. Pointers into strings point into the reader's (or the
 * caller's) buffer and stay valid until the next call on that reader. */
struct memfmt_record {
    unsigned tag;
    union {
        struct {
            uint32_t pid, ppid;
            uint64_t start_unix_ns; /* wall clock at start */
            uint64_t sample_rate; /* 0 = every allocation has a stack */
            const char *exe; /* path of the executable */
            uint32_t exe_len;
            const char *cmdline; /* arguments separated by NUL bytes */
            uint32_t cmdline_len;
        } process;
        struct {
            uint32_t id; /* 1-based, never reused */
            uint64_t bias; /* load bias (dlpi_addr) */
            const char *path;
            uint32_t path_len;
            const uint8_t *build_id;
            uint32_t build_id_len;
            uint32_t nsegments;
            struct memfmt_segment segments[MEMFMT_MAX_SEGMENTS];
            uint32_t flags; /* enum memfmt_module_flags; 0 in files written before it */
        } module;
        struct {
            uint32_t id;
        } unmodule;
        struct {
            uint32_t index; /* 1-based thread index used by events */
            uint32_t tid; /* kernel thread id */
        } thread;
        struct {
            uint32_t parent; /* 0 = root */
            uint64_t ip; /* return address; 0 marks a truncation gap */
        } node;
        struct {
            uint32_t thread;
            uint32_t kind; /* enum memfmt_kind */
            uint64_t size; /* requested bytes */
            uint32_t trace; /* leaf node id, 0 = no stack */
            uint32_t info; /* id of the (size, trace) pair, from 1 */
            /* REALLOC only: the block it replaced */
            uint64_t old_size;
            uint32_t old_trace;
            uint32_t old_info;
            int old_temporary; /* replaced right after it was allocated */
            /* Nanoseconds spent in the allocator's function (a realloc:
             * the whole call); 0 when the file is not MEMFMT_HF_TIMED. */
            uint64_t ns;
        } alloc; /* ALLOC and REALLOC */
        struct {
            uint32_t thread;
            uint32_t kind;
            uint64_t size; /* of the block freed */
            uint32_t trace;
            uint32_t info;
            int temporary; /* the next event of the thread that allocated it */
            uint64_t ns; /* nanoseconds in the allocator's free; 0 when not timed */
        } free;
        struct {
            uint64_t ms;
        } time;
        struct {
            uint64_t bytes;
        } rss;
        struct {
            uint32_t how; /* enum memfmt_end_how */
            int32_t value; /* exit status or signal number */
            uint64_t runtime_ms;
            /* The process's CPU time over the recording, user and system;
             * 0 when unknown (and in files written before these fields). */
            uint64_t cpu_user_ns;
            uint64_t cpu_sys_ns;
        } end;
        struct {
            uint64_t lost_events; /* events the recorder could not deliver */
            uint64_t unmatched_frees; /* frees of blocks never seen allocated */
            /* Allocations set apart as the start-up of libraries the user
             * preloaded (MEMFMT_MODF_PRELOAD_ONLY), not written as events;
             * 0 in files written before these fields. */
            uint64_t startup_calls;
            uint64_t startup_bytes;
        } stats;
        struct {
            /* Milliseconds since the start (as TIME) of the first and the
             * latest drop, and the events dropped between them. */
            uint64_t from_ms;
            uint64_t to_ms;
            uint64_t events;
        } lost;
        struct {
            uint32_t thread;
            uint64_t calls; /* allocation calls of the thread since it started */
            uint64_t bytes; /* bytes they requested */
        } counts;
        struct {
            uint64_t in_use; /* bytes in blocks allocated and not freed (uordblks + hblkhd) */
            uint64_t arena; /* bytes the allocator holds from the system (arena + hblkhd) */
        } baseline;
        struct {
            /* glibc's mallinfo2() fields, as the allocator counts them at
             * that moment; docs/format.md, "Heap info". */
            uint64_t arena; /* bytes of the arenas (not mmapped chunks) taken from the system */
            uint64_t ordblks; /* free chunks in the arenas' bins (and their tops) */
            uint64_t smblks; /* free chunks in the fastbins */
            uint64_t fordblks; /* free bytes in the arenas (the top chunk and fastbins included) */
            uint64_t fsmblks; /* of which in the fastbins */
            uint64_t uordblks; /* bytes of arena chunks in use (headers and padding included) */
            uint64_t keepcost; /* the main arena's top chunk: what malloc_trim(0) could release at once */
            uint64_t hblks; /* chunks mapped with mmap of their own */
            uint64_t hblkhd; /* bytes of those chunks */
            uint64_t cost_ns; /* CPU time the mallinfo2() call took (the recorder's cost) */
            uint64_t wall_ns; /* wall time it took: arena locks were held for parts of it */
            /* Appended later (0: absent): the main heap's range at the
             * sample, the start of the program break's area and the break. */
            uint64_t brk_start;
            uint64_t brk_end;
        } heapinfo;
        struct {
            /* memrec's view of glibc's main heap (the brk area), from the
             * addresses of the live blocks: docs/format.md, "Heap layout". */
            uint64_t page; /* bytes per page of the counts below (4096) */
            uint64_t heap_bytes; /* the break minus the heap's start */
            uint64_t live_bytes; /* requested bytes of the live blocks in the heap */
            uint64_t live_blocks;
            uint64_t free_pages; /* whole pages below the top block's end that hold no live block */
            uint64_t top_end; /* end of the highest live block, from the heap's start; 0: no block */
            uint32_t top_trace; /* its stack */
            uint64_t top_size; /* its requested bytes */
            uint64_t top_held_pages; /* free whole pages between it and the live block below it */
            uint64_t ntraces; /* stacks with held pages or pages alone (the entries are the first of them) */
            uint64_t cost_ns; /* the time memrec took to make it (CLOCK_MONOTONIC) */
            uint32_t n; /* entries, at most MEMFMT_MAX_LAYOUT, ranked by held pages, then pages alone */
            struct memfmt_layout_entry e[MEMFMT_MAX_LAYOUT];
            /* Appended later (absent: 0, 1): which heaps (enum
             * memfmt_layout_heap) and how many of them are laid out. */
            uint32_t heap;
            uint64_t heaps;
            /* Appended later (absent: 0): the heaps' tops, at most
             * MEMFMT_MAX_LAYOUT, ranked by held pages, then free pages. */
            uint32_t ntops;
            struct memfmt_layout_top tops[MEMFMT_MAX_LAYOUT];
        } layout;
        struct {
            /* memrec's conservative scan of the live blocks as the program
             * ended: docs/format.md, "Reachability". Bytes are requested
             * bytes; "blocks" count live blocks. */
            uint32_t status; /* enum memfmt_reach_status; the figures are 0 unless DONE */
            uint64_t reachable_bytes; /* a chain of pointers from a root leads to them (possible_* included) */
            uint64_t reachable_blocks;
            uint64_t possible_bytes; /* of those, only through a pointer into a block's middle somewhere */
            uint64_t possible_blocks;
            uint64_t unreachable_bytes; /* no chain from a root (indirect_* included) */
            uint64_t unreachable_blocks;
            uint64_t indirect_bytes; /* of those, pointed to from another unreachable block */
            uint64_t indirect_blocks;
            uint64_t root_bytes; /* bytes of roots read: module data, stacks, TLS, registers */
            uint64_t threads; /* threads stopped and read */
            uint64_t stopped_ns; /* how long the program's threads were stopped (CLOCK_MONOTONIC) */
            uint64_t cost_ns; /* the whole scan, from the program's request to its answer */
        } reach;
        struct {
            /* One stack's live blocks that are unreachable or only
             * possibly reachable; REACH's totals are these summed. */
            uint32_t trace; /* leaf node id, 0 = no stack */
            uint64_t unreachable_bytes; /* indirect_* included */
            uint64_t unreachable_blocks;
            uint64_t indirect_bytes;
            uint64_t indirect_blocks;
            uint64_t possible_bytes;
            uint64_t possible_blocks;
        } reach_trace;
        struct {
            uint32_t thread; /* the thread that made the call */
            uint32_t kind; /* enum memfmt_map_kind */
            uint32_t trace; /* the stack that mapped the bytes (their owner), 0 = none */
            int64_t delta; /* bytes mapped (> 0) or unmapped (< 0) for that trace */
            uint32_t call; /* 1: a new mapping call (mmap, brk/sbrk growth); 0: a change to what was mapped */
        } map;
        struct {
            uint32_t thread; /* thread index */
            /* Its lifetime as the recorder saw it: from its first event to
             * its end, or to the end of the recording. */
            uint64_t wall_ns;
            /* Its CPU time (CLOCK_THREAD_CPUTIME_ID, read by the thread
             * itself as it ended); 0 when unknown. */
            uint64_t cpu_ns;
        } thread_times;
        struct {
            const char *str; /* not NUL-terminated */
            uint32_t len;
        } pack_string;
        struct {
            uint32_t module; /* MODULE id */
            uint64_t offset; /* return address minus the module's bias (a NODE ip, module-relative) */
            uint32_t nframes; /* 1 to MEMFMT_MAX_PACK_FRAMES */
            struct memfmt_pack_frame frames[MEMFMT_MAX_PACK_FRAMES];
        } pack_frames;
    } u;
};

/* Events name no addresses. Each distinct (size, trace) pair of a
 * recording gets an id, its "info", the first time it is allocated; a free
 * names the info of the block it frees, and says whether the block was a
 * temporary (freed by the next event of the thread that allocated it).
 * Writers give alloc.info / free.info (and the temporary flags); readers
 * get every field filled in, sizes and traces of freed blocks included. */

/** Encode `rec` (tag and length included) into `buf` of `cap` bytes.
 * Returns bytes written, MEMFMT_E_TOOBIG when it does not fit, or
 * MEMFMT_E_INVALID for an event (events only go through a writer).
 * Pure function: no allocation, async-signal-safe. */
int memfmt_encode(const struct memfmt_record *rec, uint8_t *buf, size_t cap);

/** Decode one record from `buf` (`len` bytes available). On success returns
 * the bytes consumed (> 0) and fills `rec`; a record of unknown tag is
 * returned with rec->tag set and no fields. Returns MEMFMT_E_TRUNCATED when
 * `len` ends inside the record, MEMFMT_E_CORRUPT for invalid contents. */
int memfmt_decode(const uint8_t *buf, size_t len, struct memfmt_record *rec);

/* ---- writer: how to use ----
 * w = memfmt_writer_new(fd, &hdr, level, &rc); then memfmt_write() for each
 * record, memfmt_writer_flush() periodically (data written so far becomes
 * readable even if the process dies), memfmt_writer_finish() once at the end,
 * memfmt_writer_free(). After an error every call returns the same code. */
typedef struct memfmt_writer memfmt_writer;

/** Start a file on `fd` (not closed by the writer). NULL on failure, with
 * the status in *rc. */
memfmt_writer *memfmt_writer_new(int fd, const struct memfmt_header *hdr, int level, int *rc);
/** Append one record. Returns 0 or a negative status. */
int memfmt_write(memfmt_writer *w, const struct memfmt_record *rec);
/** Compress and write out everything appended so far (a zstd flush). */
int memfmt_writer_flush(memfmt_writer *w);
/** End the zstd frame and write it out. Returns 0 or a negative status. */
int memfmt_writer_finish(memfmt_writer *w);
/** Bytes written to the file so far (compressed). */
uint64_t memfmt_writer_bytes(const memfmt_writer *w);
/** errno of the last failed write, 0 if none. */
int memfmt_writer_errno(const memfmt_writer *w);
/** Release; accepts NULL. Does not finish the frame. */
void memfmt_writer_free(memfmt_writer *w);
/** Append one record already encoded (tag, length, payload: `len` bytes,
 * as memfmt_read_raw() gives it), unchanged. For copying a file: an
 * EVENTS record continues the stream state of the records copied before
 * it, so a writer that copies EVENTS records must not be given events
 * through memfmt_write(). Returns 0 or a negative status
 * (MEMFMT_E_INVALID for an empty record or one of a tag that cannot be in
 * a file). */
int memfmt_write_raw(memfmt_writer *w, const uint8_t *rec, size_t len);

/* ---- reader: how to use ----
 * r = memfmt_reader_open(path, &rc); if NULL, rc says why (MEMFMT_E_IO with
 * errno, NOT_MEMREC, VERSION, EMPTY, TRUNCATED, WINDOW). Then loop
 * `while ((rc = memfmt_read(r, &rec)) > 0) ...`; rc == 0 is the clean end of
 * the data, rc < 0 an error at memfmt_reader_offset(r) (offset into the
 * decompressed stream) — records read before it are valid. */
typedef struct memfmt_reader memfmt_reader;

/** Open and check the header. NULL on failure with the status in *rc. */
memfmt_reader *memfmt_reader_open(const char *path, int *rc);
/** Same, reading an already opened descriptor (not closed by the reader).
 * A regular file of 1 MiB or less is decompressed in the calling thread;
 * anything larger (or a pipe) in a thread of the reader's own. */
memfmt_reader *memfmt_reader_open_fd(int fd, int *rc);
/** The header read at open. */
const struct memfmt_header *memfmt_reader_header(const memfmt_reader *r);
/** Next record: 1 = got one, 0 = end of data, < 0 = error. */
int memfmt_read(memfmt_reader *r, struct memfmt_record *rec);

/* Readers that only add up sizes per trace (the analyzer) can take events
 * in batches instead, which costs far less per event than a
 * struct memfmt_record each: `while ((rc = memfmt_read_batch(r, &rec, evs,
 * cap, &n)) > 0)`, then either n > 0 events in evs (rec->tag is
 * MEMFMT_REC_EVENTS) or one other record in rec (n == 0). Records and
 * events come in the same order as from memfmt_read(), and the same errors
 * at the same offsets; the events before an error in the middle of a block
 * come first, the error at the next call (and at every call after it).
 * The two calls may be mixed on one reader. */

/* What a batched event says. */
enum memfmt_event_flags {
    MEMFMT_EV_FREE = 1 << 0, /* a block is freed (else allocated) */
    MEMFMT_EV_TEMPORARY = 1 << 1, /* a free of the thread's latest allocation, as its next event */
    MEMFMT_EV_REALLOC = 1 << 2, /* the free half of a realloc: its allocation is the next entry */
};

/** One event of a batch: the size, trace and info id of the block
 * allocated or freed. A realloc takes two entries, in the same batch: its
 * free (MEMFMT_EV_FREE | MEMFMT_EV_REALLOC), then its allocation. Threads
 * and kinds are left out. */
struct memfmt_event {
    uint64_t size; /* requested bytes */
    uint32_t trace; /* leaf node id, 0 = no stack */
    uint32_t flags; /* enum memfmt_event_flags */
    uint32_t info; /* id of the block's (size, trace) pair, from 1 (docs/format.md): an index, not a hash key */
    /* Nanoseconds of the call in the allocator, at most UINT32_MAX
     * (saturated); a realloc's time is on its allocation entry, its free
     * half has 0. 0 when the file is not MEMFMT_HF_TIMED. */
    uint32_t ns;
};

/** Next record, or the next events of an EVENTS block into `evs` (`cap`
 * >= 2 entries; a few hundred keep the call cost low and the array in
 * cache). Returns 1 with *n events or (*n == 0) a record in `rec`, 0 at the
 * end of data, < 0 for an error. */
int memfmt_read_batch(memfmt_reader *r, struct memfmt_record *rec, struct memfmt_event *evs, size_t cap, size_t *n);
/** Next record as its encoded bytes, for copying a file: *rec points at
 * its tag, *len covers tag, length and payload (valid until the next call
 * on the reader), *tag is the tag. A known record is checked as
 * memfmt_read() checks it, except the operations inside an EVENTS block,
 * which are not decoded (read the file with memfmt_read() first to check
 * them). Returns 1, 0 at the end of data, < 0 for an error. Not to be
 * mixed with the other read calls on one reader. */
int memfmt_read_raw(memfmt_reader *r, const uint8_t **rec, size_t *len, unsigned *tag);
/** Offset in the decompressed stream where the reader stands. */
uint64_t memfmt_reader_offset(const memfmt_reader *r);
/** errno of the last failed read, 0 if none. */
int memfmt_reader_errno(const memfmt_reader *r);
/** Release; accepts NULL. */
void memfmt_reader_free(memfmt_reader *r);

#endif
