// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
/*
 * Shared library of the pack_main.cpp test program (test_pack.py builds
 * both into a temporary directory, records the program, packs the
 * recording and deletes them). A C++ class in a namespace whose method
 * expands an always_inline function that calls malloc: the packed file
 * must carry both names, the inline chain and their lines.
 *
 *   packlib::Store::grab(unsigned long)  calls  packlib::raw_block(unsigned long) (inlined)
 */
#include <cstdlib>
#include <cstring>

namespace packlib {

static inline __attribute__((always_inline)) char *raw_block(unsigned long n)
{
    char *p = static_cast<char *>(std::malloc(n)); /* LINE_LIB_INLINE */
    if (p) {
        std::memset(p, 0x33, 8);
    }
    return p;
}

struct Store {
    char *grab(unsigned long n);
};

__attribute__((noinline)) char *Store::grab(unsigned long n)
{
    char *p = raw_block(n); /* LINE_LIB_CALL */
    if (p) {
        p[n - 1] = 's';
    }
    return p;
}

} // namespace packlib
