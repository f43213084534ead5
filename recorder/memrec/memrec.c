// SPDX-License-Identifier: MIT
/* memrec: runs a program with the recorder preloaded, reads the recorder's
 * pipe, merges and compresses the events into the output file, and prints a
 * short summary. The program's stdin/stdout/stderr, cwd, arguments and exit
 * status are left as they are. */
#define _GNU_SOURCE
#include <dlfcn.h>
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
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "accounting.h"
#include "escape.h"
#include "memfmt.h"
#include "memwire.h"
#include "hub.h"
#include "inject.h"
#include "merge.h"
#include "recording.h"
#include "util.h"

#define PRELOAD_NAME "libmemrec_preload.so"
#define FLUSH_EVERY_MS 100
#define RSS_EVERY_MS 10

static volatile sig_atomic_t got_stop; /* SIGINT/SIGTERM/SIGHUP count */
static volatile sig_atomic_t last_stop; /* the latest of them */
/* Per signal number, how many were sent to memrec by another process
 * (kill(1), a service manager): those are passed on to the program. */
static volatile sig_atomic_t sent_to_us[32];
static volatile sig_atomic_t program_pid; /* its own signals to us are not sent back */
static volatile sig_atomic_t got_chld;

struct options {
    const char *output;
    int quiet;
    int level;
    const char *max_depth; /* passed to the recorder as MEMREC_MAX_DEPTH */
    char sample_rate[32]; /* passed as MEMREC_SAMPLE_RATE; empty: record all */
    int follow_fork; /* record fork children, each into its own file */
    pid_t attach_pid; /* --pid: attach to this running process instead */
    char **argv;
};

