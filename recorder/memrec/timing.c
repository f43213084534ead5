// SPDX-License-Identifier: MIT
/* memrec --time on memrec's side (memrec_internal.h): which clock the
 * recorder reads around each forwarded allocator call, and how many ns a
 * tick of it is; and the CPU time of a process memrec attached to. Part
 * of the memrec program. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "memrec_internal.h"

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t tsc_now(void)
{
#if defined(__x86_64__)
    uint32_t lo, hi;
    __asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi)::"rcx");
    return (uint64_t)hi << 32 | lo;
#else
    return 0;
#endif
}

/* Whether the whole first line of `path` is `want`. */
static int file_says(const char *path, const char *want)
{
    char buf[64] = "";
    FILE *f = fopen(path, "re");
    if (!f) {
        return 0;
    }
    int ok = fgets(buf, sizeof buf, f) != NULL;
    fclose(f);
    buf[strcspn(buf, "\n")] = 0;
    return ok && strcmp(buf, want) == 0;
}

/* Whether /proc/cpuinfo's flags (of the first CPU: the kernel clears them
 * on all when any disagrees) hold `flag`. */
static int cpu_has(const char *flag)
{
    FILE *f = fopen("/proc/cpuinfo", "re");
    if (!f) {
        return 0;
    }
    char line[4096];
    int found = 0;
    size_t n = strlen(flag);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0) {
            continue;
        }
        for (char *p = strstr(line, flag); p; p = strstr(p + 1, flag)) {
            if (p[-1] == ' ' && (p[n] == ' ' || p[n] == '\n' || p[n] == 0)) {
                found = 1;
                break;
            }
        }
        break;
    }
    fclose(f);
    return found;
}

static uint64_t tsc0, mono0;

int timing_choose_clock(void)
{
#if defined(__x86_64__)
    if (cpu_has("constant_tsc") && cpu_has("nonstop_tsc") &&
        file_says("/sys/devices/system/clocksource/clocksource0/current_clocksource", "tsc")) {
        mono0 = mono_ns();
        tsc0 = tsc_now();
        return TIMING_TSC;
    }
#endif
    return TIMING_MONOTONIC;
}

double timing_ns_per_tick(void)
{
    /* The TSC against CLOCK_MONOTONIC since memrec started: the longer the
     * span, the smaller the error of the two reads (some 50 ns over a span
     * of at least 2 ms: at most 2.5e-5, less than a ns on any allocator
     * call below 40 us). */
    uint64_t m = mono_ns();
    while (m - mono0 < 2000000) {
        struct timespec t = {0, (long)(2000000 - (m - mono0))};
        nanosleep(&t, NULL);
        m = mono_ns();
    }
    uint64_t t = tsc_now();
    return t > tsc0 ? (double)(m - mono0) / (double)(t - tsc0) : 1.0;
}

int timing_proc_cpu(pid_t pid, uint64_t *user_ns, uint64_t *sys_ns)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f) {
        return -1;
    }
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    /* The command name may hold spaces and parentheses: fields start
     * after the last ')'. utime and stime are fields 14 and 15. */
    char *p = strrchr(buf, ')');
    unsigned long long ut, st;
    if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2) {
        return -1;
    }
    long hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0) {
        return -1;
    }
    *user_ns = ut * (1000000000ull / (unsigned long long)hz);
    *sys_ns = st * (1000000000ull / (unsigned long long)hz);
    return 0;
}
