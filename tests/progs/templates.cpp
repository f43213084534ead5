// SPDX-License-Identifier: MIT
/*
 * Target program for shortened C++ names: a std::vector<std::pair<int,
 * long>> grows by push_back, so its allocations' stacks hold libstdc++
 * frames with long template argument lists (std::vector<...>::push_back,
 * _M_realloc_insert<...>). Figures: push_back of 5 elements of 16 bytes
 * reallocates to capacities 1, 2, 4 and 8: 4 calls of operator new (16, 32,
 * 64, 128 bytes, 240 in all), the first three freed by the next, the last
 * when grow() returns; with libstdc++'s emergency pool (EXPECTED.md, cxx):
 * 5 calls, peak 72704 + 64 + 128 = 72896 bytes.
 */
#include <utility>
#include <vector>

__attribute__((noinline)) static long grow()
{
    std::vector<std::pair<int, long>> v;
    for (int i = 0; i < 5; i++) {
        v.push_back(std::make_pair(i, 2L * i));
    }
    return v.back().second;
}

int main()
{
    return grow() == 8 ? 0 : 1;
}
