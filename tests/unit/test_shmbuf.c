// SPDX-License-Identifier: MIT
/* The buffer area (recorder/preload/shmbuf.c): the header memrec reads,
 * slots shared through the memfd, zeroed when given back, all of them and
 * no more handed out, none twice under two threads, none after a fork's
 * forget, and a new area after it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "memwire.h"
#include "shmbuf.h"

#define OBJ 5000 /* rounded up to two pages */

static uint64_t at(int fd, size_t slot, size_t off)
{
    uint64_t v = ~0ull;
    if (pread(fd, &v, sizeof v, (off_t)(4096 + slot * 8192 + off)) != (ssize_t)sizeof v) {
        return ~0ull;
    }
    return v;
}

static void *slots[SHMBUF_SLOTS];

/* Two threads take and give back slots; each marks a slot it holds with its
 * id and checks the mark is still its own before giving it back. */
static void *churn(void *arg)
{
    uint64_t me = (uint64_t)(uintptr_t)arg;
    long bad = 0;
    for (int i = 0; i < 20000; i++) {
        uint64_t *s = shmbuf_take();
        if (!s) {
            bad++;
            continue;
        }
        if (*s != 0) {
            bad++; /* not zeroed, or another thread's */
        }
        *s = me;
        sched_yield();
        if (*s != me) {
            bad++;
        }
        shmbuf_give(s);
    }
    return (void *)bad;
}

int main(void)
{
    int fd = shmbuf_setup(OBJ, 64, 8, 128, 16, 24, 40);
    CHECK(fd >= 0);
    CHECK_EQ(shmbuf_setup(OBJ, 64, 8, 128, 16, 24, 40), -1); /* once per image */
    struct memfmt_area_header h;
    CHECK_EQ(pread(fd, &h, sizeof h, 0), sizeof h);
    CHECK_EQ(h.magic, MEMFMT_AREA_MAGIC);
    CHECK_EQ(h.slots, SHMBUF_SLOTS);
    CHECK_EQ(h.slot_size, 8192);
    CHECK_EQ(h.first, 4096);
    CHECK_EQ(h.done_at, 64);
    CHECK_EQ(h.done_size, 8);
    CHECK_EQ(h.data_at, 128);
    CHECK_EQ(h.calls_at, 16);
    CHECK_EQ(h.bytes_at, 24);
    CHECK_EQ(h.inflight_at, 40);

    /* A slot is the memfd's memory: what the thread writes, memrec reads. */
    uint8_t *a = shmbuf_take();
    CHECK(a != NULL);
    uint64_t v = 0x1122334455667788ull;
    memcpy(a + 64, &v, 8);
    size_t found = SHMBUF_SLOTS;
    for (size_t i = 0; i < SHMBUF_SLOTS; i++) {
        if (at(fd, i, 64) == v) {
            found = i;
        }
    }
    CHECK(found < SHMBUF_SLOTS);
    /* Given back, it reads as no thread's: zero, and its pages are the
     * system's again (the memfd's blocks count them). */
    struct stat st0, st1;
    CHECK_EQ(fstat(fd, &st0), 0);
    CHECK_EQ(shmbuf_give(a), 1);
    CHECK_EQ(at(fd, found, 64), 0);
    CHECK_EQ(fstat(fd, &st1), 0);
    CHECK(st1.st_blocks < st0.st_blocks);
    int local;
    CHECK_EQ(shmbuf_give(&local), 0); /* not a slot: the caller's to unmap */

    /* Every slot once, then none. */
    size_t n = 0;
    while (n < SHMBUF_SLOTS && (slots[n] = shmbuf_take()) != NULL) {
        n++;
    }
    CHECK_EQ(n, SHMBUF_SLOTS);
    CHECK(shmbuf_take() == NULL);
    int distinct = 1;
    for (size_t i = 1; i < n; i++) {
        if ((uint8_t *)slots[i] == (uint8_t *)slots[i - 1]) {
            distinct = 0;
        }
    }
    CHECK(distinct);
    CHECK_EQ(shmbuf_give(slots[7]), 1);
    CHECK(shmbuf_take() == slots[7]);
    for (size_t i = 0; i < n; i++) {
        shmbuf_give(slots[i]);
    }

    pthread_t t1, t2;
    void *bad1, *bad2;
    pthread_create(&t1, NULL, churn, (void *)(uintptr_t)1);
    pthread_create(&t2, NULL, churn, (void *)(uintptr_t)2);
    pthread_join(t1, &bad1);
    pthread_join(t2, &bad2);
    CHECK_EQ((long)bad1 + (long)bad2, 0);

    /* A fork child forgets the parent's area and makes its own. */
    shmbuf_forget();
    CHECK(shmbuf_take() == NULL);
    int fd2 = shmbuf_setup(OBJ, 64, 8, 128, 0, 0, 40);
    CHECK(fd2 >= 0);
    uint8_t *b = shmbuf_take();
    CHECK(b != NULL);
    memcpy(b + 64, &v, 8);
    CHECK_EQ(at(fd, found, 64), 0); /* not in the first area */
    close(fd);
    close(fd2);
    return check_summary("test_shmbuf");
}
