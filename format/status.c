// SPDX-License-Identifier: MIT
/* Names of the format library's status codes. */
#include "memfmt.h"

const char *memfmt_strerror(int code)
{
    switch (code) {
    case MEMFMT_OK: return "no error";
    case MEMFMT_E_IO: return "input/output error";
    case MEMFMT_E_NOT_MEMREC: return "not a memrec recording";
    case MEMFMT_E_VERSION: return "written by a newer memrec (unsupported format version)";
    case MEMFMT_E_TRUNCATED: return "truncated";
    case MEMFMT_E_CORRUPT: return "corrupt data";
    case MEMFMT_E_NOMEM: return "out of memory";
    case MEMFMT_E_TOOBIG: return "record too large";
    case MEMFMT_E_ZSTD: return "compression error";
    case MEMFMT_E_EMPTY: return "empty file";
    case MEMFMT_E_INVALID: return "invalid argument";
    case MEMFMT_E_WINDOW: return "compressed with a zstd window larger than 128 MiB (the most a reader accepts)";
    default: return "unknown error";
    }
}
