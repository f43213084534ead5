// SPDX-License-Identifier: MIT
/* gate_leaks: leaks known by construction, each behind a different kind of
 * name a suppression can match (test_gate.py):
 *   3 x 1001 bytes from gate_leak_by_function() (a function name),
 *   2 x 2002 bytes from gate_leak_in_other_file() in gate_leaks_file.c
 *     (a source file name),
 *   1 x 3003 bytes from gate_leak_in_module() in libgate_module.so (a
 *     module name),
 *   1 x 4004 bytes from gate_leak_kept() (matched by nothing),
 * and the buffer of stdout (puts: 4096 bytes when stdout is a pipe), which
 * memprint's built-in list suppresses. Nothing else is allocated. */
#include <stdio.h>
#include <stdlib.h>

void *gate_leak_in_other_file(void);
void *gate_leak_in_module(void);

/* Not static: a store the compiler must keep (a static array never read
 * lets gcc drop the mallocs at -O2). */
void *gate_sink[8];

__attribute__((noinline)) static void gate_leak_by_function(int i)
{
    gate_sink[i] = malloc(1001);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void gate_leak_kept(void)
{
    gate_sink[7] = malloc(4004);
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    for (int i = 0; i < 3; i++) {
        gate_leak_by_function(i);
    }
    gate_sink[3] = gate_leak_in_other_file();
    gate_sink[4] = gate_leak_in_other_file();
    gate_sink[5] = gate_leak_in_module();
    gate_leak_kept();
    puts("gate_leaks");
    return 0;
}
