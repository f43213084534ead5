// SPDX-License-Identifier: MIT
/* Sequence numbers: one number per event, taken while its thread holds its
 * buffer lock, orders the events of all threads (buffer.c says why that
 * order is right). Runs inside the target: no allocation, no lock. */
#define _GNU_SOURCE
#include "seq.h"

#include <fcntl.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "conn.h"

HIDDEN atomic_uint_fast64_t seq_counter = 1;

/* Where the kernel keeps time with the TSC it has checked that the
 * counters of all CPUs agree, and RDTSCP gives a number that orders events
 * across threads without a shared cache line to fight over: it waits for
 * every earlier instruction and load, and no later store can become visible
 * before it. Elsewhere, one atomic counter. */
HIDDEN int seq_use_tsc;

/* While a single thread records, nobody else takes numbers: a plain
 * increment does (an atomic one costs as much as the rest of the event,
 * mostly for the barrier it implies). The first buffer of a second thread
 * switches to the atomic counter for good, in seq_go_shared(). */
HIDDEN atomic_int seq_shared;

int seq_is_shared(void)
{
    return atomic_load(&seq_shared);
}

void seq_go_shared(void)
{
    atomic_store(&seq_shared, 1);
}

uint64_t seq_sync_point(void)
{
    return seq_use_tsc ? seq_take() : atomic_load(&seq_counter);
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

void seq_setup(int tsc_order)
{
    seq_use_tsc = tsc_order && tsc_is_clocksource();
}
