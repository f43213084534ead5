// SPDX-License-Identifier: MIT
/* What a program sees of its environment and descriptors: writes its
 * environ, main()'s envp, getenv() of the names memrec uses, and the
 * number its first open() returns, then, per argv[1]:
 *   "exec"   execv()s itself (environ passed on) with "done";
 *   "own"    execve()s itself with an environment of its own, {"OWN=1"};
 *   "spawn"  posix_spawn()s itself with environ, waits for it;
 *   "fork"   fork()s, and the child execv()s itself;
 *   "system" runs itself with system(), exit status 3;
 *   "popen"  runs itself with popen() and copies what it writes;
 *   "done"   (or nothing) stops.
 * Each image leaks one malloc(10001) (from leak()), so a recording shows
 * how many images it followed. Output goes through write(2) only. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void *volatile sink;

__attribute__((noinline)) static void leak(void)
{
    sink = malloc(10001);
}

static void say(const char *a, const char *b)
{
    char line[8192];
    int n = snprintf(line, sizeof line, "%s%s\n", a, b ? b : "(null)");
    if (n > 0) {
        ssize_t k = write(STDOUT_FILENO, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        (void)k;
    }
}

int main(int argc, char **argv, char **envp)
{
    static const char *const names[] = {"LD_PRELOAD",  "MEMREC_SOCK",      "MEMREC_TARGET",     "MEMREC_FOLLOW",
                                        "MEMREC_HIDE", "MEMREC_MAX_DEPTH", "MEMREC_SAMPLE_RATE"};
    const char *mode = argc > 1 ? argv[1] : "done";
    say("image ", mode);
    for (char **e = environ; *e; e++) {
        say("environ ", *e);
    }
    for (char **e = envp; *e; e++) {
        say("envp ", *e);
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char label[64];
        snprintf(label, sizeof label, "getenv %s=", names[i]);
        say(label, getenv(names[i]));
    }
    int fd = open("/dev/null", O_RDONLY);
    char num[16];
    snprintf(num, sizeof num, "%d", fd);
    say("first open ", num);
    close(fd);
    leak();
    char *again[] = {argv[0], "done", NULL};
    if (strcmp(mode, "exec") == 0) {
        execv(argv[0], again);
        return 1;
    }
    if (strcmp(mode, "own") == 0) {
        char *own[] = {"OWN=1", NULL};
        execve(argv[0], again, own);
        return 1;
    }
    if (strcmp(mode, "spawn") == 0) {
        pid_t pid;
        int status;
        if (posix_spawn(&pid, argv[0], NULL, NULL, again, environ) != 0 || waitpid(pid, &status, 0) != pid) {
            return 1;
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    if (strcmp(mode, "fork") == 0) {
        pid_t pid = fork();
        int status;
        if (pid == 0) {
            execv(argv[0], again);
            _exit(1);
        }
        if (pid < 0 || waitpid(pid, &status, 0) != pid) {
            return 1;
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "'%s' done", argv[0]);
    if (strcmp(mode, "system") == 0) {
        strcat(cmd, "; exit 3");
        int status = system(cmd);
        return WIFEXITED(status) && WEXITSTATUS(status) == 3 ? 0 : 1;
    }
    if (strcmp(mode, "popen") == 0) {
        FILE *f = popen(cmd, "r");
        char buf[8192];
        if (!f) {
            return 1;
        }
        while (fgets(buf, sizeof buf, f)) {
            buf[strcspn(buf, "\n")] = 0;
            say("", buf);
        }
        return pclose(f) == 0 ? 0 : 1;
    }
    return 0;
}
