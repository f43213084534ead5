// SPDX-License-Identifier: MIT
/* See fuzz_common.h. Buffers are kept from one input to the next: fresh
 * large buffers per input cost page faults, which once took half of the
 * reader target's time. */
#define _GNU_SOURCE
#include "fuzz_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "memfmt_internal.h"

void fuzz_contract(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz: contract broken: %s\n", what);
        abort();
    }
}

static int fd = -1;

const char *fuzz_input_path(void)
{
    static char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    return path;
}

int fuzz_input_fd(const uint8_t *data, size_t size)
{
    static ZSTD_CCtx *cctx;
    static uint8_t *packed;
    static size_t packed_cap;
    if (fd < 0) {
        fd = memfd_create("memrec-fuzz", MFD_CLOEXEC);
        fuzz_contract(fd >= 0, "memfd_create works");
    }
    if (size >= MEMFMT_MAGIC_LEN && memcmp(data, MEMFMT_MAGIC, MEMFMT_MAGIC_LEN) == 0) {
        size_t cap = ZSTD_compressBound(size);
        if (cap > packed_cap) {
            free(packed);
            packed = malloc(cap);
            packed_cap = cap;
        }
        if (!cctx) {
            cctx = ZSTD_createCCtx();
        }
        fuzz_contract(packed != NULL && cctx != NULL, "zstd buffers can be had");
        ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
        size_t n = ZSTD_compress2(cctx, packed, cap, data, size);
        fuzz_contract(!ZSTD_isError(n), "zstd compresses");
        data = packed;
        size = n;
    }
    fuzz_contract(ftruncate(fd, 0) == 0, "ftruncate of the memfd works");
    size_t done = 0;
    while (done < size) {
        ssize_t k = pwrite(fd, data + done, size - done, (off_t)done);
        fuzz_contract(k > 0, "pwrite to the memfd works");
        done += (size_t)k;
    }
    fuzz_contract(lseek(fd, 0, SEEK_SET) == 0, "lseek of the memfd works");
    return fd;
}
