// SPDX-License-Identifier: MIT
/* What the files of the memrec program share: the options, the launched
 * child, the session of recordings, the signal flags, and the functions
 * one file calls in another, grouped by defining file. Only
 * recorder/memrec/ includes it. */
#ifndef MEMREC_INTERNAL_H
#define MEMREC_INTERNAL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "recording.h"

#define PRELOAD_NAME "libmemrec_preload.so"

struct options {
    const char *output;
    int quiet;
    int level;
    const char *max_depth; /* passed to the recorder as MEMREC_MAX_DEPTH */
    char sample_rate[32]; /* passed as MEMREC_SAMPLE_RATE; empty: record all */
    int follow_fork; /* record fork children, each into its own file */
    pid_t attach_pid; /* --pid: attach to this running process instead */
    int time; /* --time: 0, or the clock the recorder reads (enum timing_clock), passed as MEMREC_TIME */
    /* --max-wait: the longest a thread of the program waits for room in
     * the pipe (ms, passed as MEMREC_MAX_WAIT_MS), -1 no bound; after
     * parse_args() the default is set: 100 ms with --pid, no bound when
     * memrec starts the program. */
    long max_wait_ms;
    uint64_t duration_ms; /* --duration: stop recording after this long (0: until the end or Ctrl+C) */
    int no_reachability; /* --no-reachability: no scan of the live blocks at the end (MEMREC_REACHABILITY=0) */
    int reachability; /* --reachability (with --pid): scan the live blocks at the detach */
    char **argv;
};

struct child {
    pid_t pid;
    int go_fd; /* parent writes one byte: exec now */
    int err_fd; /* child writes errno if exec fails */
};

struct session {
    struct options *o;
    struct child child;
    int lfd;
    struct recording **recs;
    size_t nrecs, recs_cap;
    struct recording *main;
    int status; /* waitpid status once reaped */
    uint64_t max_rss; /* the kernel's peak resident set of the program, once reaped */
    int reaped;
    int attached; /* --pid: stop means detach, at once */
    const char *name; /* the program's name, for messages */
    uint64_t cpu_user_ns, cpu_sys_ns; /* the program's CPU time (wait4), once reaped */
    uint64_t cpu_at_attach[2]; /* --pid: its user and system CPU time when memrec attached */
    int cpu_known; /* --pid: cpu_at_attach could be read */
    int duration_over; /* --duration passed: the recording stopped, the program runs on */
};

/* ---- loop.c: signal flags, set by its handlers ---- */

extern volatile sig_atomic_t got_stop; /* SIGINT/SIGTERM/SIGHUP count */
extern volatile sig_atomic_t last_stop; /* the latest of them */
extern volatile sig_atomic_t program_pid; /* its own signals to us are not sent back */

/* ---- cmdline.c ---- */

void parse_args(int argc, char **argv, struct options *o);

/* ---- progcheck.c ---- */

/** Find PROGRAM the way execvp will, so errors are told before anything
 * starts. Returns a malloc'd path. */
char *find_program(const char *name);
/** Refuse what the preload cannot reach, instead of recording nothing. */
void check_program(const char *path, const char *name);
char *find_preload(void);

/* ---- timing.c ---- */

/* The clocks of MEMREC_TIME (the recorder's callclock.h has the same). */
enum timing_clock {
    TIMING_TSC = 1,
    TIMING_MONOTONIC = 2,
};

/** memrec --time: the clock the recorder will read, TIMING_TSC where the
 * TSC is constant, non-stop and the kernel's clocksource, else
 * TIMING_MONOTONIC; with the TSC, the calibration starts now. */
int timing_choose_clock(void);
/** ns per TSC tick, measured against CLOCK_MONOTONIC since
 * timing_choose_clock() (which it waits to be at least 2 ms ago). */
double timing_ns_per_tick(void);
/** The user and system CPU time of `pid` so far (/proc/PID/stat, in
 * steps of the clock tick, 10 ms). Returns 0, or -1 when it cannot be read. */
int timing_proc_cpu(pid_t pid, uint64_t *user_ns, uint64_t *sys_ns);

/* ---- launch.c ---- */

uint64_t mono_ms(void);
void start_child(struct child *c, const struct options *o, char *path, const char *sock, const char *preload);
char *default_name(const char *prog, pid_t pid);
/** -o x.zst: a followed child's file is x.<pid>.zst. */
char *child_name(const struct options *o, pid_t pid);
/** Why `name` could not be created (errno `e`), as the end of an error line. */
const char *create_error(const char *name, int e);

/* ---- loop.c ---- */

/** A new recording, listed in the session; NULL with errno as recording_open(). */
struct recording *session_add(struct session *s, pid_t pid, const char *outname, uint32_t flags);
/** How a recording ends: the kernel's peak RSS goes with the process memrec
 * started and waited for. */
void finish(struct session *s, struct recording *r, unsigned how, int value);
/** A recorder asks for its pipe: the process memrec started (first image
 * or after exec), one that lost its descriptor, or a fork child. */
void serve(struct session *s);
void on_chld(int sig);
/** The socket recorders ask for their pipes on, and the signals that end a
 * recording: what every session starts with. Dies on failure. */
int open_hub(char *sock, size_t cap);
void reap(struct session *s, int flags);
void main_end(struct session *s, unsigned *how, int *value);
/** Read the pipes and serve the socket until every recorded process ended
 * or the user stopped us, or --duration passed: then, attached, run()
 * returns for the caller to detach; launched, every recording is finished
 * as stopped while the program ran (END "detached") and run() returns. */
void run(struct session *s);
/** After --duration stopped the recordings of a program memrec started:
 * wait for it to end, passing signals on as run() does, answering its
 * recorders' requests for a pipe with none (they disarm). Returns when it
 * was reaped, or at a second stop signal (then it runs on). */
void wait_unrecorded(struct session *s);

/* ---- summary.c ---- */

void print_summary(const struct session *s, const struct recording *r);
/** The summary's last line: the command that shows the recording. */
void print_next(const struct recording *r);

/* ---- attachpid.c ---- */

int attach_main(struct options *o);

#endif
