// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
/*
 * Maps memory directly, in every way memrec records, and allocates a
 * little. Steps, with the mapped total after each (1 MiB = 1048576):
 *   1. mapper_lib_map() in libmapper.so maps 40 MiB, kept   40 MiB
 *   2. mmap 1 MiB, munmap its upper half                      40.5 MiB
 *   3. mmap 2 MiB; a file mapping placed right after it (not
 *      counted) makes mremap to 6 MiB move it                  46.5 MiB
 *   4. sbrk(64 KiB), then sbrk(-16 KiB)                        46.5 MiB + 48 KiB
 *   5. mmap 256 KiB: the peak, 49070080 bytes                  46.5 MiB + 304 KiB
 *      then a file mapped MAP_FIXED over its first 64 KiB      46.5 MiB + 240 KiB
 *   6. malloc(10001) (leaked), malloc(64 MiB) (glibc maps it itself: heap
 *      only) freed, malloc(20001) freed
 *   7. munmap the moved 6 MiB mapping: 42713088 bytes at the end
 * Mapping calls: 5 (steps 1, 2, 3, 4 growth, 5). Heap: 3 allocations,
 * 2 temporaries, peak 67118865, leaked 10001 in 1 block, total 67138866.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define KiB 1024u
#define MiB (1024u * 1024u)

void *mapper_lib_map(void);

static void *volatile sink;

static void *anon(size_t len)
{
    return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

int main(void)
{
    int fd = open("/proc/self/exe", O_RDONLY);
    if (fd < 0 || !mapper_lib_map()) {
        return 1;
    }
    char *a = anon(1 * MiB); /* LINE_MAP_A */
    if (a == MAP_FAILED || munmap(a + 512 * KiB, 512 * KiB) != 0) {
        return 1;
    }
    char *b = anon(2 * MiB); /* LINE_MAP_B */
    if (b == MAP_FAILED) {
        return 1;
    }
    /* Whatever lies after b now (this file, or a mapping that was already
     * there) keeps mremap from growing it in place. */
    void *blocker = mmap(b + 2 * MiB, 4 * KiB, PROT_READ, MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);
    char *moved = mremap(b, 2 * MiB, 6 * MiB, MREMAP_MAYMOVE);
    if (moved == MAP_FAILED || moved == b) {
        return 1;
    }
    if (sbrk(64 * KiB) == (void *)-1 || sbrk(-(intptr_t)(16 * KiB)) == (void *)-1) { /* LINE_SBRK */
        return 1;
    }
    char *c = anon(256 * KiB); /* LINE_MAP_C */
    if (c == MAP_FAILED || mmap(c, 64 * KiB, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) != c) {
        return 1;
    }
    void *keep = malloc(10001);
    sink = keep;
    void *big = malloc(64 * MiB);
    sink = big;
    free(big);
    void *p = malloc(20001);
    sink = p;
    free(p);
    if (munmap(moved, 6 * MiB) != 0) {
        return 1;
    }
    if (blocker != MAP_FAILED) {
        munmap(blocker, 4 * KiB);
    }
    close(fd);
    return 0;
}
