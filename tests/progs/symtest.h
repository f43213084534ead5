// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
// Declarations shared by test_symbolize and its helper programs (symtest_*.c, symtest_cxx.cpp).
// Each helper returns a return address taken at a known source line so the test can check it.
#ifndef MEMREC_SYMTEST_H
#define MEMREC_SYMTEST_H

#ifdef __cplusplus
extern "C" {
#endif

/** Return the caller's return address (an ip just after the call instruction). */
void *symtest_ra(void);

/**
 * Call ns::Widget::make(int), which inlines ns::Widget::grow(int), which calls symtest_ra().
 * Returns that return address; *grow_line is the line of the symtest_ra() call and *make_line the
 * line where make() calls grow(), both in symtest_cxx.cpp.
 */
void *symtest_cxx_run(unsigned *make_line, unsigned *grow_line);

/** In libsymtest_lib.so: a return address inside the exported symtest_lib_entry() and its line. */
void *symtest_lib_entry(unsigned *line);

/** In libsymtest_lib.so: a return address inside a static (non-exported) function and its line. */
void *symtest_lib_static(unsigned *line);

/** In libsymtest_hi.so (dlopen'ed, first segment linked at 0x10000000): as symtest_lib_entry. */
void *symtest_hi_entry(unsigned *line);

#ifdef __cplusplus
}
#endif

#endif
