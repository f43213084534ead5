// SPDX-License-Identifier: MIT
/* The event loop: the session of recordings, the socket that hands out
 * pipes, signals to memrec passed on to the program, reaping, and the
 * finish of each recording. Part of the memrec program
 * (memrec_internal.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "escape.h"
#include "memwire.h"
#include "hub.h"
#include "util.h"
#include "memrec_internal.h"

#define FLUSH_EVERY_MS 100
#define RSS_EVERY_MS 10

volatile sig_atomic_t got_stop; /* SIGINT/SIGTERM/SIGHUP count */
volatile sig_atomic_t last_stop; /* the latest of them */
/* Per signal number, how many were sent to memrec by another process
 * (kill(1), a service manager): those are passed on to the program. */
static volatile sig_atomic_t sent_to_us[32];
volatile sig_atomic_t program_pid; /* its own signals to us are not sent back */
static volatile sig_atomic_t got_chld;

struct recording *session_add(struct session *s, pid_t pid, const char *outname, uint32_t flags)
{
    if (s->o->time) {
        flags |= MEMFMT_HF_TIMED;
    }
    struct recording *r = recording_open(pid, outname, flags, s->o->level,
                                         s->o->sample_rate[0] ? strtoull(s->o->sample_rate, NULL, 10) : 0);
    if (!r) {
        return NULL;
    }
    r->ns_per_tick = s->o->time == TIMING_TSC ? timing_ns_per_tick : NULL;
    if (s->nrecs == s->recs_cap) {
        xgrow((void **)&s->recs, &s->recs_cap, s->nrecs + 1, sizeof *s->recs);
    }
    s->recs[s->nrecs++] = r;
    return r;
}

/* Whether the process of `r` has ended for certain: only then may its
 * buffer area be read (its threads write it while it runs). A zombie
 * memrec cannot see end through a pidfd counts as alive. */
static int process_gone(const struct session *s, const struct recording *r)
{
    if (r->is_main && s->reaped) {
        return 1;
    }
    if (r->pidfd >= 0) {
        struct pollfd p = {r->pidfd, POLLIN, 0};
        return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
    }
    if (kill(r->pid, 0) != 0) {
        return errno == ESRCH;
    }
    /* Not our child, and no pidfd: a zombie waiting for its parent. */
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)r->pid);
    FILE *f = fopen(path, "re");
    if (!f) {
        return 0;
    }
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *close_paren = strrchr(buf, ')');
    return close_paren && (close_paren[1] == ' ') && (close_paren[2] == 'Z' || close_paren[2] == 'X');
}

void finish(struct session *s, struct recording *r, unsigned how, int value)
{
    const struct merge_stats *ms = merge_stats(r->merge);
    if (r->is_main && s->reaped) {
        merge_set_cpu(r->merge, s->cpu_user_ns, s->cpu_sys_ns);
    } else if (ms->cpu_said && !s->attached) {
        /* Not our child (a followed descendant): what its recorder read as
         * it exited, since the process started, as a recording of it
         * starts at its first hook. */
        merge_set_cpu(r->merge, ms->cpu_user_ns, ms->cpu_sys_ns);
    } else if (ms->cpu_said && s->cpu_known && ms->cpu_user_ns >= s->cpu_at_attach[0] &&
               ms->cpu_sys_ns >= s->cpu_at_attach[1]) {
        /* Attached, and it exited meanwhile: over the recording. */
        merge_set_cpu(r->merge, ms->cpu_user_ns - s->cpu_at_attach[0], ms->cpu_sys_ns - s->cpu_at_attach[1]);
    }
    r->gone = process_gone(s, r);
    recording_finish(r, how, value, r->is_main && s->reaped ? s->max_rss : 0);
}

static struct recording *find_live(struct session *s, pid_t pid)
{
    for (size_t i = 0; i < s->nrecs; i++) {
        if (s->recs[i]->pid == pid && !s->recs[i]->finished) {
            return s->recs[i];
        }
    }
    return NULL;
}

