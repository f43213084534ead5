// SPDX-License-Identifier: MIT
/* memrec: runs a program with the recorder preloaded, reads the recorder's
 * pipe, merges and compresses the events into the output file, and prints a
 * short summary. The program's stdin/stdout/stderr, cwd, arguments and exit
 * status are left as they are. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "accounting.h"
#include "memfmt.h"
#include "memfmt_internal.h"
#include "merge.h"
#include "report.h"
#include "util.h"

#define PRELOAD_NAME "libmemrec_preload.so"
#define READ_CHUNK (1u << 20)
#define FLUSH_EVERY_MS 100
#define RSS_EVERY_MS 10
#define STOP_GRACE_MS 2000

static volatile sig_atomic_t got_stop; /* SIGINT/SIGTERM/SIGHUP count */
static volatile sig_atomic_t got_chld;

struct options {
    const char *output;
    int quiet;
    int level;
    const char *max_depth; /* passed to the recorder as MEMREC_MAX_DEPTH */
    char sample_rate[32]; /* passed as MEMREC_SAMPLE_RATE; empty: record all */
    char **argv;
};

static void usage(FILE *f)
{
    fprintf(f, "usage: memrec [-o FILE] [-q] [-s BYTES] [-d DEPTH] [-l LEVEL] [--] PROGRAM [ARGS...]\n"
               "\n"
               "Runs PROGRAM and records every heap allocation with its call stack.\n"
               "\n"
               "  -o, --output FILE   write the recording to FILE (default: memrec.<program>.<pid>.zst)\n"
               "  -q, --quiet         print nothing at the end\n"
               "  -l, --level N       zstd compression level (1-19, default 3)\n"
               "  -s, --sample-rate B record the stacks of a sample of the allocations, one per B\n"
               "                      bytes allocated on average (suffixes K, M, G); every call\n"
               "                      and byte is still counted, the rest is estimated\n"
               "  -d, --max-depth N   frames kept per stack (8-1024, default 256); deeper stacks\n"
               "                      keep their innermost and outermost frames and are marked\n"
               "                      truncated\n"
               "  -h, --help          show this help\n"
               "  -V, --version       show the version\n"
               "\n"
               "Then: memprint FILE\n");
}

static void parse_args(int argc, char **argv, struct options *o)
{
    static const struct option longs[] = {
        {"output", required_argument, NULL, 'o'},      {"quiet", no_argument, NULL, 'q'},
        {"level", required_argument, NULL, 'l'},       {"max-depth", required_argument, NULL, 'd'},
        {"sample-rate", required_argument, NULL, 's'}, {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},           {NULL, 0, NULL, 0},
    };
    o->level = 3;
    opterr = 0;
    int c;
    /* '+': stop at the program name, its options are its own. */
    while ((c = getopt_long(argc, argv, "+o:ql:d:s:hV", longs, NULL)) != -1) {
        switch (c) {
        case 'o': o->output = optarg; break;
        case 'q': o->quiet = 1; break;
        case 'l': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 19) {
                die_code(2, "invalid compression level '%s' (expected 1-19)", optarg);
            }
            o->level = (int)v;
            break;
        }
        case 'd': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 8 || v > 1024) {
                die_code(2, "invalid stack depth '%s' (expected 8-1024)", optarg);
            }
            o->max_depth = optarg;
            break;
        }
        case 's': {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            unsigned long long mult = 1;
            if (*end == 'K' || *end == 'k') {
                mult = 1024;
                end++;
            } else if (*end == 'M' || *end == 'm') {
                mult = 1024 * 1024;
                end++;
            } else if (*end == 'G' || *end == 'g') {
                mult = 1024ull * 1024 * 1024;
                end++;
            }
            if (*end || errno || optarg[0] == '-' || v == 0 || v > (1ull << 30) / mult) {
                die_code(2, "invalid sample rate '%s' (expected bytes from 1 to 1G, e.g. 512K)", optarg);
            }
            snprintf(o->sample_rate, sizeof o->sample_rate, "%llu", v * mult);
            break;
        }
        case 'h': usage(stdout); exit(0);
        case 'V': printf("memrec %s (format version %d)\n", MEMREC_VERSION, MEMFMT_VERSION); exit(0);
        case '?':
        default:
            if (optopt) {
                die_code(2, "unknown option '-%c' (see memrec --help)", optopt);
            }
            die_code(2, "unknown option '%s' (see memrec --help)", argv[optind - 1]);
        }
    }
    if (optind >= argc) {
        usage(stderr);
        exit(2);
    }
    o->argv = argv + optind;
}

