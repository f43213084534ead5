// SPDX-License-Identifier: MIT
/* Unit tests of the format library: varints, every record kind through
 * encode/decode, the file writer and reader, and what the reader says
 * about files that end early or hold garbage. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "check.h"
#include "memfmt.h"
#include "memfmt_internal.h"
#include "memwire.h"

static void test_varint(void)
{
    uint64_t values[] = {0, 1, 127, 128, 300, 16383, 16384, UINT32_MAX, (uint64_t)1 << 63, UINT64_MAX};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        uint8_t buf[MEMFMT_VARINT_MAX];
        size_t n = memfmt_put_varint(buf, values[i]);
        const uint8_t *p = buf;
        uint64_t v = 0;
        CHECK(memfmt_get_varint(&p, buf + n, &v) == 0);
        CHECK_EQ(v, values[i]);
        CHECK(p == buf + n);
        p = buf;
        CHECK(n == 1 || memfmt_get_varint(&p, buf + n - 1, &v) == MEMFMT_E_TRUNCATED);
    }
    uint8_t over[11];
    memset(over, 0xff, sizeof over);
    const uint8_t *p = over;
    uint64_t v;
    CHECK(memfmt_get_varint(&p, over + sizeof over, &v) == MEMFMT_E_CORRUPT);
}

static int roundtrip(const struct memfmt_record *in, struct memfmt_record *out)
{
    uint8_t buf[8192];
    int n = memfmt_encode(in, buf, sizeof buf);
    if (n <= 0) {
        return -1;
    }
    /* Every prefix is truncated, never corrupt and never a success. */
    for (int k = 0; k < n; k++) {
        struct memfmt_record tmp;
        if (memfmt_decode(buf, (size_t)k, &tmp) != MEMFMT_E_TRUNCATED) {
            return -2;
        }
    }
    return memfmt_decode(buf, (size_t)n, out) == n ? 0 : -3;
}

