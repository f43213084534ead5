// SPDX-License-Identifier: MIT
/* gate_lsan: a program that embeds its own leak suppressions the way
 * LeakSanitizer reads them, with __lsan_default_suppressions(); memprint
 * reads them from the executable without running it (test_gate.py builds
 * this file with gcc and clang at -O0 and -O2, PIE and not, as C and as
 * C++). Leaks, known by construction:
 *   4 x 555 bytes from gate_embedded_leak() (suppressed by the embedded
 *     "leak:gate_embedded_leak"),
 *   1 x 777 bytes from gate_plain_leak() (matched by nothing).
 * No stdio: nothing else allocates. */
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "# gate_lsan's own suppressions\n"
           "leak:gate_embedded_leak\n"
           "leak:gate_no_such_function\n";
}
#ifdef __cplusplus
}
#endif

/* Not static: a store the compiler must keep (a static array never read
 * lets gcc drop the mallocs at -O2). */
void *gate_sink[8];

__attribute__((noinline)) static void gate_embedded_leak(int i)
{
    gate_sink[i] = malloc(555);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void gate_plain_leak(void)
{
    gate_sink[7] = malloc(777);
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    for (int i = 0; i < 4; i++) {
        gate_embedded_leak(i);
    }
    gate_plain_leak();
    return 0;
}
