// SPDX-License-Identifier: MIT
/* libidlector.so, for tests/progs/idle.c's "dlopen" mode: its constructor
 * blocks reading one byte from stdin, so the program stays inside dlopen
 * (holding the loader's lock) until the test writes that byte. */
#include <unistd.h>

__attribute__((constructor)) static void wait_for_input(void)
{
    char c;
    if (read(0, &c, 1) < 0) {
        _exit(5);
    }
}
