// SPDX-License-Identifier: MIT
/* memrec: runs a program with the recorder preloaded, reads the recorder's
 * pipe, merges and compresses the events into the output file, and prints a
 * short summary. The program's stdin/stdout/stderr, cwd, arguments and exit
 * status are left as they are. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "escape.h"
#include "util.h"
#include "memrec_internal.h"

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
    if (s.duration_over && !s.reaped) {
        if (!o.quiet) {
            fprintf(stderr, "memrec: --duration reached: recording stopped; waiting for process %d to end\n",
                    (int)s.child.pid);
        }
        wait_unrecorded(&s);
    }
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
