// SPDX-License-Identifier: MIT
/* Checks before anything starts: the program to run is found and runnable,
 * and the recorder library is found next to memrec. Part of the memrec program
 * (memrec_internal.h). */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "escape.h"
#include "util.h"
#include "memrec_internal.h"

/* ---- the program to run ---- */

char *find_program(const char *name)
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

void check_program(const char *path, const char *name)
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

char *find_preload(void)
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
