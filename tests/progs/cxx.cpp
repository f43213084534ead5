// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
/*
 * Target program: C++ allocation operators, each called a known number of
 * times with raw new/delete (no containers, no iostream: they allocate on
 * their own). All 8 operator new and all 12 operator delete forms of C++17
 * are called. Single-threaded, quiet, exit 0. Build with -std=c++17
 * -fsized-deallocation (clang before 19 needs the latter for the sized
 * delete forms).
 *
 * Steps, with the live requested bytes after each:
 *    1  new Big                       (operator new, 20001)               20001
 *    2  new char[10001]               (operator new[])                    30002
 *    3  new (std::nothrow) Crate      (nothrow new, 30001)                60003
 *    4  new (std::nothrow) char[40001] (nothrow new[])                   100004
 *    5  new Cache                     (aligned new, 64: sizeof 40064)    140068
 *    6  operator new(50001, align_val_t(128))                            190069
 *    7  new Cache[2]                  (aligned new[], 2 * 40064 = 80128) 270197  peak
 *    8  1..7 freed in order, through (as GCC 12 and clang 14 compile it):
 *         delete big            operator delete(void *, size_t)
 *         delete[] chars        operator delete[](void *)
 *         delete crate          operator delete(void *, size_t)
 *         delete[] (nothrow'd)  operator delete[](void *)
 *         delete cache          operator delete(void *, size_t, align_val_t)
 *         operator delete(raw, align_val_t(128))
 *         delete[] caches       operator delete[](void *, align_val_t)       0
 *    9  eight temporaries, each allocated and at once freed, covering the
 *       remaining operator forms:
 *         operator new(10002)                 / operator delete(p)
 *         new (std::nothrow) char[10003]      / delete[]
 *         operator new(10004, al 64, nothrow) / operator delete(p, al 64, nothrow)
 *         operator new[](10005, al 64, nothrow) / operator delete[](p, al 64, nothrow)
 *         operator new[](10006)               / operator delete[](p, 10006)
 *         operator new(10007, nothrow)        / operator delete(p, nothrow)
 *         operator new[](10008, nothrow)      / operator delete[](p, nothrow)
 *         operator new[](10009, al 64)        / operator delete[](p, 10009, al 64)
 *   10  shop::Basket::fill(60001): new char[60001], never freed (the leak)
 *
 * Expected (memrec definitions, the program's own calls): allocations 16,
 * temporary 8, peak 270197, leaked 60001 bytes in 1 block, allocated in
 * total 410242 bytes. libstdc++ adds one malloc(72704) of its own (the
 * exception emergency pool) during start-up, before main, and never frees it
 * unless something calls __gnu_cxx::__freeres(); see EXPECTED.md.
 * The leak's innermost program frame is shop::Basket::fill(int) at the line
 * marked LINE_FILL_ALLOC, called from main at the line marked LINE_MAIN_FILL.
 */
#include <cstddef>
#include <new>

namespace shop {

struct Basket {
    static void *fill(int n);
};

} // namespace shop

namespace {

struct Big {
    char bytes[20001];
};

struct Crate {
    char bytes[30001];
};

// sizeof(Cache) is 40001 rounded up to a multiple of 64, i.e. 40064.
struct alignas(64) Cache {
    char bytes[40001];
};

static_assert(sizeof(Big) == 20001, "Big must be 20001 bytes");
static_assert(sizeof(Crate) == 30001, "Crate must be 30001 bytes");
static_assert(sizeof(Cache) == 40064, "Cache must be 40064 bytes");

// GCC may delete a new/delete pair whose memory is never used; an empty asm
// that claims to read the pointer and all memory keeps every call real.
inline void keep(const void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

void *volatile leaked_block;

} // namespace

// noinline keeps fill() a frame of its own; the store after new[] keeps the
// call to operator new[] from becoming a tail call that would drop the frame.
__attribute__((noinline)) void *shop::Basket::fill(int n)
{
    char *p = new char[static_cast<std::size_t>(n)]; /* LINE_FILL_ALLOC */
    p[0] = 1;
    keep(p);
    return p;
}

int main()
{
    Big *big = new Big;
    keep(big);
    char *chars = new char[10001];
    keep(chars);
    Crate *crate = new (std::nothrow) Crate;
    if (!crate) {
        return 1;
    }
    keep(crate);
    char *nothrow_chars = new (std::nothrow) char[40001];
    if (!nothrow_chars) {
        return 1;
    }
    keep(nothrow_chars);
    Cache *cache = new Cache;
    keep(cache);
    void *raw = ::operator new(50001, std::align_val_t(128));
    keep(raw);
    Cache *caches = new Cache[2];
    keep(caches);

    delete big;                                      // sized: operator delete(void *, size_t)
    delete[] chars;                                  // operator delete[](void *)
    delete crate;                                    // sized
    delete[] nothrow_chars;                          // operator delete[](void *)
    delete cache;                                    // operator delete(void *, size_t, align_val_t)
    ::operator delete(raw, std::align_val_t(128));   // operator delete(void *, align_val_t)
    delete[] caches;                                 // operator delete[](void *, align_val_t)

    void *temp = ::operator new(10002);
    keep(temp);
    ::operator delete(temp);

    char *temp_chars = new (std::nothrow) char[10003];
    if (!temp_chars) {
        return 1;
    }
    keep(temp_chars);
    delete[] temp_chars;

    // The remaining operator forms, called directly, each pair a temporary.
    const std::align_val_t al64 = std::align_val_t(64);
    temp = ::operator new(10004, al64, std::nothrow);
    if (!temp) {
        return 1;
    }
    keep(temp);
    ::operator delete(temp, al64, std::nothrow);

    temp = ::operator new[](10005, al64, std::nothrow);
    if (!temp) {
        return 1;
    }
    keep(temp);
    ::operator delete[](temp, al64, std::nothrow);

    temp = ::operator new[](10006);
    keep(temp);
    ::operator delete[](temp, 10006);

    temp = ::operator new(10007, std::nothrow);
    if (!temp) {
        return 1;
    }
    keep(temp);
    ::operator delete(temp, std::nothrow);

    temp = ::operator new[](10008, std::nothrow);
    if (!temp) {
        return 1;
    }
    keep(temp);
    ::operator delete[](temp, std::nothrow);

    temp = ::operator new[](10009, al64);
    keep(temp);
    ::operator delete[](temp, 10009, al64);

    leaked_block = shop::Basket::fill(60001); /* LINE_MAIN_FILL */
    return 0;
}
