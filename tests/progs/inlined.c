// SPDX-License-Identifier: MIT
// clang-format off
// (line numbers in this file are test expectations)
/*
 * Target program: the malloc call sits in an always_inline function, so
 * with -O2 -g the report must show an inlined frame with its own file:line.
 * Single-threaded, no stdio, exit 0.
 *
 * make_block() (always_inline) is inlined into two noinline functions:
 *   build_table(10001): its block is kept to the end: the leak
 *   build_index(20001): its block is freed by main right away: a temporary
 *
 * Expected (memrec definitions): allocations 2, temporary 1, peak 30002,
 * leaked 10001 bytes in 1 block, allocated in total 30002 bytes.
 *
 * Expected stack of the leak, innermost first (lines carry marker comments,
 * so a test finds them with grep -n on the marker in its comment form):
 *   make_block   inlined.c at LINE_INLINE_ALLOC   (inlined frame)
 *   build_table  inlined.c at LINE_CALL_TABLE     (call site of the inlined call)
 *   main         inlined.c at LINE_MAIN_TABLE
 * and of the temporary: make_block at LINE_INLINE_ALLOC, build_index at
 * LINE_CALL_INDEX, main at LINE_MAIN_INDEX.
 */
#include <stdlib.h>
#include <string.h>

static void *volatile leaked_block;

static inline __attribute__((always_inline)) char *make_block(size_t n)
{
    char *p = malloc(n); /* LINE_INLINE_ALLOC */
    if (p) {
        memset(p, 0x5a, 16);
    }
    return p;
}

/* Both callers have external linkage so GCC does not turn them into
 * ".constprop" clones: the symbol names stay build_table and build_index.
 * The stores after make_block() keep its malloc from being the function's
 * last call, so it is never turned into a tail call that would drop the
 * caller's frame from the stack. */
char *build_table(size_t n);
char *build_index(size_t n);

__attribute__((noinline)) char *build_table(size_t n)
{
    char *p = make_block(n); /* LINE_CALL_TABLE */
    if (p) {
        p[n - 1] = 't';
    }
    return p;
}

__attribute__((noinline)) char *build_index(size_t n)
{
    char *p = make_block(n); /* LINE_CALL_INDEX */
    if (p) {
        p[n - 1] = 'i';
    }
    return p;
}

int main(void)
{
    char *table = build_table(10001); /* LINE_MAIN_TABLE */
    char *index_block = build_index(20001); /* LINE_MAIN_INDEX */
    if (!table || !index_block) {
        return 1;
    }
    __asm__ volatile("" : : "r"(index_block) : "memory");
    free(index_block);
    leaked_block = table;
    return 0;
}