/* ---- the program to run ---- */

/* Find PROGRAM the way execvp will, so errors are told before anything
 * starts. Returns a malloc'd path. */
static char *find_program(const char *name)
{
    if (strchr(name, '/')) {
        if (access(name, F_OK) != 0) {
            die_code(127, "cannot run '%s': %s", name, strerror(errno));
        }
        return xstrdup(name);
    }
    const char *path = getenv("PATH");
    if (!path || !*path) {
        path = "/usr/local/bin:/usr/bin:/bin";
    }
    char *dirs = xstrdup(path);
    char *save = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char *cand = xmalloc(strlen(d) + strlen(name) + 2);
        sprintf(cand, "%s/%s", *d ? d : ".", name);
        if (access(cand, X_OK) == 0) {
            free(dirs);
            return cand;
        }
        free(cand);
    }
    free(dirs);
    die_code(127, "cannot run '%s': command not found", name);
}

/* Refuse what the preload cannot reach, instead of recording nothing. */
static void check_program(const char *path, const char *name)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        die_code(127, "cannot run '%s': %s", name, strerror(errno));
    }
    if (S_ISDIR(st.st_mode)) {
        die_code(126, "cannot run '%s': is a directory", name);
    }
    if (access(path, X_OK) != 0) {
        die_code(126, "cannot run '%s': %s", name, strerror(errno));
    }
    if ((st.st_mode & (S_ISUID | S_ISGID)) && geteuid() != 0) {
        die("cannot record '%s': set-user-ID programs ignore LD_PRELOAD", name);
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return; /* executable but unreadable: let exec decide */
    }
    Elf64_Ehdr eh;
    if (read(fd, &eh, sizeof eh) == (ssize_t)sizeof eh && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
        eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr)) {
        int dynamic = 0;
        for (int i = 0; i < eh.e_phnum; i++) {
            Elf64_Phdr ph;
            if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (Elf64_Off)i * sizeof ph)) != (ssize_t)sizeof ph) {
                break;
            }
            if (ph.p_type == PT_INTERP) {
                dynamic = 1;
            }
        }
        if (!dynamic) {
            close(fd);
            die("cannot record '%s': it is statically linked, so no library can be preloaded into it", name);
        }
    }
    close(fd);
}

static char *find_preload(void)
{
    const char *env = getenv("MEMREC_PRELOAD_LIB");
    if (env && *env) {
        if (access(env, R_OK) != 0) {
            die("cannot use recorder library '%s': %s", env, strerror(errno));
        }
        return xstrdup(env);
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        die("cannot find memrec's own path: %s", strerror(errno));
    }
    self[n] = 0;
    char *slash = strrchr(self, '/');
    *slash = 0;
    /* Next to memrec in the build tree, or under lib/memrec when installed. */
    const char *rel[] = {"/" PRELOAD_NAME, "/../lib/memrec/" PRELOAD_NAME, "/../lib64/memrec/" PRELOAD_NAME};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char *cand = xmalloc(strlen(self) + strlen(rel[i]) + 1);
        sprintf(cand, "%s%s", self, rel[i]);
        if (access(cand, R_OK) == 0) {
            char *real_path = realpath(cand, NULL);
            free(cand);
            return real_path ? real_path : xstrdup(self);
        }
        free(cand);
    }
    die("cannot find the recorder library %s next to memrec or in ../lib/memrec", PRELOAD_NAME);
}

/* ---- time ---- */

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- child ---- */

struct child {
    pid_t pid;
    int go_fd; /* parent writes one byte: exec now */
    int err_fd; /* child writes errno if exec fails */
};

/* Put the pipe's write end on a high descriptor in the child, so that the
 * program's own descriptors keep the numbers they would have had. */
static int high_fd(void)
{
    struct rlimit rl;
    int top = 1024;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)top) {
        top = (int)rl.rlim_cur;
    }
    return top - 1;
}

