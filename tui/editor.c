// SPDX-License-Identifier: MIT
/* Running the user's editor on a source file (editor.h). */
#define _GNU_SOURCE
#include "editor.h"

#include <curses.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int editor_open(const char *file, unsigned line, char *err, size_t cap)
{
    if (access(file, R_OK) != 0) {
        snprintf(err, cap, "cannot open %s: %s", file, strerror(errno));
        return -1;
    }
    const char *ed = getenv("VISUAL");
    if (!ed || !*ed) {
        ed = getenv("EDITOR");
    }
    if (!ed || !*ed) {
        ed = "vi";
    }
    char at[32];
    snprintf(at, sizeof at, "+%u", line ? line : 1);
    /* The editor's words split by sh; the line and the file are passed as
     * arguments, never parsed, whatever characters the path holds. */
    def_prog_mode();
    endwin();
    /* As system() does: a Ctrl+C typed in the editor is the editor's, not
     * a reason for memtui to quit once it returns. */
    struct sigaction ign = {0}, old_int, old_quit;
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGQUIT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        setenv("MEMTUI_EDITOR", ed, 1);
        execl("/bin/sh", "sh", "-c", "exec $MEMTUI_EDITOR \"$1\" \"$2\"", "sh", at, file, (char *)NULL);
        _exit(127);
    }
    int status = -1;
    int fork_errno = errno;
    if (pid > 0) {
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    reset_prog_mode();
    clearok(curscr, TRUE);
    refresh();
    if (pid < 0) {
        snprintf(err, cap, "cannot start the editor: %s", strerror(fork_errno));
        return -1;
    }
    if (!WIFEXITED(status)) {
        snprintf(err, cap, "the editor '%s' ended by a signal", ed);
        return -1;
    }
    return WEXITSTATUS(status);
}
