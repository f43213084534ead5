// SPDX-License-Identifier: MIT
/* The C++ build of gate_lsan.c (the same source, compiled as C++). */
#include "gate_lsan.c"
