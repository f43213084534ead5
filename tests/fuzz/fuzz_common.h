// SPDX-License-Identifier: MIT
/* Helpers shared by the fuzz targets that read whole recordings
 * (fuzz_reader, fuzz_report): the input as a file, compressed first when
 * it is a decompressed stream. */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

/** Abort with "<target>: contract broken: <what>" unless `ok`. */
void fuzz_contract(int ok, const char *what);
/** A descriptor holding the input as a file recording: input that starts
 * with the memrec magic is a decompressed stream, compressed here first the
 * way memrec writes it (one frame with a checksum) so that mutations reach
 * the records instead of dying in zstd's checks; any other input is the
 * file as it is. One memfd reused for the whole run, at offset 0. */
int fuzz_input_fd(const uint8_t *data, size_t size);
/** "/proc/self/fd/N" of that descriptor, for model_load(). */
const char *fuzz_input_path(void);

#endif
