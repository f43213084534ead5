// SPDX-License-Identifier: MIT
/* --pid: attaching to a running process (inject the recorder, start it,
 * record until Ctrl+C or its exit) and detaching so that it runs on as
 * before. Part of the memrec program
 * (memrec_internal.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>

#include "escape.h"
#include "inject.h"
#include "util.h"
#include "memrec_internal.h"

/* ---- attaching to a running process ---- */

#define ATTACH_TIMEOUT_MS 30000
/* How long the recorder may take to undo the attach and close its pipe
 * (it acts within one flush period, 10 ms, plus the last events). */
#define DETACH_TIMEOUT_MS 3000

/* The file of the recording under way: a failed attach removes it. */
static const char *attach_outname;

static void attach_fail(pid_t pid, const char *what)
{
    if (attach_outname) {
        unlink(attach_outname);
    }
    if (got_stop) {
        die_code(130, "attach to process %d interrupted: nothing was recorded", (int)pid);
    }
    die("cannot attach to process %d: %s", (int)pid, what);
}

/* Copy strings into the stopped thread's scratch area and build a NULL-
 * terminated array of pointers to them there. Returns its address or 0. */
static uint64_t put_env(struct inject *in, char **vars, int n)
{
    uint64_t ptrs[16];
    for (int i = 0; i < n && i < 15; i++) {
        ptrs[i] = inject_put(in, vars[i], strlen(vars[i]) + 1);
        if (!ptrs[i]) {
            return 0;
        }
    }
    ptrs[n] = 0;
    return inject_put(in, ptrs, (size_t)(n + 1) * sizeof *ptrs);
}

/* While a call into the target runs: its threads keep writing (and block
 * when the pipe is full, holding locks the call may need), and the call
 * may ask for its pipe. */
static void serve_idle(void *ctx)
{
    struct session *s = ctx;
    serve(s);
    if (s->main && !s->main->finished) {
        recording_pump(s->main);
    }
}

/* Where the recorder's entry points are in the target, once loaded. */
struct attach_state {
    uint64_t handle;
    uint64_t detach_request; /* its memrec_detach_request: set to 1 to detach */
    struct inject_libc lc;
    uint64_t stopped_ns;
    int recorder_busy; /* the recorder's code is among the busy ranges */
};

static void remote_dlerror(struct inject *in, const struct attach_state *a, char *buf, size_t cap)
{
    uint64_t msg = 0;
    char e2[256];
    snprintf(buf, cap, "dlopen failed");
    if (!a->lc.dlerror || inject_call(in, a->lc.dlerror, 0, 0, 0, &msg, 2000, e2, sizeof e2) != 0 || !msg) {
        return;
    }
    char text[512];
    struct iovec local = {text, sizeof text - 1};
    struct iovec remote = {(void *)(uintptr_t)msg, sizeof text - 1};
    ssize_t n = process_vm_readv(in->pid, &local, 1, &remote, 1, 0);
    if (n > 0) {
        text[n] = 0;
        snprintf(buf, cap, "the recorder could not be loaded: %.200s", text);
    }
}

/* One try: stop a thread, load the recorder and call memrec_attach().
 * Returns memrec_attach()'s result; dies with one line on error. */
