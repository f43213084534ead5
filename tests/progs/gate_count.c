// SPDX-License-Identifier: MIT
/* gate_count N: N allocations of 1001 bytes, all live at once, then all
 * freed. Known by construction (it calls nothing else that allocates; the
 * pointers live in a static array): allocations = N, frees = N,
 * peak_heap_bytes = 1001 N, leaked_bytes = 0. Two runs with different N
 * are the baseline and the new recording of the CI gate's tests
 * (test_gate.py). */
#include <stdlib.h>

#define GATE_MAX 100000

static void *blocks[GATE_MAX];

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 100;
    if (n < 1 || n > GATE_MAX) {
        return 2;
    }
    for (long i = 0; i < n; i++) {
        blocks[i] = malloc(1001);
        if (!blocks[i]) {
            return 1;
        }
    }
    for (long i = 0; i < n; i++) {
        free(blocks[i]);
    }
    return 0;
}
