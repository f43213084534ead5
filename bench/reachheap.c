// SPDX-License-Identifier: MIT
/* reachheap: a heap of N live blocks at the end (default 1,000,000, 48
 * bytes each) for the cost of memrec's reachability scan
 * (docs/performance.md, "Reachability at the end"): half on a list held
 * by a global (reachable), the other half on lists of 1000 whose heads
 * are dropped (unreachable: one direct block per list, the rest
 * indirect). Quiet, exit 0.
 * Usage: reachheap [blocks] */
#include <stdlib.h>

struct node {
    struct node *next;
    long pad[5];
};

/* Globals, so that the compiler keeps every store of a link: through a
 * local it drops the stores nothing reads. */
struct node *volatile kept;
struct node *volatile lost;

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    for (long i = 0; i < n / 2; i++) {
        struct node *x = calloc(1, sizeof *x);
        x->next = kept;
        kept = x;
    }
    for (long i = 0; i < n - n / 2; i++) {
        if (i % 1000 == 0) {
            lost = NULL;
        }
        struct node *x = calloc(1, sizeof *x);
        x->next = lost;
        lost = x;
    }
    lost = NULL;
    return 0;
}