static int64_t attach_once(struct session *s, pid_t pid, const char *preload, const char *sock, struct attach_state *a,
                           int timeout_ms)
{
    char err[512];
    struct inject in = {.cancel = &got_stop};
    int rb = inject_begin(&in, pid, &a->lc, timeout_ms, err, sizeof err);
    if (rb != 0) {
        attach_fail(pid, err);
    }
    uint64_t path = inject_put(&in, preload, strlen(preload) + 1);
    uint64_t handle = 0;
    if (!path || inject_call(&in, a->lc.dlopen, path, RTLD_NOW, 0, &handle, ATTACH_TIMEOUT_MS, err, sizeof err) != 0) {
        inject_end(&in);
        attach_fail(pid, path ? err : "cannot write into its memory");
    }
    if (!handle) {
        remote_dlerror(&in, a, err, sizeof err);
        inject_end(&in);
        attach_fail(pid, err);
    }
    uint64_t name = inject_put(&in, "memrec_attach", sizeof "memrec_attach");
    uint64_t rname = inject_put(&in, "memrec_detach_request", sizeof "memrec_detach_request");
    uint64_t resname = inject_put(&in, "memrec_attach_result", sizeof "memrec_attach_result");
    uint64_t fn = 0;
    if (!name || !rname || !resname ||
        inject_call(&in, a->lc.dlsym, handle, name, 0, &fn, 2000, err, sizeof err) != 0 || !fn ||
        inject_call(&in, a->lc.dlsym, handle, rname, 0, &a->detach_request, 2000, err, sizeof err) != 0 ||
        !a->detach_request ||
        inject_call(&in, a->lc.dlsym, handle, resname, 0, &in.result_at, 2000, err, sizeof err) != 0 || !in.result_at) {
        inject_end(&in);
        attach_fail(pid, "the loaded recorder has no memrec_attach/memrec_detach_request (a different version?)");
    }
    char v_sock[200], v_target[64], v_depth[64], v_rate[64], v_time[64], v_wait[64];
    char *vars[6];
    int n = 0;
    snprintf(v_sock, sizeof v_sock, "MEMREC_SOCK=%s", sock);
    snprintf(v_target, sizeof v_target, "MEMREC_TARGET=%d", (int)pid);
    vars[n++] = v_sock;
    vars[n++] = v_target;
    if (s->o->max_depth) {
        snprintf(v_depth, sizeof v_depth, "MEMREC_MAX_DEPTH=%s", s->o->max_depth);
        vars[n++] = v_depth;
    }
    if (s->o->sample_rate[0]) {
        snprintf(v_rate, sizeof v_rate, "MEMREC_SAMPLE_RATE=%s", s->o->sample_rate);
        vars[n++] = v_rate;
    }
    if (s->o->time) {
        snprintf(v_time, sizeof v_time, "MEMREC_TIME=%d", s->o->time);
        vars[n++] = v_time;
    }
    if (s->o->max_wait_ms >= 0) {
        snprintf(v_wait, sizeof v_wait, "MEMREC_MAX_WAIT_MS=%ld", s->o->max_wait_ms);
        vars[n++] = v_wait;
    }
    uint64_t env = put_env(&in, vars, n);
    uint64_t rc = 1;
    if (!env) {
        inject_end(&in);
        attach_fail(pid, "cannot write into its memory");
    }
    /* memrec_attach() asks for its pipe on our socket while we wait for
     * it to return: answer from the wait. */
    in.idle = serve_idle;
    in.idle_ctx = s;
    if (inject_call(&in, fn, env, 0, 0, &rc, ATTACH_TIMEOUT_MS, err, sizeof err) != 0) {
        inject_end(&in);
        attach_fail(pid, err);
    }
    inject_end(&in);
    a->handle = handle;
    a->stopped_ns = in.stopped_ns;
    return (int32_t)(uint32_t)rc; /* an int in eax: the upper half of rax is not part of it */
}

/* Load the recorder into `pid` and start it. Dies with one line on error
 * (or when Ctrl+C comes before the process was changed). */
static void attach_start(struct session *s, pid_t pid, const char *preload, const char *sock, struct attach_state *a)
{
    /* Attached before: a thread may still be returning through the
     * recorder's code, which the start takes locks of. */
    inject_add_busy_object(pid, &a->lc, PRELOAD_NAME);
    uint64_t end = mono_ms() + ATTACH_TIMEOUT_MS;
    for (;;) {
        int left = (int)(end > mono_ms() ? end - mono_ms() : 1);
        int64_t rc = attach_once(s, pid, preload, sock, a, left);
        if (rc == 0) {
            return;
        }
        if (rc != -3 || mono_ms() > end || got_stop) {
            attach_fail(pid, rc == -2   ? "memrec is already recording it"
                             : rc == -3 ? "its thread stayed inside the recorder; try again"
                                        : "the recorder could not start in it");
        }
        /* Stopped inside a hook of an earlier attach: let it run on. */
        struct timespec t = {0, 2 * 1000 * 1000};
        nanosleep(&t, NULL);
    }
}

/* Stop recording `pid` and leave it running. No thread of it is stopped:
 * memrec sets the recorder's memrec_detach_request, and the recorder's
 * service thread puts the GOT slots back, sends the last events, closes
 * the pipe and ends; memrec reads the pipe until its end of file. A
 * thread of the program running the detach could be stopped inside its
 * own buffer and wait for itself forever. Returns 0, or -1 with a reason. */
