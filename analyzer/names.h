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

/** Length of the valid UTF-8 character at `s` (NUL-terminated; 1 to 4
 * bytes), or 0 when the bytes there are not one (overlong forms,
 * surrogates, U+FFFE/U+FFFF and values above U+10FFFF are not valid):
 * the SVG and JSON writers copy valid characters and replace the rest, so
 * that their output is valid whatever a recording holds. */
size_t names_utf8_len(const unsigned char *s);

#endif