void serve(struct session *s)
{
    struct hub_request req;
    int got;
    while ((got = hub_accept(s->lfd, &req)) != 0) {
        if (got < 0) {
            continue;
        }
        struct recording *r = req.uid == getuid() ? find_live(s, req.pid) : NULL;
        if (req.kind == MEMFMT_CONN_REACH) {
            /* The program waits for the answer, at its very end. */
            if (r && !s->o->no_reachability) {
                hub_reply_working(&req);
                struct recording_reach_ask a = {req.own, req.nown, req.service_tid, PRELOAD_NAME, s->o->quiet};
                recording_reach(r, &a);
            }
            hub_reply_status(&req, r ? 0 : 1);
            continue;
        }
        if (req.kind == MEMFMT_CONN_AREA) {
            /* Only from a process that has its pipe already: its area
             * replaces an earlier image's. */
            int taken = r && recording_set_area(r, req.passed) == 0;
            if (!taken) {
                close(req.passed);
            }
            hub_reply(&req, taken ? 0 : -1);
            continue;
        }
        if (!r && req.uid == getuid() && req.kind == MEMFMT_CONN_START && s->o->follow_fork && !got_stop) {
            char *name = child_name(s->o, req.pid);
            r = session_add(s, req.pid, name, 0);
            if (!r) {
                warning("cannot create '%s' for process %d: %s; it is not recorded", name, (int)req.pid,
                        create_error(name, errno));
            } else {
                r->pidfd = (int)syscall(SYS_pidfd_open, req.pid, 0);
            }
            free(name);
        }
        hub_reply(&req, r ? r->wfd : -1);
    }
}

/* ---- main loop ---- */

static void on_stop(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    got_stop++;
    last_stop = sig;
    /* si_code <= 0: sent by a process (kill, sigqueue, tgkill). A terminal's
     * Ctrl+C (SI_KERNEL) reaches the whole foreground process group, the
     * program too: passing it on would deliver it twice. */
    if (si && si->si_code <= 0 && si->si_pid != program_pid && sig < (int)(sizeof sent_to_us / sizeof *sent_to_us)) {
        sent_to_us[sig]++;
    }
}

void on_chld(int sig)
{
    (void)sig;
    got_chld = 1;
}

/* SIGINT, SIGTERM, SIGHUP end the recording; a closed pipe is an error,
 * not a death. */
static void catch_stop_signals(void)
{
    struct sigaction sa = {0};
    sa.sa_sigaction = on_stop;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

int open_hub(char *sock, size_t cap)
{
    int fd = hub_listen(sock, cap);
    if (fd < 0) {
        die("cannot create memrec's socket: %s", strerror(errno));
    }
    catch_stop_signals();
    return fd;
}

void reap(struct session *s, int flags)
{
    if (s->reaped) {
        return;
    }
    int st;
    struct rusage ru;
    pid_t r = wait4(s->child.pid, &st, flags, &ru);
    if (r == s->child.pid) {
        s->status = st;
        s->reaped = 1;
        /* The kernel's own peak, exact where 10 ms samples can miss it. */
        s->max_rss = (uint64_t)ru.ru_maxrss * 1024u;
        s->cpu_user_ns = (uint64_t)ru.ru_utime.tv_sec * 1000000000u + (uint64_t)ru.ru_utime.tv_usec * 1000u;
        s->cpu_sys_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000u + (uint64_t)ru.ru_stime.tv_usec * 1000u;
    }
}

void main_end(struct session *s, unsigned *how, int *value)
{
    *how = MEMFMT_END_UNKNOWN;
    *value = 0;
    if (s->reaped && WIFEXITED(s->status)) {
        *how = MEMFMT_END_EXITED;
        *value = WEXITSTATUS(s->status);
    } else if (s->reaped && WIFSIGNALED(s->status)) {
        *how = MEMFMT_END_SIGNALED;
        *value = WTERMSIG(s->status);
    } else if (got_stop) {
        *how = MEMFMT_END_DETACHED;
    }
}

static int all_finished(const struct session *s)
{
    for (size_t i = 0; i < s->nrecs; i++) {
        if (!s->recs[i]->finished) {
            return 0;
        }
    }
    return 1;
}

/* A program memrec started: SIGINT, SIGTERM and SIGHUP sent to memrec
 * alone go on to the program, as time(1) does, and the recording goes on
 * until the program ends; a second one stops the recording at once. */
static int passed[sizeof sent_to_us / sizeof *sent_to_us]; /* of sent_to_us, passed on so far */

static void pass_on_signals(struct session *s)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        int sig = sigs[i];
        while (passed[sig] < sent_to_us[sig]) {
            passed[sig]++;
            if (!s->reaped) {
                kill(s->child.pid, sig);
            }
        }
    }
    static int said;
    if (got_stop == 1 && !said && !s->reaped) {
        said = 1;
        if (!s->o->quiet) {
            fprintf(stderr, "memrec: SIG%s %s process %d; recording until it ends (a second signal stops it now)\n",
                    sigabbrev_np(last_stop), passed[last_stop] ? "passed on to" : "also went to", (int)s->child.pid);
        }
    }
}

