// SPDX-License-Identifier: MIT
/* Thread times (threadtimes.h): their sum and their two printed forms. */
#include "threadtimes.h"

#include "util.h"

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

void thread_times_add(struct thread_times *t, const struct memfmt_record *r)
{
    t->known = 1;
    t->wall_ns = sat_add(t->wall_ns, r->u.thread_times.wall_ns);
    t->cpu_ns = sat_add(t->cpu_ns, r->u.thread_times.cpu_ns);
}

void thread_times_text(const struct thread_times *t, FILE *f)
{
    char b1[32], b2[32];
    /* THREAD_TIMES says 0 for a CPU time the recorder could not read (a
     * thread of a process killed, a file of an older memrec): unknown, not
     * zero. */
    fprintf(f, " %12s %12s", t->known ? util_ns(b1, sizeof b1, t->wall_ns) : "-",
            t->known && t->cpu_ns ? util_ns(b2, sizeof b2, t->cpu_ns) : "-");
}

void thread_times_json(const struct thread_times *t, FILE *f)
{
    if (t->known) {
        fprintf(f, ", \"wall_ns\": %llu", (unsigned long long)t->wall_ns);
    } else {
        fputs(", \"wall_ns\": null", f);
    }
    if (t->known && t->cpu_ns) {
        fprintf(f, ", \"cpu_ns\": %llu", (unsigned long long)t->cpu_ns);
    } else {
        fputs(", \"cpu_ns\": null", f);
    }
}
