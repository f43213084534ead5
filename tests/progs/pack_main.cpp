// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
/*
 * Target program of test_pack.py (memprint --pack), with its own shared
 * library pack_lib.cpp; the test builds both into a temporary directory
 * and deletes them after recording. No stdio, exit 0.
 *
 *   make_record(10007): an always_inline function expanding operator
 *     new[] inside the noinline keep_record(): kept to the end, a leak
 *   packlib::Store::grab(20011) (the library): kept, a leak
 *   packlib::Store::grab(30013): freed right away, a temporary
 *
 * and libstdc++'s emergency pool (72704 bytes on x86-64 Debian), allocated
 * at start-up and freed at exit.
 * Expected: allocations 4, temporary 1, leaked 30018 bytes in 2 blocks;
 * without the pool: 3 allocations, 60031 bytes.
 */
#include <cstdlib>

namespace packlib {
struct Store {
    char *grab(unsigned long n);
};
} // namespace packlib

static char *volatile kept[2];

static inline __attribute__((always_inline)) char *make_record(unsigned long n)
{
    char *p = new char[n]; /* LINE_MAIN_INLINE */
    p[0] = 'r';
    return p;
}

char *keep_record(unsigned long n);

__attribute__((noinline)) char *keep_record(unsigned long n)
{
    char *p = make_record(n); /* LINE_MAIN_CALL */
    p[n - 1] = 'k';
    return p;
}

int main()
{
    packlib::Store store;
    kept[0] = keep_record(10007);
    kept[1] = store.grab(20011);
    char *t = store.grab(30013);
    std::free(t);
    return 0;
}
