// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
// C++ helper for test_symbolize: a namespaced class whose static member function inlines a member
// function, so the test can check demangled, fully qualified names of real and inlined frames.
#include "symtest.h"

static unsigned make_line_seen;
static unsigned grow_line_seen;

namespace ns {

class Widget {
public:
    explicit Widget(int n) : size_(n) {}
    static void *make(int n);
    __attribute__((always_inline)) inline void *grow(int n);

private:
    volatile int size_;
};

void *Widget::grow(int n)
{
    void *ra = symtest_ra(); grow_line_seen = __LINE__;
    size_ = size_ + n;
    return ra;
}

__attribute__((noinline)) void *Widget::make(int n)
{
    Widget w(n);
    void *ra = w.grow(n); make_line_seen = __LINE__;
    w.size_ = w.size_ * 2;
    return ra;
}

} // namespace ns

extern "C" void *symtest_cxx_run(unsigned *make_line, unsigned *grow_line)
{
    void *ra = ns::Widget::make(3);
    *make_line = make_line_seen;
    *grow_line = grow_line_seen;
    return ra;
}