static void test_records(void)
{
    struct memfmt_record a = {0}, b;
    a.tag = MEMFMT_REC_ALLOC;
    CHECK(memfmt_encode(&a, (uint8_t[64]){0}, 64) == MEMFMT_E_INVALID); /* events go through a writer */

    memset(&a, 0, sizeof a);
    a.tag = MEMFMT_REC_MODULE;
    a.u.module.id = 4;
    a.u.module.bias = 0x7f0000000000ull;
    a.u.module.path = "/usr/lib/libx.so";
    a.u.module.path_len = (uint32_t)strlen(a.u.module.path);
    uint8_t bid[20] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
    a.u.module.build_id = bid;
    a.u.module.build_id_len = 20;
    a.u.module.nsegments = 2;
    a.u.module.segments[0] = (struct memfmt_segment){0, 0x1000, 4};
    a.u.module.segments[1] = (struct memfmt_segment){0x1000, 0x5000, 5};
    CHECK(roundtrip(&a, &b) == 0);
    CHECK_EQ(b.u.module.bias, 0x7f0000000000ull);
    CHECK(b.u.module.path_len == a.u.module.path_len &&
          memcmp(b.u.module.path, a.u.module.path, a.u.module.path_len) == 0);
    CHECK(b.u.module.build_id_len == 20 && memcmp(b.u.module.build_id, bid, 20) == 0);
    CHECK_EQ(b.u.module.nsegments, 2);
    CHECK_EQ(b.u.module.segments[1].memsz, 0x5000);
    CHECK_EQ(b.u.module.segments[1].flags, 5);
    CHECK_EQ(b.u.module.flags, 0);
    a.u.module.flags = MEMFMT_MODF_PRELOAD_ONLY;
    CHECK(roundtrip(&a, &b) == 0);
    CHECK_EQ(b.u.module.flags, MEMFMT_MODF_PRELOAD_ONLY);
    /* A MODULE written before the flags field: id 1, bias 0, empty path
     * and build-id, no segments. Its flags read as 0. */
    uint8_t old_module[] = {MEMFMT_REC_MODULE, 5, 1, 0, 0, 0, 0};
    CHECK(memfmt_decode(old_module, sizeof old_module, &b) == 7);
    CHECK_EQ(b.u.module.id, 1);
    CHECK_EQ(b.u.module.flags, 0);

    memset(&a, 0, sizeof a);
    a.tag = MEMFMT_REC_BASELINE;
    a.u.baseline.in_use = 123456789;
    a.u.baseline.arena = 1u << 30;
    CHECK(roundtrip(&a, &b) == 0);
    CHECK_EQ(b.tag, MEMFMT_REC_BASELINE);
    CHECK_EQ(b.u.baseline.in_use, 123456789);
    CHECK_EQ(b.u.baseline.arena, 1u << 30);

    /* HEAPINFO (version 3): every field survives; a payload that ends
     * before its last field is corrupt. */
    memset(&a, 0, sizeof a);
    a.tag = MEMFMT_REC_HEAPINFO;
    a.u.heapinfo.arena = 69206016;
    a.u.heapinfo.ordblks = 1041;
    a.u.heapinfo.smblks = 12;
    a.u.heapinfo.fsmblks = 384;
    a.u.heapinfo.fordblks = 61822512;
    a.u.heapinfo.uordblks = 4140000;
    a.u.heapinfo.keepcost = 129328;
    a.u.heapinfo.hblks = 2;
    a.u.heapinfo.hblkhd = 270336;
    a.u.heapinfo.cost_ns = 28000;
    a.u.heapinfo.wall_ns = UINT64_MAX;
    a.u.heapinfo.brk_start = 0x55d1c2a3f000;
    a.u.heapinfo.brk_end = 0x55d1c6a40000;
    CHECK(roundtrip(&a, &b) == 0);
    CHECK_EQ(b.tag, MEMFMT_REC_HEAPINFO);
    CHECK_EQ(b.u.heapinfo.arena, 69206016);
    CHECK_EQ(b.u.heapinfo.ordblks, 1041);
    CHECK_EQ(b.u.heapinfo.smblks, 12);
    CHECK_EQ(b.u.heapinfo.fsmblks, 384);
    CHECK_EQ(b.u.heapinfo.fordblks, 61822512);
    CHECK_EQ(b.u.heapinfo.uordblks, 4140000);
    CHECK_EQ(b.u.heapinfo.keepcost, 129328);
    CHECK_EQ(b.u.heapinfo.hblks, 2);
    CHECK_EQ(b.u.heapinfo.hblkhd, 270336);
    CHECK_EQ(b.u.heapinfo.cost_ns, 28000);
    CHECK_EQ(b.u.heapinfo.wall_ns, UINT64_MAX);
    CHECK_EQ(b.u.heapinfo.brk_start, 0x55d1c2a3f000);
    CHECK_EQ(b.u.heapinfo.brk_end, 0x55d1c6a40000);
    uint8_t short_heapinfo[] = {MEMFMT_REC_HEAPINFO, 10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    CHECK(memfmt_decode(short_heapinfo, sizeof short_heapinfo, &b) == MEMFMT_E_CORRUPT);
    /* Written before the heap's range was appended: it reads as 0. */
    uint8_t old_heapinfo[] = {MEMFMT_REC_HEAPINFO, 11, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    CHECK(memfmt_decode(old_heapinfo, sizeof old_heapinfo, &b) == (int)sizeof old_heapinfo);
    CHECK_EQ(b.u.heapinfo.wall_ns, 11);
    CHECK_EQ(b.u.heapinfo.brk_start, 0);
    CHECK_EQ(b.u.heapinfo.brk_end, 0);

    /* LAYOUT: every field of the record and of its 16 entries survives;
     * more than 16 entries, or a page that is no power of two, is corrupt. */
    memset(&a, 0, sizeof a);
    a.tag = MEMFMT_REC_LAYOUT;
    a.u.layout.page = 4096;
    a.u.layout.heap_bytes = 80695296;
    a.u.layout.live_bytes = 1001;
    a.u.layout.live_blocks = 1;
    a.u.layout.free_pages = 19688;
    a.u.layout.top_end = 80644160;
    a.u.layout.top_trace = 6;
    a.u.layout.top_size = 1001;
    a.u.layout.top_held_pages = 19687;
    a.u.layout.ntraces = 40;
    a.u.layout.cost_ns = 123456;
    a.u.layout.heap = MEMFMT_HEAP_ARENAS;
    a.u.layout.heaps = 3;
    a.u.layout.ntops = 2;
    a.u.layout.tops[0] = (struct memfmt_layout_top){9, 1001, 9843, 9843, 1};
    a.u.layout.tops[1] = (struct memfmt_layout_top){11, 40, 0, 3, UINT64_MAX};
    a.u.layout.n = MEMFMT_MAX_LAYOUT;
    for (uint32_t i = 0; i < MEMFMT_MAX_LAYOUT; i++) {
        a.u.layout.e[i] = (struct memfmt_layout_entry){i * 7, 1000 - i, i + 1, UINT64_MAX - i};
    }
    CHECK(roundtrip(&a, &b) == 0);
    CHECK_EQ(b.tag, MEMFMT_REC_LAYOUT);
    CHECK_EQ(b.u.layout.page, 4096);
    CHECK_EQ(b.u.layout.heap_bytes, 80695296);
    CHECK_EQ(b.u.layout.live_bytes, 1001);
    CHECK_EQ(b.u.layout.live_blocks, 1);
    CHECK_EQ(b.u.layout.free_pages, 19688);
    CHECK_EQ(b.u.layout.top_end, 80644160);
    CHECK_EQ(b.u.layout.top_trace, 6);
    CHECK_EQ(b.u.layout.top_size, 1001);
    CHECK_EQ(b.u.layout.top_held_pages, 19687);
    CHECK_EQ(b.u.layout.ntraces, 40);
    CHECK_EQ(b.u.layout.cost_ns, 123456);
    CHECK_EQ(b.u.layout.heap, MEMFMT_HEAP_ARENAS);
    CHECK_EQ(b.u.layout.heaps, 3);
    CHECK_EQ(b.u.layout.ntops, 2);
    CHECK_EQ(b.u.layout.tops[0].trace, 9);
    CHECK_EQ(b.u.layout.tops[0].size, 1001);
    CHECK_EQ(b.u.layout.tops[0].held_pages, 9843);
    CHECK_EQ(b.u.layout.tops[1].free_pages, 3);
    CHECK_EQ(b.u.layout.tops[1].live_blocks, UINT64_MAX);
    CHECK_EQ(b.u.layout.n, MEMFMT_MAX_LAYOUT);
    for (uint32_t i = 0; i < MEMFMT_MAX_LAYOUT; i++) {
        CHECK_EQ(b.u.layout.e[i].trace, i * 7);
        CHECK_EQ(b.u.layout.e[i].held_pages, 1000 - i);
        CHECK_EQ(b.u.layout.e[i].blocks, i + 1);
        CHECK_EQ(b.u.layout.e[i].pages_alone, UINT64_MAX - i);
    }
    /* page 4096 (varint 0x80 0x20), then 10 fields at 0, n 17 */
    uint8_t many[] = {MEMFMT_REC_LAYOUT, 13, 0x80, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 17};
    CHECK(memfmt_decode(many, sizeof many, &b) == MEMFMT_E_CORRUPT);
    uint8_t odd_page[] = {MEMFMT_REC_LAYOUT, 12, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    CHECK(memfmt_decode(odd_page, sizeof odd_page, &b) == MEMFMT_E_CORRUPT);
    /* An entry cut short is corrupt. */
    uint8_t cut[] = {MEMFMT_REC_LAYOUT, 15, 0x80, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 5, 6};
    CHECK(memfmt_decode(cut, sizeof cut, &b) == MEMFMT_E_CORRUPT);
    uint8_t none[] = {MEMFMT_REC_LAYOUT, 13, 0x80, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    CHECK(memfmt_decode(none, sizeof none, &b) == (int)sizeof none);
    CHECK_EQ(b.u.layout.n, 0);
    /* Without the appended fields: the main heap, one heap. */
    CHECK_EQ(b.u.layout.heap, MEMFMT_HEAP_MAIN);
    CHECK_EQ(b.u.layout.heaps, 1);
    CHECK_EQ(b.u.layout.ntops, 0);
    /* More than 16 heap tops is corrupt. */
    uint8_t many_tops[] = {MEMFMT_REC_LAYOUT, 16, 0x80, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 17};
    CHECK(memfmt_decode(many_tops, sizeof many_tops, &b) == MEMFMT_E_CORRUPT);

    memset(&a, 0, sizeof a);
    a.tag = MEMFMT_REC_STATS;
    a.u.stats.lost_events = 3;
    a.u.stats.unmatched_frees = 4;
    a.u.stats.startup_calls = 5;
    a.u.stats.startup_bytes = 72796;
    CHECK(roundtrip(&a, &b) == 0);
    CHECK_EQ(b.u.stats.lost_events, 3);
    CHECK_EQ(b.u.stats.unmatched_frees, 4);
    CHECK_EQ(b.u.stats.startup_calls, 5);
    CHECK_EQ(b.u.stats.startup_bytes, 72796);
    memset(&a, 0, sizeof a);
    a.tag = MEMFMT_REC_LOST;
    a.u.lost.from_ms = 1142;
    a.u.lost.to_ms = 4075;
    a.u.lost.events = 43878078;
    CHECK(roundtrip(&a, &b) == 0);
    CHECK_EQ(b.u.lost.from_ms, 1142);
    CHECK_EQ(b.u.lost.to_ms, 4075);
    CHECK_EQ(b.u.lost.events, 43878078);
    /* A span that ends before it starts is corrupt. */
    uint8_t backwards[] = {MEMFMT_REC_LOST, 3, 9, 8, 1};
    CHECK(memfmt_decode(backwards, sizeof backwards, &b) == MEMFMT_E_CORRUPT);

    /* STATS written before the start-up fields: they read as 0. */
    uint8_t old_stats[] = {MEMFMT_REC_STATS, 2, 3, 4};
    CHECK(memfmt_decode(old_stats, sizeof old_stats, &b) == 4);
    CHECK_EQ(b.u.stats.unmatched_frees, 4);
    CHECK_EQ(b.u.stats.startup_calls, 0);
    CHECK_EQ(b.u.stats.startup_bytes, 0);

    memset(&a, 0, sizeof a);
    a.tag = MEMFMT_REC_END;
    a.u.end.how = MEMFMT_END_SIGNALED;
    a.u.end.value = -11;
    a.u.end.runtime_ms = 1234;
    CHECK(roundtrip(&a, &b) == 0);
    CHECK_EQ(b.u.end.value, (unsigned long long)(long long)-11);
    CHECK_EQ(b.u.end.runtime_ms, 1234);
    CHECK_EQ(b.u.end.cpu_user_ns, 0);
    a.u.end.cpu_user_ns = 1500000000;
    a.u.end.cpu_sys_ns = 7;
    CHECK(roundtrip(&a, &b) == 0);
    CHECK_EQ(b.u.end.cpu_user_ns, 1500000000);
    CHECK_EQ(b.u.end.cpu_sys_ns, 7);
    /* END written before the CPU fields (version 2): they read as 0. */
    uint8_t old_end[] = {MEMFMT_REC_END, 3, 0, 0, 5};
    CHECK(memfmt_decode(old_end, sizeof old_end, &b) == 5);
    CHECK_EQ(b.u.end.runtime_ms, 5);
    CHECK(b.u.end.cpu_user_ns == 0 && b.u.end.cpu_sys_ns == 0);

    memset(&a, 0, sizeof a);
    a.tag = MEMFMT_REC_THREAD_TIMES;
    a.u.thread_times.thread = 3;
    a.u.thread_times.wall_ns = 123456789012ull;
    a.u.thread_times.cpu_ns = 98765;
    CHECK(roundtrip(&a, &b) == 0);
    CHECK_EQ(b.tag, MEMFMT_REC_THREAD_TIMES);
    CHECK_EQ(b.u.thread_times.thread, 3);
    CHECK_EQ(b.u.thread_times.wall_ns, 123456789012ull);
    CHECK_EQ(b.u.thread_times.cpu_ns, 98765);
    uint8_t bad_thread[] = {MEMFMT_REC_THREAD_TIMES, 5, 0x80, 0x80, 0x40, 1, 1}; /* thread 2^20 */
    CHECK(memfmt_decode(bad_thread, sizeof bad_thread, &b) == MEMFMT_E_CORRUPT);

    /* MAP: a negative delta survives (zigzag); a kind out of range and a
     * call flag above 1 are corrupt. */
    memset(&a, 0, sizeof a);
    a.tag = MEMFMT_REC_MAP;
    a.u.map.thread = 3;
    a.u.map.kind = MEMFMT_MK_MUNMAP;
    a.u.map.trace = 77;
    a.u.map.delta = -41943040;
    CHECK(roundtrip(&a, &b) == 0);
    CHECK_EQ(b.tag, MEMFMT_REC_MAP);
    CHECK_EQ(b.u.map.thread, 3);
    CHECK_EQ(b.u.map.kind, MEMFMT_MK_MUNMAP);
    CHECK_EQ(b.u.map.trace, 77);
    CHECK(b.u.map.delta == -41943040);
    CHECK_EQ(b.u.map.call, 0);
    a.u.map.kind = MEMFMT_MK_MMAP;
    a.u.map.delta = 6291456;
    a.u.map.call = 1;
    CHECK(roundtrip(&a, &b) == 0);
    CHECK(b.u.map.delta == 6291456 && b.u.map.call == 1 && b.u.map.kind == MEMFMT_MK_MMAP);
    uint8_t badkind[] = {MEMFMT_REC_MAP, 5, 1, MEMFMT_MK_COUNT, 1, 2, 0};
    CHECK(memfmt_decode(badkind, sizeof badkind, &b) == MEMFMT_E_CORRUPT);
    uint8_t badcall[] = {MEMFMT_REC_MAP, 5, 1, 0, 1, 2, 2};
    CHECK(memfmt_decode(badcall, sizeof badcall, &b) == MEMFMT_E_CORRUPT);

    /* An unknown tag is returned, with its length, for the reader to skip. */
    uint8_t unknown[] = {200, 3, 1, 2, 3};
    CHECK(memfmt_decode(unknown, sizeof unknown, &b) == 5);
    CHECK_EQ(b.tag, 200);
    /* A payload shorter than its fields is corrupt, not truncated. */
    uint8_t shortrec[] = {MEMFMT_REC_THREAD, 1, 1};
    CHECK(memfmt_decode(shortrec, sizeof shortrec, &b) == MEMFMT_E_CORRUPT);
    /* Too small a buffer is reported, never overrun. */
    uint8_t tiny[3];
    CHECK(memfmt_encode(&a, tiny, sizeof tiny) == MEMFMT_E_TOOBIG);
}

static int temp_fd(void)
{
    return memfd_create("memfmt-test", 0);
}

static void test_file(void)
{
    int fd = temp_fd();
    CHECK(fd >= 0);
    struct memfmt_header h = {MEMFMT_VERSION, 8, 1, MEMFMT_HF_ATTACHED};
    int rc;
    memfmt_writer *w = memfmt_writer_new(fd, &h, 3, &rc);
    CHECK(w != NULL);
    enum { N = 100000 };
    for (int i = 0; i < N; i++) {
        struct memfmt_record r = {.tag = MEMFMT_REC_ALLOC};
        r.u.alloc.size = (uint64_t)i;
        r.u.alloc.thread = 1;
        r.u.alloc.info = (uint32_t)i + 1; /* every size is a new pair */
        CHECK(memfmt_write(w, &r) == 0);
        if (i == N / 2) {
            CHECK(memfmt_writer_flush(w) == 0);
        }
    }
    CHECK(memfmt_writer_finish(w) == 0);
    uint64_t total = memfmt_writer_bytes(w);
    memfmt_writer_free(w);

    /* Whole file: every record, then a clean end. */
    lseek(fd, 0, SEEK_SET);
    memfmt_reader *r = memfmt_reader_open_fd(fd, &rc);
    CHECK(r != NULL);
    CHECK_EQ(memfmt_reader_header(r)->flags, MEMFMT_HF_ATTACHED);
    struct memfmt_record rec;
    int n = 0, bad = 0;
    while ((rc = memfmt_read(r, &rec)) > 0) {
        bad += rec.tag != MEMFMT_REC_ALLOC || rec.u.alloc.size != (uint64_t)n || rec.u.alloc.info != (uint32_t)n + 1;
        n++;
    }
    CHECK_EQ(rc, 0);
    CHECK_EQ(n, N);
    CHECK_EQ(bad, 0);
    memfmt_reader_free(r);

    /* Cut in the middle: the records up to the cut, then TRUNCATED. */
    CHECK(ftruncate(fd, (off_t)(total * 3 / 4)) == 0);
    lseek(fd, 0, SEEK_SET);
    r = memfmt_reader_open_fd(fd, &rc);
    CHECK(r != NULL);
    n = 0;
    while ((rc = memfmt_read(r, &rec)) > 0) {
        n++;
    }
    CHECK_EQ(rc, MEMFMT_E_TRUNCATED);
    CHECK(n >= N / 2 && n < N);
    memfmt_reader_free(r);
    close(fd);
}

/* PACK records (memprint --pack) round trip; a file copied record by
 * record with memfmt_read_raw()/memfmt_write_raw() reads the same, large
 * records and events included. */
static void test_pack_and_raw_copy(void)
{
    struct memfmt_record a = {.tag = MEMFMT_REC_PACK_STRING}, b;
    a.u.pack_string.str = "ns::f(int)";
    a.u.pack_string.len = 10;
    CHECK(roundtrip(&a, &b) == 0);
    CHECK(b.u.pack_string.len == 10 && memcmp(b.u.pack_string.str, "ns::f(int)", 10) == 0);
    a = (struct memfmt_record){.tag = MEMFMT_REC_PACK_FRAMES};
    a.u.pack_frames.module = 3;
    a.u.pack_frames.offset = 0x1234;
    a.u.pack_frames.nframes = MEMFMT_MAX_PACK_FRAMES;
    for (uint32_t i = 0; i < MEMFMT_MAX_PACK_FRAMES; i++) {
        a.u.pack_frames.frames[i] = (struct memfmt_pack_frame){i + 1, i + 2, i * 10, i + 1 < MEMFMT_MAX_PACK_FRAMES};
    }
    CHECK(roundtrip(&a, &b) == 0);
    CHECK(b.u.pack_frames.module == 3 && b.u.pack_frames.offset == 0x1234 && b.u.pack_frames.nframes == 64);
    CHECK(memcmp(a.u.pack_frames.frames, b.u.pack_frames.frames, sizeof a.u.pack_frames.frames) == 0);
    /* 0 frames, or more than 64, is corrupt. */
    uint8_t buf[64];
    a.u.pack_frames.nframes = 1;
    int n = memfmt_encode(&a, buf, sizeof buf);
    CHECK(n > 0);
    buf[2 + 2 + 1] = 0; /* tag, length, module, offset (2 bytes), then the frame count */
    CHECK_EQ(memfmt_decode(buf, (size_t)n, &b), MEMFMT_E_CORRUPT);
    buf[2 + 2 + 1] = 65;
    CHECK_EQ(memfmt_decode(buf, (size_t)n, &b), MEMFMT_E_CORRUPT);

    /* A file of events, a record of 600 KiB (larger than the writer's
     * input buffer), and pack records, copied raw. */
    int fd = temp_fd();
    /* Version 2: the copy keeps the input's version (EVENTS as in 2). */
    struct memfmt_header h = {2, 8, 1, MEMFMT_HF_ATTACHED};
    int rc;
    memfmt_writer *w = memfmt_writer_new(fd, &h, 3, &rc);
    CHECK(w != NULL);
    static char big[600 << 10];
    memset(big, 'x', sizeof big);
    enum { N = 30000 };
    for (int i = 0; i < N; i++) {
        struct memfmt_record r = {.tag = MEMFMT_REC_ALLOC};
        r.u.alloc.size = (uint64_t)i % 97;
        r.u.alloc.thread = 1;
        r.u.alloc.info = (uint32_t)(i % 97) + 1;
        CHECK(memfmt_write(w, &r) == 0);
        if (i == N / 2) {
            /* Larger than the writer's input buffer: encoded here,
             * written raw (as memprint --pack writes its records). */
            static uint8_t enc[(600 << 10) + 16];
            struct memfmt_record s = {.tag = MEMFMT_REC_PACK_STRING};
            s.u.pack_string.str = big;
            s.u.pack_string.len = sizeof big;
            int k = memfmt_encode(&s, enc, sizeof enc);
            CHECK(k > 0);
            CHECK(memfmt_write_raw(w, enc, (size_t)k) == 0);
        }
    }
    CHECK(memfmt_write(w, &a) == 0);
    CHECK(memfmt_writer_finish(w) == 0);
    memfmt_writer_free(w);

    int out = temp_fd();
    lseek(fd, 0, SEEK_SET);
    memfmt_reader *r = memfmt_reader_open_fd(fd, &rc);
    CHECK(r != NULL);
    w = memfmt_writer_new(out, memfmt_reader_header(r), 3, &rc);
    const uint8_t *raw;
    size_t len;
    unsigned tag;
    int records = 0;
    while ((rc = memfmt_read_raw(r, &raw, &len, &tag)) > 0) {
        CHECK(memfmt_write_raw(w, raw, len) == 0);
        records++;
    }
    CHECK_EQ(rc, 0);
    CHECK(records > 3);
    CHECK(memfmt_writer_finish(w) == 0);
    memfmt_writer_free(w);
    memfmt_reader_free(r);
    /* Tag 0 is never a record. */
    int spare = temp_fd();
    w = memfmt_writer_new(spare, &h, 3, &rc);
    CHECK_EQ(memfmt_write_raw(w, (const uint8_t *)"\0\0", 2), MEMFMT_E_INVALID);
    memfmt_writer_free(w);
    close(spare);

    /* Both read the same, record for record. */
    lseek(fd, 0, SEEK_SET);
    lseek(out, 0, SEEK_SET);
    memfmt_reader *r1 = memfmt_reader_open_fd(fd, &rc);
    memfmt_reader *r2 = memfmt_reader_open_fd(out, &rc);
    CHECK(r1 && r2);
    CHECK_EQ(memfmt_reader_header(r2)->version, 2);
    CHECK_EQ(memfmt_reader_header(r2)->flags, MEMFMT_HF_ATTACHED);
    struct memfmt_record x, y;
    int rc1, rc2, same = 1, count = 0;
    do {
        rc1 = memfmt_read(r1, &x);
        rc2 = memfmt_read(r2, &y);
        same &= rc1 == rc2 && (rc1 <= 0 || x.tag == y.tag);
        if (rc1 > 0 && x.tag == MEMFMT_REC_ALLOC) {
            same &= x.u.alloc.size == y.u.alloc.size && x.u.alloc.info == y.u.alloc.info;
        }
        if (rc1 > 0 && x.tag == MEMFMT_REC_PACK_STRING) {
            same &= x.u.pack_string.len == y.u.pack_string.len && y.u.pack_string.len == sizeof big;
        }
        count++;
    } while (rc1 > 0 && same);
    CHECK(same);
    CHECK_EQ(rc1, 0);
    CHECK_EQ(count, N + 3);
    memfmt_reader_free(r1);
    memfmt_reader_free(r2);
    close(fd);
    close(out);
}

static void test_bad_files(void)
{
    int rc;
    int fd = temp_fd();
    memfmt_reader *r = memfmt_reader_open_fd(fd, &rc);
    CHECK(r == NULL && rc == MEMFMT_E_EMPTY);
    CHECK(write(fd, "hello, this is text\n", 20) == 20);
    lseek(fd, 0, SEEK_SET);
    r = memfmt_reader_open_fd(fd, &rc);
    CHECK(r == NULL && rc == MEMFMT_E_NOT_MEMREC);
    close(fd);

    /* A newer version in a valid file. */
    fd = temp_fd();
    struct memfmt_header h = {MEMFMT_VERSION + 1, 8, 1, 0};
    memfmt_writer *w = memfmt_writer_new(fd, &h, 1, &rc);
    CHECK(memfmt_writer_finish(w) == 0);
    memfmt_writer_free(w);
    lseek(fd, 0, SEEK_SET);
    r = memfmt_reader_open_fd(fd, &rc);
    CHECK(r == NULL && rc == MEMFMT_E_VERSION);
    close(fd);

    CHECK(memfmt_reader_open("/nonexistent/file.zst", &rc) == NULL && rc == MEMFMT_E_IO);
    CHECK(strcmp(memfmt_strerror(MEMFMT_E_TRUNCATED), "truncated") == 0);
}

/* Read the whole file at fd; returns the last status (0: clean end) and
 * the records read in *n. */
static int read_all(int fd, int *n)
{
    int rc;
    *n = 0;
    lseek(fd, 0, SEEK_SET);
    memfmt_reader *r = memfmt_reader_open_fd(fd, &rc);
    if (!r) {
        return rc;
    }
    struct memfmt_record rec;
    while ((rc = memfmt_read(r, &rec)) > 0) {
        (*n)++;
    }
    memfmt_reader_free(r);
    return rc;
}

/* Every byte of a small recording of several flushed zstd blocks flipped,
 * one at a time, after the frame header: whenever zstd itself (one call,
 * content checksum verified) decodes other bytes than the original's, or
 * none, the reader must end with an error, never a clean end; when the
 * flip leaves the decoded bytes as they were (zstd's encoding has a few
 * such bytes, e.g. a block's table modes byte whose "repeat" stands for
 * the same predefined tables), the reader must read every record. */
static void test_flipped_bytes(void)
{
    int fd = temp_fd();
    CHECK(fd >= 0);
    struct memfmt_header h = {MEMFMT_VERSION, 8, 1, 0};
    int rc;
    memfmt_writer *w = memfmt_writer_new(fd, &h, 3, &rc);
    CHECK(w != NULL);
    enum { N = 400 };
    int nrec = 0;
    for (int i = 0; i < N; i++) {
        struct memfmt_record r = {.tag = MEMFMT_REC_ALLOC};
        r.u.alloc.size = (uint64_t)i * 24 + 8;
        r.u.alloc.thread = 1;
        r.u.alloc.info = (uint32_t)i + 1;
        CHECK(memfmt_write(w, &r) == 0);
        nrec++;
        if (i % 50 == 49) {
            struct memfmt_record t = {.tag = MEMFMT_REC_TIME};
            t.u.time.ms = (uint64_t)i;
            CHECK(memfmt_write(w, &t) == 0);
            CHECK(memfmt_writer_flush(w) == 0);
            nrec++;
        }
    }
    struct memfmt_record end = {.tag = MEMFMT_REC_END};
    end.u.end.runtime_ms = N;
    CHECK(memfmt_write(w, &end) == 0);
    nrec++;
    CHECK(memfmt_writer_finish(w) == 0);
    memfmt_writer_free(w);

    size_t size = (size_t)lseek(fd, 0, SEEK_END);
    uint8_t *file = malloc(size);
    CHECK(file != NULL && pread(fd, file, size, 0) == (ssize_t)size);
    enum { CAP = 1 << 20 };
    uint8_t *plain = malloc(CAP), *got = malloc(CAP);
    size_t plain_len = ZSTD_decompress(plain, CAP, file, size);
    CHECK(!ZSTD_isError(plain_len));
    int n;
    CHECK_EQ(read_all(fd, &n), 0);
    CHECK_EQ(n, nrec);
    /* The frame header (RFC 8878 3.1.1.1): magic, descriptor, window
     * descriptor unless single segment, dictionary id, content size. */
    CHECK(size > 16);
    uint8_t fhd = file[4];
    static const size_t did_len[4] = {0, 1, 2, 4}, fcs_len[4] = {0, 2, 4, 8};
    size_t start = 5 + ((fhd >> 5) & 1 ? 0 : 1) + did_len[fhd & 3] + fcs_len[fhd >> 6];
    if ((fhd >> 6) == 0 && ((fhd >> 5) & 1)) {
        start += 1;
    }
    CHECK(start < size);

    int changed = 0, same = 0, missed = 0, lost = 0;
    for (size_t off = start; off < size; off++) {
        file[off] ^= 0xff;
        CHECK(pwrite(fd, file, size, 0) == (ssize_t)size);
        size_t len = ZSTD_decompress(got, CAP, file, size);
        int differs = ZSTD_isError(len) || len != plain_len || memcmp(got, plain, len) != 0;
        rc = read_all(fd, &n);
        if (differs) {
            changed++;
            missed += rc >= 0;
        } else {
            same++;
            lost += rc != 0 || n != nrec;
        }
        file[off] ^= 0xff;
    }
    CHECK(pwrite(fd, file, size, 0) == (ssize_t)size);
    CHECK_EQ(missed, 0);
    CHECK_EQ(lost, 0);
    /* Nearly every byte matters: the loop did test the reader. */
    CHECK(changed > 0 && same * 10 < changed);
    free(file);
    free(plain);
    free(got);
    close(fd);
}

/* Events of two threads through a writer and back: every field, new and
 * known (size, trace) pairs, temporaries named by the thread's latest. */
static void test_events(void)
{
    struct memfmt_record in[] = {
        {.tag = MEMFMT_REC_ALLOC,
         .u.alloc = {.thread = 1, .kind = MEMFMT_K_MALLOC, .size = 10001, .trace = 3, .info = 1}},
        {.tag = MEMFMT_REC_ALLOC, .u.alloc = {.thread = 2, .kind = MEMFMT_K_NEW, .size = 20002, .trace = 4, .info = 2}},
        {.tag = MEMFMT_REC_FREE,
         .u.free = {.thread = 1, .kind = MEMFMT_K_FREE, .size = 10001, .trace = 3, .info = 1, .temporary = 1}},
        {.tag = MEMFMT_REC_ALLOC,
         .u.alloc = {.thread = 1, .kind = MEMFMT_K_CALLOC, .size = 10001, .trace = 3, .info = 1}},
        {.tag = MEMFMT_REC_REALLOC,
         .u.alloc = {.thread = 1,
                     .kind = MEMFMT_K_REALLOC,
                     .size = 50,
                     .trace = 5,
                     .info = 3,
                     .old_size = 10001,
                     .old_trace = 3,
                     .old_info = 1,
                     .old_temporary = 1}},
        {.tag = MEMFMT_REC_REALLOC,
         .u.alloc = {.thread = 2,
                     .kind = MEMFMT_K_REALLOC,
                     .size = 50,
                     .trace = 5,
                     .info = 3,
                     .old_size = 20002,
                     .old_trace = 4,
                     .old_info = 2,
                     .old_temporary = 0}},
        {.tag = MEMFMT_REC_FREE,
         .u.free = {.thread = 1, .kind = MEMFMT_K_DELETE, .size = 50, .trace = 5, .info = 3, .temporary = 0}},
        {.tag = MEMFMT_REC_ALLOC,
         .u.alloc = {.thread = 2, .kind = MEMFMT_K_NEW_ARRAY, .size = 1ull << 40, .trace = 70000, .info = 4}},
    };
    enum { N = sizeof in / sizeof in[0] };
    int fd = temp_fd();
    struct memfmt_header h = {MEMFMT_VERSION, 8, 1, 0};
    int rc;
    memfmt_writer *w = memfmt_writer_new(fd, &h, 3, &rc);
    for (int i = 0; i < N; i++) {
        CHECK(memfmt_write(w, &in[i]) == 0);
        if (i == 3) {
            struct memfmt_record t = {.tag = MEMFMT_REC_TIME};
            t.u.time.ms = 7; /* a record between events closes the block */
            CHECK(memfmt_write(w, &t) == 0);
        }
    }
    /* A temporary that is not the thread's latest allocation cannot be written. */
    struct memfmt_record wrong = {.tag = MEMFMT_REC_FREE, .u.free = {.thread = 2, .info = 1, .temporary = 1}};
    CHECK(memfmt_write(w, &wrong) == MEMFMT_E_INVALID);
    CHECK(memfmt_writer_finish(w) == 0);
    memfmt_writer_free(w);
    lseek(fd, 0, SEEK_SET);
    memfmt_reader *r = memfmt_reader_open_fd(fd, &rc);
    struct memfmt_record out;
    int i = 0, times = 0;
    while ((rc = memfmt_read(r, &out)) > 0) {
        if (out.tag == MEMFMT_REC_TIME) {
            times++;
            CHECK(i == 4);
            continue;
        }
        CHECK(i < N);
        if (i >= N) {
            break;
        }
        CHECK_EQ(out.tag, in[i].tag);
        if (out.tag == MEMFMT_REC_FREE) {
            CHECK(memcmp(&out.u.free, &in[i].u.free, sizeof out.u.free) == 0);
        } else {
            CHECK_EQ(out.u.alloc.thread, in[i].u.alloc.thread);
            CHECK_EQ(out.u.alloc.kind, in[i].u.alloc.kind);
            CHECK_EQ(out.u.alloc.size, in[i].u.alloc.size);
            CHECK_EQ(out.u.alloc.trace, in[i].u.alloc.trace);
            CHECK_EQ(out.u.alloc.info, in[i].u.alloc.info);
            CHECK_EQ(out.u.alloc.old_info, in[i].u.alloc.old_info);
            CHECK_EQ(out.u.alloc.old_size, in[i].u.alloc.old_size);
            CHECK_EQ(out.u.alloc.old_trace, in[i].u.alloc.old_trace);
            CHECK_EQ(out.u.alloc.old_temporary, in[i].u.alloc.old_temporary);
        }
        i++;
    }
    CHECK_EQ(rc, 0);
    CHECK_EQ(i, N);
    CHECK_EQ(times, 1);
    memfmt_reader_free(r);
    close(fd);

    /* Operations that cannot be: an info never defined, a temporary free of
     * a thread that never allocated, an unknown operation, a cut field;
     * in version 1 blocks (one interleaved column) as in version 2. */
    struct memfmt_evstate st = {0};
    struct memfmt_record ev;
    const uint8_t bad1[] = {MEMFMT_OP_FREE << 4, 5};
    CHECK(memfmt_event_block(&st, bad1, sizeof bad1, 1) == 0 && memfmt_event_decode(&st, &ev) == MEMFMT_E_CORRUPT);
    const uint8_t bad2[] = {(MEMFMT_OP_FREE | MEMFMT_OP_TEMP) << 4};
    CHECK(memfmt_event_block(&st, bad2, sizeof bad2, 1) == 0 && memfmt_event_decode(&st, &ev) == MEMFMT_E_CORRUPT);
    const uint8_t bad3[] = {0xf0};
    CHECK(memfmt_event_block(&st, bad3, sizeof bad3, 1) == 0 && memfmt_event_decode(&st, &ev) == MEMFMT_E_CORRUPT);
    const uint8_t cut[] = {(MEMFMT_OP_ALLOC | MEMFMT_OP_NEW) << 4, 0x80};
    CHECK(memfmt_event_block(&st, cut, sizeof cut, 1) == 0 && memfmt_event_decode(&st, &ev) == MEMFMT_E_CORRUPT);
    const uint8_t big_thread[] = {MEMFMT_OP_THREAD << 4, 0x80, 0x80, 0x80, 0x01};
    CHECK(memfmt_event_block(&st, big_thread, sizeof big_thread, 1) == 0 &&
          memfmt_event_decode(&st, &ev) == MEMFMT_E_CORRUPT);
    /* A version 1 block reads as it always did: NEW 100-byte malloc at
     * trace 3, then its temporary free. */
    const uint8_t v1[] = {(MEMFMT_OP_ALLOC | MEMFMT_OP_NEW) << 4, 100, 3, (MEMFMT_OP_FREE | MEMFMT_OP_TEMP) << 4 | 11};
    CHECK(memfmt_event_block(&st, v1, sizeof v1, 1) == 0);
    CHECK(memfmt_event_decode(&st, &ev) == 1 && ev.tag == MEMFMT_REC_ALLOC && ev.u.alloc.size == 100 &&
          ev.u.alloc.trace == 3 && ev.u.alloc.info == 1);
    CHECK(memfmt_event_decode(&st, &ev) == 1 && ev.tag == MEMFMT_REC_FREE && ev.u.free.temporary &&
          ev.u.free.size == 100 && ev.u.free.kind == 11);
    CHECK(memfmt_event_decode(&st, &ev) == 0);
    memfmt_evstate_release(&st);
    /* Version 2: the same two events in columns (3 op bytes, no info, one
     * size, one trace, a thread switch to 2 first); then column lengths
     * that do not fit, and a column left over at the end. */
    const uint8_t v2[] = {3,
                          0,
                          1,
                          1,
                          MEMFMT_OP_THREAD << 4,
                          (MEMFMT_OP_ALLOC | MEMFMT_OP_NEW) << 4,
                          (MEMFMT_OP_FREE | MEMFMT_OP_TEMP) << 4 | 11,
                          100,
                          3,
                          2};
    CHECK(memfmt_event_block(&st, v2, sizeof v2, 2) == 0);
    CHECK(memfmt_event_decode(&st, &ev) == 1 && ev.tag == MEMFMT_REC_ALLOC && ev.u.alloc.size == 100 &&
          ev.u.alloc.trace == 3 && ev.u.alloc.thread == 2);
    CHECK(memfmt_event_decode(&st, &ev) == 1 && ev.tag == MEMFMT_REC_FREE && ev.u.free.temporary);
    CHECK(memfmt_event_decode(&st, &ev) == 0);
    const uint8_t v2_long[] = {3, 0, 1, 9, 0, 0, 0, 100, 3};
    CHECK(memfmt_event_block(&st, v2_long, sizeof v2_long, 2) == MEMFMT_E_CORRUPT);
    const uint8_t v2_extra[] = {1, 0, 2, 1, (MEMFMT_OP_ALLOC | MEMFMT_OP_NEW) << 4, 100, 100, 3};
    CHECK(memfmt_event_block(&st, v2_extra, sizeof v2_extra, 2) == 0);
    CHECK(memfmt_event_decode(&st, &ev) == 1);
    CHECK(memfmt_event_decode(&st, &ev) == MEMFMT_E_CORRUPT);
    memfmt_evstate_release(&st);
}

static uint32_t ns32(uint64_t ns)
{
    return ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
}

/* What a reader hands out, flattened: each event as the batch entries
 * memfmt_read_batch() gives for it, each other record as an entry with its
 * tag in the flags (bits no event has). Sets how reading ended and where. */
static size_t read_flat(int fd, int batched, struct memfmt_event *out, size_t cap, int *rc, uint64_t *offset)
{
    lseek(fd, 0, SEEK_SET);
    memfmt_reader *r = memfmt_reader_open_fd(fd, rc);
    if (!r) {
        return 0;
    }
    size_t n = 0;
    struct memfmt_record rec;
    struct memfmt_event evs[4]; /* small batches: blocks split across calls */
    size_t k;
    while ((*rc = batched ? memfmt_read_batch(r, &rec, evs, 4, &k) : memfmt_read(r, &rec)) > 0 && n + 4 <= cap) {
        if (batched && k > 0) {
            memcpy(out + n, evs, k * sizeof *evs);
            n += k;
        } else if (rec.tag == MEMFMT_REC_FREE) {
            out[n++] = (struct memfmt_event){rec.u.free.size, rec.u.free.trace,
                                             MEMFMT_EV_FREE | (rec.u.free.temporary ? MEMFMT_EV_TEMPORARY : 0),
                                             rec.u.free.info, ns32(rec.u.free.ns)};
        } else if (rec.tag == MEMFMT_REC_REALLOC) {
            out[n++] = (struct memfmt_event){rec.u.alloc.old_size, rec.u.alloc.old_trace,
                                             MEMFMT_EV_FREE | MEMFMT_EV_REALLOC |
                                                 (rec.u.alloc.old_temporary ? MEMFMT_EV_TEMPORARY : 0),
                                             rec.u.alloc.old_info, 0};
            out[n++] =
                (struct memfmt_event){rec.u.alloc.size, rec.u.alloc.trace, 0, rec.u.alloc.info, ns32(rec.u.alloc.ns)};
        } else if (rec.tag == MEMFMT_REC_ALLOC) {
            out[n++] =
                (struct memfmt_event){rec.u.alloc.size, rec.u.alloc.trace, 0, rec.u.alloc.info, ns32(rec.u.alloc.ns)};
        } else {
            out[n++] = (struct memfmt_event){0, 0, rec.tag << 8, 0, 0};
        }
    }
    *offset = memfmt_reader_offset(r);
    memfmt_reader_free(r);
    return n;
}

/* memfmt_read_batch() hands out what memfmt_read() does, in the same
 * order, and stops with the same status at the same offset. */
static int same_reading(int fd)
{
    enum { CAP = 300000 };
    struct memfmt_event *a = malloc(CAP * sizeof *a), *b = malloc(CAP * sizeof *b);
    int rc_a, rc_b;
    uint64_t off_a, off_b;
    size_t na = read_flat(fd, 0, a, CAP, &rc_a, &off_a);
    size_t nb = read_flat(fd, 1, b, CAP, &rc_b, &off_b);
    int same = na == nb && rc_a == rc_b && off_a == off_b && memcmp(a, b, na * sizeof *a) == 0;
    free(a);
    free(b);
    return same;
}

/* A file holding `payload` as one EVENTS block after a TIME record. */
static int events_file(const uint8_t *payload, size_t len)
{
    uint8_t raw[256] = MEMFMT_MAGIC "\1\0\10\1\0\0\0\0";
    size_t n = MEMFMT_HEADER_LEN;
    raw[n++] = MEMFMT_REC_TIME;
    raw[n++] = 1;
    raw[n++] = 5;
    raw[n++] = MEMFMT_REC_EVENTS;
    n += memfmt_put_varint(raw + n, len);
    memcpy(raw + n, payload, len);
    n += len;
    uint8_t z[512];
    size_t zn = ZSTD_compress(z, sizeof z, raw, n, 1);
    int fd = temp_fd();
    if (ZSTD_isError(zn) || write(fd, z, zn) != (ssize_t)zn) {
        return -1;
    }
    return fd;
}

/* The reader's two ways agree on good files, cut files and bad events;
 * events before a bad one in the same block come first. */
static void test_batch_reading(void)
{
    enum { A = MEMFMT_OP_ALLOC << 4, F = MEMFMT_OP_FREE << 4, R = MEMFMT_OP_REALLOC << 4 };
    enum { NEW = MEMFMT_OP_NEW << 4, TEMP = MEMFMT_OP_TEMP << 4, T = MEMFMT_OP_THREAD << 4 };
    const uint8_t good[] = {A | NEW, 100, 3, F | TEMP, T, 2, A | NEW, 0x80, 0x01, 4, A, 1, R | TEMP | NEW, 7, 5, F, 2};
    const uint8_t no_latest[] = {A | NEW, 100, 3, F | TEMP, F | TEMP, A, 1};
    const uint8_t freed_twice[] = {A | NEW, 100, 3, A, 1, F, 1, F, 1, F, 1, A, 1};
    const uint8_t bad_realloc[] = {A | NEW, 100, 3, A, 1, R | TEMP, 9};
    const uint8_t dead_realloc[] = {A | NEW, 100, 3, F, 1, T, 1, R, 1, 0x80};
    const uint8_t cut_varint[] = {A | NEW, 100, 3, A | NEW, 0x80};
    const struct {
        const uint8_t *p;
        size_t len;
        int rc;
    } cases[] = {
        {good, sizeof good, 0},
        {no_latest, sizeof no_latest, MEMFMT_E_CORRUPT},
        {freed_twice, sizeof freed_twice, MEMFMT_E_CORRUPT},
        {bad_realloc, sizeof bad_realloc, MEMFMT_E_CORRUPT},
        {dead_realloc, sizeof dead_realloc, MEMFMT_E_CORRUPT},
        {cut_varint, sizeof cut_varint, MEMFMT_E_CORRUPT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int fd = events_file(cases[i].p, cases[i].len);
        CHECK(fd >= 0);
        CHECK(same_reading(fd));
        struct memfmt_event ev[64];
        int rc;
        uint64_t off;
        size_t n = read_flat(fd, 1, ev, 64, &rc, &off);
        CHECK_EQ(rc, cases[i].rc);
        CHECK(n >= 2); /* the TIME record and at least the first event */
        close(fd);
    }

    /* A long file, whole and cut. */
    int fd = temp_fd();
    struct memfmt_header h = {MEMFMT_VERSION, 8, 1, 0};
    int rc;
    memfmt_writer *w = memfmt_writer_new(fd, &h, 3, &rc);
    for (uint32_t i = 0; i < 100000; i++) {
        struct memfmt_record r = {.tag = MEMFMT_REC_ALLOC};
        r.u.alloc.thread = i % 3;
        r.u.alloc.size = i % 1000;
        r.u.alloc.trace = i % 7;
        r.u.alloc.info = i < 1000 ? i + 1 : i % 1000 + 1;
        CHECK(memfmt_write(w, &r) == 0);
        if (i % 3 == 0) {
            r.tag = MEMFMT_REC_FREE;
            r.u.free.temporary = 1;
            CHECK(memfmt_write(w, &r) == 0);
        }
    }
    CHECK(memfmt_writer_finish(w) == 0);
    uint64_t total = memfmt_writer_bytes(w);
    memfmt_writer_free(w);
    CHECK(same_reading(fd));
    CHECK(ftruncate(fd, (off_t)(total / 2)) == 0);
    CHECK(same_reading(fd));
    close(fd);
}

/* Write the same events to a file with header `version` and `flags`,
 * with the times of alloc/free calls; returns the descriptor. */
static int timed_file(uint16_t version, uint32_t flags)
{
    int fd = temp_fd();
    struct memfmt_header h = {version, 8, 1, flags};
    int rc;
    memfmt_writer *w = memfmt_writer_new(fd, &h, 3, &rc);
    for (uint32_t i = 0; i < 30000; i++) {
        struct memfmt_record r = {.tag = MEMFMT_REC_ALLOC};
        r.u.alloc.thread = 1 + i % 2;
        r.u.alloc.size = 16 + i % 50;
        r.u.alloc.trace = i % 7;
        r.u.alloc.info = i < 50 ? i + 1 : i % 50 + 1;
        r.u.alloc.ns = 20 + i % 300;
        CHECK(memfmt_write(w, &r) == 0);
        if (i % 3 == 0) {
            r.tag = MEMFMT_REC_FREE;
            r.u.free.thread = r.u.alloc.thread;
            r.u.free.info = r.u.alloc.info;
            r.u.free.temporary = 1;
            r.u.free.ns = 10 + i % 7;
            CHECK(memfmt_write(w, &r) == 0);
        } else if (i % 3 == 1) {
            /* A realloc of the block just allocated; one of them takes
             * longer than UINT32_MAX ns: saturated in a batch. */
            uint32_t old = r.u.alloc.info;
            r.tag = MEMFMT_REC_REALLOC;
            r.u.alloc.old_info = old;
            r.u.alloc.old_temporary = 1;
            r.u.alloc.info = old;
            r.u.alloc.ns = i == 1000 ? 5000000000ull : 40 + i % 11;
            CHECK(memfmt_write(w, &r) == 0);
        }
        if (i % 5000 == 0) {
            struct memfmt_record t = {.tag = MEMFMT_REC_THREAD_TIMES};
            t.u.thread_times.thread = 1;
            t.u.thread_times.wall_ns = i;
            CHECK(memfmt_write(w, &t) == 0);
        }
    }
    CHECK(memfmt_writer_finish(w) == 0);
    memfmt_writer_free(w);
    return fd;
}

/* The decompressed bytes of the file at fd, from offset `from`, in *out. */
static size_t decompressed(int fd, size_t from, uint8_t **out)
{
    off_t n = lseek(fd, 0, SEEK_END);
    uint8_t *z = malloc((size_t)n);
    CHECK(pread(fd, z, (size_t)n, 0) == n);
    size_t cap = 16u << 20, len = 0;
    uint8_t *raw = malloc(cap);
    ZSTD_DStream *d = ZSTD_createDStream();
    ZSTD_inBuffer in = {z, (size_t)n, 0};
    while (in.pos < in.size && len < cap) {
        ZSTD_outBuffer o = {raw + len, cap - len, 0};
        if (ZSTD_isError(ZSTD_decompressStream(d, &o, &in))) {
            break;
        }
        len += o.pos;
    }
    ZSTD_freeDStream(d);
    free(z);
    memmove(raw, raw + from, len - from);
    *out = raw;
    return len - from;
}

/* The sum of the times of every event of the file at fd (memfmt_read()),
 * and in *events (unless NULL) how many events it has. */
static uint64_t sum_of_times(int fd, int *events)
{
    lseek(fd, 0, SEEK_SET);
    int rc;
    memfmt_reader *r = memfmt_reader_open_fd(fd, &rc);
    CHECK(r != NULL);
    struct memfmt_record rec;
    uint64_t sum = 0;
    int n = 0;
    while (r && (rc = memfmt_read(r, &rec)) > 0) {
        if (rec.tag == MEMFMT_REC_ALLOC || rec.tag == MEMFMT_REC_REALLOC) {
            sum += rec.u.alloc.ns;
            n++;
        } else if (rec.tag == MEMFMT_REC_FREE) {
            sum += rec.u.free.ns;
            n++;
        }
    }
    CHECK_EQ(rc, 0);
    memfmt_reader_free(r);
    if (events) {
        *events = n;
    }
    return sum;
}

/* Timed files (version 4, Huffman-coded time columns, and version 3,
 * varints): every event's time comes back, through both ways of reading;
 * the code makes the decompressed stream smaller than version 3's; an
 * untimed file has the bytes of version 2 after the header, and its events
 * have no time; a version 2 file whose flags (wrongly) say TIMED is read
 * as version 2. */
static void test_timed(void)
{
    int fd = timed_file(MEMFMT_VERSION, MEMFMT_HF_TIMED);
    int fd_v3 = timed_file(3, MEMFMT_HF_TIMED);
    CHECK(same_reading(fd_v3));
    CHECK_EQ(sum_of_times(fd_v3, NULL), sum_of_times(fd, NULL));
    uint8_t *b4, *b3v;
    size_t n4 = decompressed(fd, MEMFMT_HEADER_LEN, &b4);
    size_t n3v = decompressed(fd_v3, MEMFMT_HEADER_LEN, &b3v);
    CHECK(n4 + 20000 < n3v); /* 50,000 times, at least 3 bits a time less */
    free(b4);
    free(b3v);
    close(fd_v3);
    CHECK(same_reading(fd));
    lseek(fd, 0, SEEK_SET);
    int rc;
    memfmt_reader *r = memfmt_reader_open_fd(fd, &rc);
    CHECK(r != NULL && (memfmt_reader_header(r)->flags & MEMFMT_HF_TIMED));
    struct memfmt_record rec;
    uint64_t sum_alloc = 0, sum_free = 0, sum_re = 0, expect_alloc = 0, expect_free = 0, expect_re = 0;
    uint64_t big = 0;
    int nthread_times = 0;
    while ((rc = memfmt_read(r, &rec)) > 0) {
        if (rec.tag == MEMFMT_REC_ALLOC) {
            sum_alloc += rec.u.alloc.ns;
        } else if (rec.tag == MEMFMT_REC_FREE) {
            sum_free += rec.u.free.ns;
        } else if (rec.tag == MEMFMT_REC_REALLOC) {
            sum_re += rec.u.alloc.ns;
            big = rec.u.alloc.ns > big ? rec.u.alloc.ns : big;
        } else if (rec.tag == MEMFMT_REC_THREAD_TIMES) {
            nthread_times++;
        }
    }
    CHECK_EQ(rc, 0);
    memfmt_reader_free(r);
    for (uint32_t i = 0; i < 30000; i++) {
        expect_alloc += 20 + i % 300;
        if (i % 3 == 0) {
            expect_free += 10 + i % 7;
        } else if (i % 3 == 1) {
            expect_re += i == 1000 ? 5000000000ull : 40 + i % 11;
        }
    }
    CHECK_EQ(sum_alloc, expect_alloc);
    CHECK_EQ(sum_free, expect_free);
    CHECK_EQ(sum_re, expect_re);
    CHECK_EQ(big, 5000000000ull);
    CHECK_EQ(nthread_times, 6);

    /* Batches: the realloc's time on its allocation entry, saturated. */
    lseek(fd, 0, SEEK_SET);
    r = memfmt_reader_open_fd(fd, &rc);
    struct memfmt_event evs[256];
    size_t n;
    uint64_t sum_batch = 0, realloc_free_ns = 0;
    uint32_t max_batch = 0;
    while ((rc = memfmt_read_batch(r, &rec, evs, 256, &n)) > 0) {
        for (size_t i = 0; i < n; i++) {
            sum_batch += evs[i].ns;
            max_batch = evs[i].ns > max_batch ? evs[i].ns : max_batch;
            if (evs[i].flags & MEMFMT_EV_REALLOC) {
                realloc_free_ns += evs[i].ns;
            }
        }
    }
    CHECK_EQ(rc, 0);
    memfmt_reader_free(r);
    CHECK_EQ(max_batch, UINT32_MAX);
    CHECK_EQ(realloc_free_ns, 0);
    CHECK_EQ(sum_batch, expect_alloc + expect_free + expect_re - 5000000000ull + UINT32_MAX);

    /* Untimed: no time column, version 2's bytes after the header. */
    int fd3 = timed_file(MEMFMT_VERSION, 0);
    int fd2 = timed_file(2, 0);
    uint8_t *b3, *b2;
    size_t n3 = decompressed(fd3, MEMFMT_HEADER_LEN, &b3);
    size_t n2 = decompressed(fd2, MEMFMT_HEADER_LEN, &b2);
    CHECK(n3 > 100000 && n3 == n2 && memcmp(b3, b2, n3) == 0);
    uint8_t *bt;
    size_t nt = decompressed(fd, MEMFMT_HEADER_LEN, &bt);
    CHECK(nt > n3);
    free(b3);
    free(b2);
    free(bt);
    int nev = 0;
    uint64_t ns = sum_of_times(fd3, &nev);
    CHECK_EQ(nev, 50000);
    CHECK_EQ(ns, 0);

    /* A version 2 file claiming TIMED: read as version 2, no times. The
     * writer writes the version 2 layout for it too. */
    int fdv2 = timed_file(2, MEMFMT_HF_TIMED);
    CHECK(same_reading(fdv2));
    int nrec;
    CHECK_EQ(read_all(fdv2, &nrec), 0);
    CHECK_EQ(nrec, 50000 + 6);
    close(fdv2);
    close(fd);
    close(fd2);
    close(fd3);
}

static void test_wire(void)
{
    uint8_t buf[256];
    size_t n = 0;
    uint64_t seqs[] = {5, 6, 100};
    uint64_t prev = 0;
    for (int i = 0; i < 3; i++) {
        buf[n++] = MEMFMT_W_ALLOC;
        n += memfmt_put_varint(buf + n, seqs[i] - prev);
        prev = seqs[i];
        n += memfmt_put_varint(buf + n, MEMFMT_K_MALLOC);
        n += memfmt_put_varint(buf + n, 16 + (uint64_t)i);
        n += memfmt_put_varint(buf + n, 0x1000 * (uint64_t)(i + 1));
        n += memfmt_put_varint(buf + n, 1);
    }
    const uint8_t *p = buf;
    uint64_t dprev = 0;
    for (int i = 0; i < 3; i++) {
        struct memfmt_wire_event ev;
        CHECK(memfmt_wire_decode(&p, buf + n, &dprev, &ev) == 0);
        CHECK_EQ(ev.seq, seqs[i]);
        CHECK_EQ(ev.size, 16 + (uint64_t)i);
        CHECK_EQ(ev.addr, 0x1000 * (uint64_t)(i + 1));
    }
    CHECK(p == buf + n);
    uint8_t junk[] = {0xee, 1, 2};
    p = junk;
    struct memfmt_wire_event ev;
    CHECK(memfmt_wire_decode(&p, junk + sizeof junk, &dprev, &ev) == MEMFMT_E_CORRUPT);
}

int main(void)
{
    test_varint();
    test_records();
    test_file();
    test_bad_files();
    test_pack_and_raw_copy();
    test_flipped_bytes();
    test_events();
    test_batch_reading();
    test_timed();
    test_wire();
    return check_summary("test_format");
}