static int attach_stop(struct session *s, pid_t pid, struct attach_state *a, char *err, size_t cap)
{
    /* 2: scan the live blocks first (--reachability, attach.c). */
    int one = s->o->reachability ? 2 : 1;
    struct iovec local = {&one, sizeof one};
    struct iovec remote = {(void *)(uintptr_t)a->detach_request, sizeof one};
    if (process_vm_writev(pid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof one) {
        snprintf(err, cap, "cannot write into its memory: %s", strerror(errno));
        return -1;
    }
    struct recording *r = s->main;
    recording_close_write(r);
    /* The scan (--reachability) runs inside serve(), bounded by its own limit. */
    uint64_t end = mono_ms() + DETACH_TIMEOUT_MS + (s->o->reachability ? RECORDING_REACH_MAX_NS / 1000000u + 1000 : 0);
    int stops = got_stop;
    while (!r->eof) {
        serve(s);
        recording_slurp(r);
        if (r->eof) {
            break;
        }
        if (kill(pid, 0) != 0) {
            return 0; /* ended meanwhile: the caller says so */
        }
        if (got_stop > stops) {
            snprintf(err, cap, "interrupted while its recorder finished");
            return -1;
        }
        if (mono_ms() > end) {
            snprintf(err, cap, "its recorder did not finish within %d ms", DETACH_TIMEOUT_MS);
            return -1;
        }
        struct pollfd p[2] = {{r->rfd, POLLIN, 0}, {s->lfd, POLLIN, 0}};
        poll(p, 2, 10);
    }
    return 0;
}

int attach_main(struct options *o)
{
    pid_t pid = o->attach_pid;
    struct session s = {.o = o, .lfd = -1, .attached = 1};
    char why[256];
    if (inject_obstacle(pid, why, sizeof why)) {
        attach_fail(pid, why);
    }
    struct attach_state a;
    memset(&a, 0, sizeof a);
    if (inject_find_libc(pid, &a.lc, why, sizeof why) != 0) {
        attach_fail(pid, why);
    }
    char *preload = find_preload();
    char sock[128];
    s.lfd = open_hub(sock, sizeof sock);

    char comm[64] = "process", path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    FILE *cf = fopen(path, "re");
    if (cf) {
        if (fgets(comm, sizeof comm, cf)) {
            comm[strcspn(comm, "\n/")] = 0;
        }
        fclose(cf);
    }
    char *outname = o->output ? xstrdup(o->output) : default_name(comm, pid);
    s.main = session_add(&s, pid, outname, MEMFMT_HF_ATTACHED);
    if (!s.main) {
        die("cannot create '%s': %s", outname, create_error(outname, errno));
    }
    attach_outname = s.main->outname;
    free(outname);
    s.main->is_main = 1;
    s.main->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    s.name = comm;

    s.cpu_known = timing_proc_cpu(pid, &s.cpu_at_attach[0], &s.cpu_at_attach[1]) == 0;
    attach_start(&s, pid, preload, sock, &a);
    attach_outname = NULL;
    if (!o->quiet) {
        /* The process names itself (prctl, its argv[0]): escaped like every name. */
        char *name = esc_text(comm);
        fprintf(stderr, "memrec: attached to process %d (%s), which was stopped for %.1f ms; Ctrl+C detaches\n",
                (int)pid, name, (double)a.stopped_ns / 1e6);
        free(name);
    }
    run(&s);
    unsigned how = MEMFMT_END_DETACHED;
    if (!s.main->finished) {
        char err[256];
        if (attach_stop(&s, pid, &a, err, sizeof err) != 0 && kill(pid, 0) == 0) {
            warning("cannot detach cleanly from process %d: %s; its recorder disarms itself when it finds memrec gone",
                    (int)pid, err);
        }
        if (kill(pid, 0) != 0) {
            how = MEMFMT_END_UNKNOWN;
        }
        /* Its CPU time over the recording; unknown once it is gone. */
        uint64_t user, sys;
        if (s.cpu_known && how == MEMFMT_END_DETACHED && timing_proc_cpu(pid, &user, &sys) == 0 &&
            user >= s.cpu_at_attach[0] && sys >= s.cpu_at_attach[1]) {
            merge_set_cpu(s.main->merge, user - s.cpu_at_attach[0], sys - s.cpu_at_attach[1]);
        }
        finish(&s, s.main, how, 0);
    }
    close(s.lfd);
    int failed = s.main->failed;
    if (!o->quiet) {
        print_summary(&s, s.main);
        print_next(s.main);
    }
    recording_free(s.main);
    free(s.recs);
    free(preload);
    return failed ? 1 : 0;
}
