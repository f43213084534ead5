// SPDX-License-Identifier: MIT
/* HIDDEN: the mark of the recorder's cross-file names. The library is built
 * with -fvisibility=hidden anyway; the mark says so where a name is
 * declared, and keeps it hidden in a test that links the file alone. */
#ifndef HIDDEN_H
#define HIDDEN_H

#define HIDDEN __attribute__((visibility("hidden")))

#endif
