// SPDX-License-Identifier: MIT
/* Replays fuzz inputs without libFuzzer: runs LLVMFuzzerTestOneInput on
 * every file named on the command line or found (recursively, in name
 * order) under a directory named there, so that ctest exercises each fuzz
 * target on its corpus and on past crashes (zstd's regression_driver.c).
 * Linked with one target instead of libFuzzer's main(). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Like libFuzzer's -malloc_limit_mb: an input that makes the code under
 * test ask for gigabytes must fail here, not take the machine down. Under
 * ASan the address space is reserved in terabytes, so the allocator's own
 * limit is used instead. */
#define MEMORY_LIMIT_MB 2048

#if defined(__SANITIZE_ADDRESS__)
#define DRIVER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DRIVER_ASAN 1
#endif
#endif
/* These sanitizers reserve terabytes of address space: no RLIMIT_AS. */
#if defined(DRIVER_ASAN) || defined(__SANITIZE_THREAD__)
#define DRIVER_BIG_SHADOW 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define DRIVER_BIG_SHADOW 1
#endif
#endif

#ifdef DRIVER_ASAN
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "max_allocation_size_mb=2048:allocator_may_return_null=1";
}
#endif

static unsigned ran;

static int run_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "fuzz_driver: cannot open '%s': %s\n", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        fprintf(stderr, "fuzz_driver: cannot read '%s': %s\n", path, strerror(errno));
        close(fd);
        return -1;
    }
    /* Exactly the input's size, so ASan sees a read one byte past it. */
    size_t size = (size_t)st.st_size;
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) {
        fprintf(stderr, "fuzz_driver: out of memory for '%s'\n", path);
        close(fd);
        return -1;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t k = read(fd, buf + got, size - got);
        if (k < 0 && errno == EINTR) {
            continue;
        }
        if (k <= 0) {
            fprintf(stderr, "fuzz_driver: cannot read '%s': %s\n", path, k < 0 ? strerror(errno) : "file shrank");
            free(buf);
            close(fd);
            return -1;
        }
        got += (size_t)k;
    }
    close(fd);
    /* Named before it runs: a crash report that follows is about this file. */
    printf("running %s (%zu bytes)\n", path, size);
    fflush(stdout);
    LLVMFuzzerTestOneInput(buf, size);
    free(buf);
    ran++;
    return 0;
}

static int skip_entry(const struct dirent *e)
{
    return e->d_name[0] != '.'; /* ".", "..", and hidden files such as .gitkeep */
}

static int run_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "fuzz_driver: cannot open '%s': %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        return run_file(path);
    }
    struct dirent **list;
    int n = scandir(path, &list, skip_entry, alphasort);
    if (n < 0) {
        fprintf(stderr, "fuzz_driver: cannot list '%s': %s\n", path, strerror(errno));
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(path) + strlen(list[i]->d_name) + 2;
        char *child = malloc(len);
        if (!child) {
            fprintf(stderr, "fuzz_driver: out of memory\n");
            exit(1);
        }
        snprintf(child, len, "%s/%s", path, list[i]->d_name);
        if (run_path(child) < 0) {
            rc = -1;
        }
        free(child);
        free(list[i]);
    }
    free(list);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr,
                "usage: %s FILE|DIR...\n"
                "Runs the fuzz target on every file given or found under the directories given.\n",
                argv[0]);
        return 2;
    }
#ifndef DRIVER_BIG_SHADOW
    rlim_t want = (rlim_t)MEMORY_LIMIT_MB << 20;
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > want) &&
        (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want)) {
        rl.rlim_cur = want;
        setrlimit(RLIMIT_AS, &rl);
    }
#endif
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        if (run_path(argv[i]) < 0) {
            rc = 1;
        }
    }
    if (ran == 0) {
        fprintf(stderr, "fuzz_driver: no input files found\n");
        return 1;
    }
    printf("replayed %u input(s)\n", ran);
    return rc;
}