static void usage(FILE *f)
{
    fprintf(f, "usage: memrec [-o FILE] [-q] [-f] [-s BYTES] [-d DEPTH] [-l LEVEL] [--] PROGRAM [ARGS...]\n"
               "       memrec [-o FILE] [-q] [-s BYTES] [-d DEPTH] [-l LEVEL] --pid PID\n"
               "\n"
               "Runs PROGRAM and records every heap allocation with its call stack; or, with\n"
               "--pid, attaches to a running process and records it until Ctrl+C (which\n"
               "detaches and leaves it running) or its end.\n"
               "\n"
               "  -o, --output FILE   write the recording to FILE (default: memrec.<program>.<pid>.zst)\n"
               "  -q, --quiet         print nothing at the end\n"
               "  -p, --pid PID       attach to the running process PID (memrec's own ptrace\n"
               "                      injector; needs the right to trace it)\n"
               "  -f, --follow-fork   record each child the program forks too, into a file of its\n"
               "                      own named after its pid (memrec.<program>.<pid>.zst, or\n"
               "                      FILE.<pid>.zst with -o FILE.zst)\n"
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
        {"version", no_argument, NULL, 'V'},           {"follow-fork", no_argument, NULL, 'f'},
        {"pid", required_argument, NULL, 'p'},         {NULL, 0, NULL, 0},
    };
    o->level = 3;
    opterr = 0;
    int c;
    /* '+': stop at the program name, its options are its own. */
    while ((c = getopt_long(argc, argv, "+o:ql:d:s:fp:hV", longs, NULL)) != -1) {
        switch (c) {
        case 'o':
            if (strcmp(optarg, "-") == 0) {
                /* The recording is binary and finished only at the end: a
                 * terminal or a pipe reader would get half a file. */
                die_code(2, "-o -: memrec cannot write the recording to standard output; give a file name");
            }
            o->output = optarg;
            break;
        case 'q': o->quiet = 1; break;
        case 'f': o->follow_fork = 1; break;
        case 'p': {
            char *end;
            errno = 0;
            long v = strtol(optarg, &end, 10);
            if (*end || errno || v <= 0 || v > INT32_MAX) {
                die_code(2, "invalid process id '%s'", optarg);
            }
            o->attach_pid = (pid_t)v;
            break;
        }
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
    if (o->attach_pid) {
        if (optind < argc) {
            die_code(2, "give either --pid or a program to run, not both (see memrec --help)");
        }
        if (o->follow_fork) {
            die_code(2, "--follow-fork works only with a program memrec starts, not with --pid");
        }
        return;
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

static void start_child(struct child *c, const struct options *o, char *path, const char *sock, const char *preload)
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
        char val[32];
        setenv("MEMREC_SOCK", sock, 1);
        snprintf(val, sizeof val, "%d", (int)getpid());
        setenv("MEMREC_TARGET", val, 1);
        if (o->follow_fork) {
            setenv("MEMREC_FOLLOW", "1", 1);
        } else {
            unsetenv("MEMREC_FOLLOW");
        }
        /* MEMREC_HIDE names the option variables set here: the recorder
         * hides them from the program with the three above. */
        char hide[64] = "";
        if (o->max_depth) {
            setenv("MEMREC_MAX_DEPTH", o->max_depth, 1);
            strcat(hide, "MEMREC_MAX_DEPTH:");
        }
        if (o->sample_rate[0]) {
            setenv("MEMREC_SAMPLE_RATE", o->sample_rate, 1);
            strcat(hide, "MEMREC_SAMPLE_RATE:");
        }
        if (hide[0]) {
            setenv("MEMREC_HIDE", hide, 1);
        } else {
            unsetenv("MEMREC_HIDE");
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

/* ---- output files ---- */

static char *default_name(const char *prog, pid_t pid)
{
    const char *base = strrchr(prog, '/');
    base = base ? base + 1 : prog;
    char *name = xmalloc(strlen(base) + 64);
    sprintf(name, "memrec.%s.%d.zst", base, (int)pid);
    return name;
}

/* -o x.zst: a followed child's file is x.<pid>.zst. */
static char *child_name(const struct options *o, pid_t pid)
{
    if (!o->output) {
        return default_name(o->argv[0], pid);
    }
    size_t n = strlen(o->output);
    char *name = xmalloc(n + 32);
    if (n > 4 && strcmp(o->output + n - 4, ".zst") == 0) {
        sprintf(name, "%.*s.%d.zst", (int)(n - 4), o->output, (int)pid);
    } else {
        sprintf(name, "%s.%d", o->output, (int)pid);
    }
    return name;
}

/* Why `name` could not be created (errno `e`), as the end of an error line. */
static const char *create_error(const char *name, int e)
{
    struct stat st;
    if (e == EEXIST && lstat(name, &st) == 0 && S_ISLNK(st.st_mode)) {
        return stat(name, &st) == 0 ? "it is a symbolic link (memrec never writes through one)"
                                    : "it is a dangling symbolic link (memrec never writes through one)";
    }
    if (e == EEXIST) {
        return "file exists (memrec never overwrites)";
    }
    if (e == ELOOP) {
        return "it is a symbolic link (memrec never writes through one)";
    }
    return strerror(e);
}

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
};

/* A new recording, listed in the session; NULL with errno as recording_open(). */
static struct recording *session_add(struct session *s, pid_t pid, const char *outname, uint32_t flags)
{
    struct recording *r = recording_open(pid, outname, flags, s->o->level,
                                         s->o->sample_rate[0] ? strtoull(s->o->sample_rate, NULL, 10) : 0);
    if (!r) {
        return NULL;
    }
    if (s->nrecs == s->recs_cap) {
        xgrow((void **)&s->recs, &s->recs_cap, s->nrecs + 1, sizeof *s->recs);
    }
    s->recs[s->nrecs++] = r;
    return r;
}

/* How a recording ends: the kernel's peak RSS goes with the process memrec
 * started and waited for. */
static void finish(struct session *s, struct recording *r, unsigned how, int value)
{
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

/* A recorder asks for its pipe: the process memrec started (first image
 * or after exec), one that lost its descriptor, or a fork child. */
static void serve(struct session *s)
{
    struct hub_request req;
    int got;
    while ((got = hub_accept(s->lfd, &req)) != 0) {
        if (got < 0) {
            continue;
        }
        struct recording *r = req.uid == getuid() ? find_live(s, req.pid) : NULL;
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

static void on_chld(int sig)
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

/* The socket recorders ask for their pipes on, and the signals that end a
 * recording: what every session starts with. Dies on failure. */
static int open_hub(char *sock, size_t cap)
{
    int fd = hub_listen(sock, cap);
    if (fd < 0) {
        die("cannot create memrec's socket: %s", strerror(errno));
    }
    catch_stop_signals();
    return fd;
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

static void main_end(struct session *s, unsigned *how, int *value)
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
static void pass_on_signals(struct session *s, int *passed)
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

/* Read the pipes and serve the socket until every recorded process ended
 * or the user stopped us. */
static void run(struct session *s)
{
    uint64_t last_flush = mono_ms(), last_rss = 0, stop_at = 0;
    struct pollfd *pfd = NULL;
    size_t pfd_cap = 0;
    int passed[sizeof sent_to_us / sizeof *sent_to_us] = {0};
    for (;;) {
        uint64_t now = mono_ms();
        if (got_stop && !stop_at) {
            stop_at = now;
        }
        if (got_stop && !s->attached) {
            pass_on_signals(s, passed);
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

static void print_summary(const struct session *s, const struct recording *r)
{
    const struct options *o = s->o;
    accounting_finish(r->acct);
    const struct acct_totals *t = accounting_totals(r->acct);
    const struct merge_stats *ms = merge_stats(r->merge);
    char leaked[32];
    util_bytes(leaked, sizeof leaked, t->live_bytes);
    /* The name comes from the program (argv[0], or /proc/PID/comm when
     * attached) and the file name from it: escaped, never raw, so that a
     * name holding ESC cannot drive the terminal. */
    char *name = esc_text(s->name);
    char *outname = esc_text(r->outname);
    if (r->is_main) {
        fprintf(stderr, "memrec: recorded '%s' (pid %d) into %s\n", name, (int)r->pid, outname);
    } else {
        fprintf(stderr, "memrec: recorded child process %d into %s\n", (int)r->pid, outname);
    }
    free(name);
    free(outname);
    if (o->sample_rate[0]) {
        fprintf(stderr, "memrec: sampled one stack per %s bytes: about %llu allocations, %llu leaked (%s)\n",
                o->sample_rate, (unsigned long long)t->allocations, (unsigned long long)t->live_blocks, leaked);
    } else {
        fprintf(stderr, "memrec: %llu allocations, %llu temporary, %llu leaked (%s)\n",
                (unsigned long long)t->allocations, (unsigned long long)t->temporary,
                (unsigned long long)t->live_blocks, leaked);
    }
    if (ms->images) {
        fprintf(stderr, "memrec: the process ran %u more program%s through exec\n", (unsigned)ms->images,
                ms->images == 1 ? "" : "s");
    }
    if (r->how == MEMFMT_END_SIGNALED) {
        fprintf(stderr, "memrec: the program was killed by signal %d (%s)\n", r->value, strsignal(r->value));
    } else if (r->how == MEMFMT_END_DETACHED) {
        fprintf(stderr, "memrec: recording stopped; the program is still running%s\n",
                s->attached ? " (detached)" : "");
    } else if (r->how == MEMFMT_END_UNKNOWN && !r->is_main) {
        fprintf(stderr, "memrec: the process ended without exiting normally (killed or crashed)\n");
    }
    if (ms->lost_events || r->bad_batches) {
        fprintf(stderr, "memrec: warning: %llu events lost\n",
                (unsigned long long)(ms->lost_events + (uint64_t)r->bad_batches));
    }
}

/* The summary's last line: the command that shows the recording. */
static void print_next(const struct recording *r)
{
    fputs("memrec: next: memprint ", stderr);
    esc_text_fputs(r->outname, stderr);
    fputc('\n', stderr);
}

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

static void serve(struct session *s);

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
    uint64_t fn = 0;
    if (!name || !rname || inject_call(&in, a->lc.dlsym, handle, name, 0, &fn, 2000, err, sizeof err) != 0 || !fn ||
        inject_call(&in, a->lc.dlsym, handle, rname, 0, &a->detach_request, 2000, err, sizeof err) != 0 ||
        !a->detach_request) {
        inject_end(&in);
        attach_fail(pid, "the loaded recorder has no memrec_attach/memrec_detach_request (a different version?)");
    }
    char v_sock[200], v_target[64], v_depth[64], v_rate[64];
    char *vars[4];
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
    int one = 1;
    struct iovec local = {&one, sizeof one};
    struct iovec remote = {(void *)(uintptr_t)a->detach_request, sizeof one};
    if (process_vm_writev(pid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof one) {
        snprintf(err, cap, "cannot write into its memory: %s", strerror(errno));
        return -1;
    }
    struct recording *r = s->main;
    recording_close_write(r);
    uint64_t end = mono_ms() + DETACH_TIMEOUT_MS;
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

static int attach_main(struct options *o)
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

int main(int argc, char **argv)
{
    util_progname = "memrec";
    struct options o = {0};
    parse_args(argc, argv, &o);
    if (o.attach_pid) {
        return attach_main(&o);
    }
    struct session s = {.o = &o, .lfd = -1, .name = o.argv[0]};

    char *path = find_program(o.argv[0]);
    check_program(path, o.argv[0]);
    char *preload = find_preload();
    char sock[128];
    s.lfd = open_hub(sock, sizeof sock);
    struct sigaction sa = {0};
    sa.sa_handler = on_chld;
    sa.sa_flags = SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, NULL);

    start_child(&s.child, &o, path, sock, preload);
    program_pid = s.child.pid;

    char *outname = o.output ? xstrdup(o.output) : default_name(o.argv[0], s.child.pid);
    s.main = session_add(&s, s.child.pid, outname, 0);
    if (!s.main) {
        int e = errno;
        kill(s.child.pid, SIGKILL);
        waitpid(s.child.pid, NULL, 0);
        die("cannot create '%s': %s", outname, create_error(outname, e));
    }
    s.main->is_main = 1;
    free(outname);

    /* Go: the file exists, the program may start. */
    if (write(s.child.go_fd, "g", 1) != 1) {
        die("cannot start '%s': %s", o.argv[0], strerror(errno));
    }
    close(s.child.go_fd);
    int exec_errno = 0;
    if (read(s.child.err_fd, &exec_errno, sizeof exec_errno) == (ssize_t)sizeof exec_errno) {
        waitpid(s.child.pid, NULL, 0);
        memfmt_writer_free(s.main->w);
        s.main->w = NULL;
        close(s.main->out_fd);
        unlink(s.main->outname);
        if (exec_errno == ENOENT && access(path, F_OK) == 0) {
            /* The file is there: what exec could not find is its interpreter. */
            die_code(127, "cannot run '%s': its interpreter (#! line or ELF loader) was not found", o.argv[0]);
        }
        die_code(exec_errno == ENOENT ? 127 : 126, "cannot run '%s': %s", o.argv[0], strerror(exec_errno));
    }
    close(s.child.err_fd);

    run(&s);
    if (!s.reaped && got_stop < 2) {
        reap(&s, 0);
    }
    if (!s.reaped) {
        reap(&s, WNOHANG);
    }
    if (!s.reaped && !o.quiet) {
        fprintf(stderr, "memrec: SIG%s again: recording stopped; process %d runs on unrecorded\n",
                sigabbrev_np(last_stop), (int)s.child.pid);
    }
    unsigned how;
    int value;
    main_end(&s, &how, &value);
    finish(&s, s.main, how, value);
    for (size_t i = 0; i < s.nrecs; i++) {
        finish(&s, s.recs[i], got_stop ? MEMFMT_END_DETACHED : MEMFMT_END_UNKNOWN, 0);
    }
    close(s.lfd);

    int failed = 0;
    for (size_t i = 0; i < s.nrecs; i++) {
        failed |= s.recs[i]->failed;
        if (!o.quiet) {
            print_summary(&s, s.recs[i]);
        }
    }
    if (!o.quiet) {
        /* With --follow-fork, one file per process: name every one. */
        for (size_t i = 0; i < s.nrecs; i++) {
            print_next(s.recs[i]);
        }
    }
    for (size_t i = 0; i < s.nrecs; i++) {
        recording_free(s.recs[i]);
    }
    free(s.recs);
    free(path);
    free(preload);
    if (failed) {
        return 1;
    }
    if (how == MEMFMT_END_EXITED) {
        return value;
    }
    if (how == MEMFMT_END_SIGNALED) {
        return 128 + value;
    }
    return 128 + (last_stop ? last_stop : SIGINT);
}
