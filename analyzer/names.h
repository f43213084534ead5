// SPDX-License-Identifier: MIT
/* Readable C++ names for text output: template argument lists longer than
 * a few characters are written "<…>", so that
 * "std::vector<std::pair<int, long>, std::allocator<...> >::push_back(...)"
 * reads "std::vector<…>::push_back(…)". JSON keeps full names; memprint's
 * --full-names turns this off. Never prints. */
#ifndef NAMES_H
#define NAMES_H

#include <stddef.h>

/** Longest template argument list (or parameter list) kept as it is, in bytes. */
#define NAMES_KEEP 12

/** The shortened form of `name` into a new string (xmalloc; the caller
 * frees it). Template argument lists and function parameter lists whose
 * text is longer than NAMES_KEEP bytes become "<…>" and "(…)"; "operator<",
 * "operator<<", "operator->" and the like are left alone. An unbalanced
 * name (a cut or odd symbol) is returned as it is from that point on. O(length). */
char *names_shorten(const char *name);

#endif
