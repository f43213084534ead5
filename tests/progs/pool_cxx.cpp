// SPDX-License-Identifier: MIT
/*
 * Target program: include/memrec.h compiled as C++ (a class template using
 * it), run with and without memrec. Its pool's memory is a static array.
 * Steps: three blocks of 3001, 3002 and 3003 bytes from use(), then one
 * reset that frees all three; exit 0. Expected, for these blocks: 3
 * pool allocations of 9006 bytes in total, none leaked, peak 9006 among
 * them. (libstdc++'s own emergency pool may add a malloc of its own.)
 */
#include <cstddef>

#include "memrec.h"

namespace {

template <std::size_t N> class Arena {
  public:
    void *take(std::size_t n)
    {
        if (N - used_ < n) {
            return nullptr;
        }
        void *p = bytes_ + used_;
        used_ += (n + 15) & ~static_cast<std::size_t>(15);
        memrec_pool_alloc(this, p, n);
        return p;
    }
    void reset()
    {
        memrec_pool_reset(this);
        used_ = 0;
    }

  private:
    alignas(16) unsigned char bytes_[N];
    std::size_t used_ = 0;
};

Arena<16384> arena;

__attribute__((noinline)) void *use(std::size_t n)
{
    void *p = arena.take(n);
    __asm__ volatile("" : : "r"(p) : "memory");
    return p;
}

} // namespace

int main()
{
    memrec_pool_init();
    for (std::size_t n = 3001; n <= 3003; n++) {
        if (!use(n)) {
            return 1;
        }
    }
    arena.reset();
    return 0;
}