static void start_child(struct child *c, const struct options *o, char *path, int wfd, ino_t ino, const char *preload)
{
    int go[2], err[2];
    if (pipe2(go, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
        die("cannot create a pipe: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid < 0) {
        die("cannot fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(go[1]);
        close(err[0]);
        char b;
        if (read(go[0], &b, 1) != 1) {
            _exit(127); /* memrec gave up before exec */
        }
        int fd = high_fd();
        if (fd != wfd && dup2(wfd, fd) < 0) {
            fd = wfd;
        }
        if (fd != wfd) {
            close(wfd);
        }
        /* dup2 clears close-on-exec: the descriptor must survive exec. */
        char val[96];
        snprintf(val, sizeof val, "%d:%llu:%d", fd, (unsigned long long)ino, (int)getpid());
        setenv("MEMREC_PIPE", val, 1);
        if (o->max_depth) {
            setenv("MEMREC_MAX_DEPTH", o->max_depth, 1);
        }
        if (o->sample_rate[0]) {
            setenv("MEMREC_SAMPLE_RATE", o->sample_rate, 1);
        }
        const char *old = getenv("LD_PRELOAD");
        char *pre;
        if (old && *old) {
            pre = xmalloc(strlen(preload) + strlen(old) + 2);
            sprintf(pre, "%s:%s", preload, old);
        } else {
            pre = xstrdup(preload);
        }
        setenv("LD_PRELOAD", pre, 1);
        signal(SIGPIPE, SIG_DFL);
        execv(path, o->argv);
        int e = errno;
        ssize_t k = write(err[1], &e, sizeof e);
        (void)k;
        _exit(127);
    }
    close(go[0]);
    close(err[1]);
    c->pid = pid;
    c->go_fd = go[1];
    c->err_fd = err[0];
}

/* ---- output file ---- */

static char *default_name(const char *prog, pid_t pid)
{
    const char *base = strrchr(prog, '/');
    base = base ? base + 1 : prog;
    char *name = xmalloc(strlen(base) + 64);
    sprintf(name, "memrec.%s.%d.zst", base, (int)pid);
    return name;
}

static int create_output(const char *name)
{
    return open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

/* ---- main loop ---- */

static void on_stop(int sig)
{
    (void)sig;
    got_stop++;
}

static void on_chld(int sig)
{
    (void)sig;
    got_chld = 1;
}

static uint64_t read_rss(int statm_fd)
{
    char buf[128];
    ssize_t n = pread(statm_fd, buf, sizeof buf - 1, 0);
    if (n <= 0) {
        return 0;
    }
    buf[n] = 0;
    unsigned long long size, resident;
    if (sscanf(buf, "%llu %llu", &size, &resident) != 2) {
        return 0;
    }
    return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

struct session {
    struct options *o;
    struct child child;
    int rfd;
    int statm_fd;
    char *outname;
    int out_fd;
    memfmt_writer *w;
    struct accounting *acct;
    struct merge *merge;
    uint64_t start_ms;
    int status; /* waitpid status once reaped */
    uint64_t max_rss; /* the kernel's peak resident set of the program, once reaped */
    int reaped;
    int bad_batches;
};

static void fail_write(struct session *s, int rc)
{
    int e = memfmt_writer_errno(s->w);
    error("cannot write '%s': %s", s->outname, e ? strerror(e) : memfmt_strerror(rc));
}

/* Split the bytes read into whole batches; keep a partial tail. */
static int feed(struct session *s, uint8_t *buf, size_t *len)
{
    size_t pos = 0;
    while (*len - pos >= 4) {
        uint32_t n;
        memcpy(&n, buf + pos, 4);
        if (n < 4 || n > MEMFMT_WIRE_BATCH) {
            /* The stream is out of step: nothing after this can be trusted. */
            s->bad_batches++;
            *len = 0;
            return MEMFMT_E_CORRUPT;
        }
        if (*len - pos - 4 < n) {
            break;
        }
        int rc = merge_batch(s->merge, buf + pos + 4, n);
        if (rc < 0 && rc != MEMFMT_E_CORRUPT && rc != MEMFMT_E_TRUNCATED) {
            return rc;
        }
        if (rc < 0) {
            s->bad_batches++;
        }
        pos += 4 + n;
    }
    memmove(buf, buf + pos, *len - pos);
    *len -= pos;
    return 0;
}

static void reap(struct session *s, int flags)
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
    }
}

/* Read until the recorder's pipe closes (all writers gone) or the user
 * stops us. Returns 0, or a writer error. */
static int pump(struct session *s)
{
    uint8_t *buf = xmalloc(READ_CHUNK + MEMFMT_WIRE_BATCH);
    size_t len = 0;
    uint64_t last_flush = mono_ms(), last_rss = 0, stop_at = 0, reaped_at = 0;
    uint64_t rss_seen = 0;
    int rc = 0;
    for (;;) {
        uint64_t now = mono_ms();
        if (got_stop && !stop_at) {
            stop_at = now;
        }
        if (got_chld) {
            got_chld = 0;
            reap(s, WNOHANG);
        }
        if (s->reaped && !reaped_at) {
            reaped_at = now;
        }
        /* A child of the program may still hold the pipe after the program
         * exited; do not wait for it forever. */
        if ((reaped_at && now - reaped_at > 1000) || (stop_at && (got_stop > 1 || now - stop_at > STOP_GRACE_MS))) {
            break;
        }
        if (now - last_rss >= RSS_EVERY_MS && s->statm_fd >= 0 && !s->reaped) {
            last_rss = now;
            uint64_t rss = read_rss(s->statm_fd);
            if (rss && rss != rss_seen) {
                rss_seen = rss;
                rc = merge_rss(s->merge, rss);
                if (rc < 0) {
                    break;
                }
            }
        }
        if (now - last_flush >= FLUSH_EVERY_MS) {
            last_flush = now;
            rc = memfmt_writer_flush(s->w);
            if (rc < 0) {
                break;
            }
        }
        struct pollfd pfd = {s->rfd, POLLIN, 0};
        int pr = poll(&pfd, 1, RSS_EVERY_MS);
        if (pr < 0 && errno != EINTR) {
            break;
        }
        if (pr <= 0) {
            continue;
        }
        ssize_t k = read(s->rfd, buf + len, READ_CHUNK);
        if (k < 0) {
            if (errno == EINTR || errno == EAGAIN) {
                continue;
            }
            break;
        }
        if (k == 0) {
            break; /* every writer is gone */
        }
        len += (size_t)k;
        rc = feed(s, buf, &len);
        if (rc < 0 && rc != MEMFMT_E_CORRUPT) {
            break;
        }
        rc = 0;
    }
    free(buf);
    return rc;
}

int main(int argc, char **argv)
{
    util_progname = "memrec";
    struct options o = {0};
    parse_args(argc, argv, &o);
    struct session s = {.o = &o, .statm_fd = -1};

    char *path = find_program(o.argv[0]);
    check_program(path, o.argv[0]);
    char *preload = find_preload();

    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        die("cannot create a pipe: %s", strerror(errno));
    }
    /* A big pipe lets the program run ahead of us for a while. */
    fcntl(p[0], F_SETPIPE_SZ, 1 << 20);
    struct stat pst;
    fstat(p[0], &pst);
    s.rfd = p[0];

    struct sigaction sa = {0};
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = on_chld;
    sa.sa_flags = SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    s.start_ms = mono_ms();
    struct timespec wall0;
    clock_gettime(CLOCK_REALTIME, &wall0);
    start_child(&s.child, &o, path, p[1], pst.st_ino, preload);
    close(p[1]);

    s.outname = o.output ? xstrdup(o.output) : default_name(o.argv[0], s.child.pid);
    s.out_fd = create_output(s.outname);
    if (s.out_fd < 0) {
        int e = errno;
        kill(s.child.pid, SIGKILL);
        waitpid(s.child.pid, NULL, 0);
        die("cannot create '%s': %s", s.outname, e == EEXIST ? "file exists (memrec never overwrites)" : strerror(e));
    }
    struct memfmt_header hdr = {MEMFMT_VERSION, (uint8_t)sizeof(void *), 1, 0};
    int rc;
    s.w = memfmt_writer_new(s.out_fd, &hdr, o.level, &rc);
    if (!s.w) {
        die("cannot start '%s': %s", s.outname, memfmt_strerror(rc));
    }
    s.acct = accounting_new(0);
    if (o.sample_rate[0]) {
        accounting_set_sample_rate(s.acct, strtoull(o.sample_rate, NULL, 10));
    }
    s.merge = merge_new(s.w, s.acct, s.start_ms);
    char statm[64];
    snprintf(statm, sizeof statm, "/proc/%d/statm", (int)s.child.pid);
    s.statm_fd = open(statm, O_RDONLY | O_CLOEXEC);

    /* Go: the file exists, the program may start. */
    if (write(s.child.go_fd, "g", 1) != 1) {
        die("cannot start '%s': %s", o.argv[0], strerror(errno));
    }
    close(s.child.go_fd);
    int exec_errno = 0;
    if (read(s.child.err_fd, &exec_errno, sizeof exec_errno) == (ssize_t)sizeof exec_errno) {
        waitpid(s.child.pid, NULL, 0);
        memfmt_writer_free(s.w);
        close(s.out_fd);
        unlink(s.outname);
        if (exec_errno == ENOENT && access(path, F_OK) == 0) {
            /* The file is there: what exec could not find is its interpreter. */
            die_code(127, "cannot run '%s': its interpreter (#! line or ELF loader) was not found", o.argv[0]);
        }
        die_code(exec_errno == ENOENT ? 127 : 126, "cannot run '%s': %s", o.argv[0], strerror(exec_errno));
    }
    close(s.child.err_fd);

    rc = pump(&s);
    int write_failed = rc < 0;
    if (write_failed) {
        fail_write(&s, rc);
    }
    if (!s.reaped && got_stop == 0) {
        reap(&s, 0);
    }
    /* Stopped by a signal: the program got it too and is likely exiting;
     * give it the rest of the grace period before calling it detached. */
    for (int i = 0; !s.reaped && i < STOP_GRACE_MS / 10; i++) {
        reap(&s, WNOHANG);
        if (!s.reaped) {
            struct timespec ten_ms = {0, 10 * 1000 * 1000};
            nanosleep(&ten_ms, NULL);
        }
    }
    uint64_t runtime = mono_ms() - s.start_ms;
    unsigned how = MEMFMT_END_UNKNOWN;
    int value = 0;
    if (s.reaped && WIFEXITED(s.status)) {
        how = MEMFMT_END_EXITED;
        value = WEXITSTATUS(s.status);
    } else if (s.reaped && WIFSIGNALED(s.status)) {
        how = MEMFMT_END_SIGNALED;
        value = WTERMSIG(s.status);
    } else if (got_stop) {
        how = MEMFMT_END_DETACHED;
    }
    if (!write_failed) {
        rc = merge_drain(s.merge);
        if (rc == 0 && s.max_rss) {
            rc = merge_rss(s.merge, s.max_rss);
        }
        if (rc == 0) {
            rc = merge_end(s.merge, how, value, runtime);
        }
        if (rc == 0) {
            rc = memfmt_writer_finish(s.w);
        }
        if (rc == 0 && fsync(s.out_fd) != 0 && errno != EINVAL) {
            rc = MEMFMT_E_IO;
        }
        if (rc < 0) {
            fail_write(&s, rc);
            write_failed = 1;
        }
    }
    if (close(s.out_fd) != 0 && !write_failed) {
        error("cannot write '%s': %s", s.outname, strerror(errno));
        write_failed = 1;
    }

    accounting_finish(s.acct);
    const struct acct_totals *t = accounting_totals(s.acct);
    const struct merge_stats *ms = merge_stats(s.merge);
    if (!o.quiet) {
        char leaked[32];
        report_bytes(leaked, sizeof leaked, t->live_bytes);
        fprintf(stderr, "memrec: recorded '%s' (pid %d) into %s\n", o.argv[0], (int)s.child.pid, s.outname);
        if (o.sample_rate[0]) {
            fprintf(stderr, "memrec: sampled one stack per %s bytes: about %llu allocations, %llu leaked (%s)\n",
                    o.sample_rate, (unsigned long long)t->allocations, (unsigned long long)t->live_blocks, leaked);
        } else {
            fprintf(stderr, "memrec: %llu allocations, %llu temporary, %llu leaked (%s)\n",
                    (unsigned long long)t->allocations, (unsigned long long)t->temporary,
                    (unsigned long long)t->live_blocks, leaked);
        }
        if (how == MEMFMT_END_SIGNALED) {
            fprintf(stderr, "memrec: the program was killed by signal %d (%s)\n", value, strsignal(value));
        } else if (how == MEMFMT_END_DETACHED) {
            fprintf(stderr, "memrec: recording stopped; the program is still running\n");
        }
        if (ms->lost_events || s.bad_batches) {
            fprintf(stderr, "memrec: warning: %llu events lost\n",
                    (unsigned long long)(ms->lost_events + (uint64_t)s.bad_batches));
        }
        fprintf(stderr, "memrec: next: memprint %s\n", s.outname);
    }
    merge_free(s.merge);
    accounting_free(s.acct);
    memfmt_writer_free(s.w);
    free(path);
    free(preload);
    free(s.outname);
    if (write_failed) {
        return 1;
    }
    if (how == MEMFMT_END_EXITED) {
        return value;
    }
    if (how == MEMFMT_END_SIGNALED) {
        return 128 + value;
    }
    return 130;
}