void run(struct session *s)
{
    uint64_t last_flush = mono_ms(), last_rss = 0, stop_at = 0;
    struct pollfd *pfd = NULL;
    size_t pfd_cap = 0;
    uint64_t start = mono_ms();
    for (;;) {
        uint64_t now = mono_ms();
        if (got_stop && !stop_at) {
            stop_at = now;
        }
        if (got_stop && !s->attached) {
            pass_on_signals(s);
        }
        if (s->o->duration_ms && !s->duration_over && now - start >= s->o->duration_ms) {
            s->duration_over = 1;
            if (s->attached) {
                break; /* the caller detaches */
            }
            /* The program runs on: its recorders find the pipes closed
             * and disarm (pipe.c: EPIPE, SIGPIPE kept from the program). */
            for (size_t i = 0; i < s->nrecs; i++) {
                if (!s->recs[i]->finished) {
                    finish(s, s->recs[i], MEMFMT_END_DETACHED, 0);
                }
            }
            break;
        }
        if (got_chld) {
            got_chld = 0;
            reap(s, WNOHANG);
        }
        if (s->reaped && !s->main->finished) {
            unsigned how;
            int value;
            main_end(s, &how, &value);
            finish(s, s->main, how, value);
        }
        if (all_finished(s) || (stop_at && (s->attached || got_stop > 1))) {
            break;
        }
        if (now - last_rss >= RSS_EVERY_MS) {
            last_rss = now;
            for (size_t i = 0; i < s->nrecs; i++) {
                recording_sample_rss(s->recs[i]);
            }
        }
        if (now - last_flush >= FLUSH_EVERY_MS) {
            last_flush = now;
            for (size_t i = 0; i < s->nrecs; i++) {
                recording_flush(s->recs[i]);
            }
        }
        size_t need = 1 + 2 * s->nrecs;
        if (need > pfd_cap) {
            xgrow((void **)&pfd, &pfd_cap, need, sizeof *pfd);
        }
        size_t n = 0;
        pfd[n++] = (struct pollfd){s->lfd, POLLIN, 0};
        for (size_t i = 0; i < s->nrecs; i++) {
            struct recording *r = s->recs[i];
            if (!r->finished) {
                pfd[n++] = (struct pollfd){r->rfd, POLLIN, 0};
                if (r->pidfd >= 0) {
                    pfd[n++] = (struct pollfd){r->pidfd, POLLIN, 0};
                }
            }
        }
        int pr = poll(pfd, (nfds_t)n, RSS_EVERY_MS);
        if (pr < 0 && errno != EINTR) {
            break;
        }
        if (pr <= 0) {
            continue;
        }
        if (pfd[0].revents) {
            serve(s);
        }
        size_t k = 1;
        for (size_t i = 0; i < s->nrecs && k < n; i++) {
            struct recording *r = s->recs[i];
            if (r->finished || pfd[k].fd != r->rfd) {
                continue;
            }
            if (pfd[k++].revents) {
                recording_pump(r);
            }
            if (r->pidfd >= 0 && k < n && pfd[k].fd == r->pidfd) {
                if (pfd[k++].revents) {
                    /* Gone: what it wrote is all in the pipe. */
                    finish(s, r, MEMFMT_END_UNKNOWN, 0);
                }
            }
        }
    }
    free(pfd);
}

void wait_unrecorded(struct session *s)
{
    while (!s->reaped && got_stop < 2) {
        if (got_stop) {
            pass_on_signals(s);
        }
        struct pollfd p = {s->lfd, POLLIN, 0};
        if (poll(&p, 1, RSS_EVERY_MS) > 0) {
            serve(s); /* every recording is finished: no pipe to hand out */
        }
        reap(s, WNOHANG);
    }
}
