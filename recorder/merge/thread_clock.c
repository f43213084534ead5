// SPDX-License-Identifier: MIT
/* The merge's record of each thread's times (HELLO's birth, W_TIMES) and
 * the THREAD_TIMES record written when a thread ends. Below both the
 * decode switch (which notes the times and ends an image's threads) and
 * the ordering (which ends a retired thread), so neither calls the other
 * for it. */
#include "merge.h"

#include <string.h>
#include <time.h>

#include "merge_internal.h"

struct thread_clock *thread_clock_of(struct merge *m, uint32_t thread)
{
    if (thread >= m->thr_cap) {
        size_t old = m->thr_cap;
        xgrow((void **)&m->thr, &m->thr_cap, (size_t)thread + 1, sizeof *m->thr);
        memset(m->thr + old, 0, (m->thr_cap - old) * sizeof *m->thr);
    }
    return &m->thr[thread];
}

/* THREAD_TIMES of `thread`: what it said as it ended (or the exiting
 * thread said for it), else its lifetime from its first event to now (its
 * CPU time unknown). Nothing when neither is known. */
int thread_times_out(struct merge *m, uint32_t thread)
{
    struct thread_clock *tc = thread_clock_of(m, thread);
    struct memfmt_record r = {.tag = MEMFMT_REC_THREAD_TIMES};
    r.u.thread_times.thread = thread;
    int known = tc->has_times;
    if (known) {
        r.u.thread_times.wall_ns = tc->wall_ns;
        r.u.thread_times.cpu_ns = tc->cpu_ns;
    } else if (tc->born_ns) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        known = now > tc->born_ns;
        r.u.thread_times.wall_ns = known ? now - tc->born_ns : 0;
    }
    memset(tc, 0, sizeof *tc);
    return known ? out(m, &r) : 0;
}
