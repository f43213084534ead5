// SPDX-License-Identifier: MIT
/* A program with a function whose symbol holds terminal escapes (an OSC
 * title ending in BEL, a clear screen), which allocates 10001 bytes:
 * tests/integration/test_hostile.py compiles it (under a file name that
 * holds an escape too), records it and checks that memrec's summary and
 * memprint's report show the names escaped (issue 10 item 6). The function
 * is written in assembly: no C name can hold ESC. */
#include <stdio.h>
#include <stdlib.h>

__asm__(".text\n"
        ".globl \"evil\x1b]0;pwned\x07\x1b[2J\"\n"
        ".type \"evil\x1b]0;pwned\x07\x1b[2J\", @function\n"
        "\"evil\x1b]0;pwned\x07\x1b[2J\":\n"
        ".cfi_startproc\n"
        "push %rbp\n.cfi_def_cfa_offset 16\n.cfi_offset %rbp, -16\n"
        "mov %rsp, %rbp\n.cfi_def_cfa_register %rbp\n"
        "mov $10001, %edi\n"
        "call malloc@PLT\n"
        "pop %rbp\n.cfi_def_cfa %rsp, 8\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size \"evil\x1b]0;pwned\x07\x1b[2J\", .-\"evil\x1b]0;pwned\x07\x1b[2J\"\n");
extern void *evil(void) __asm__("\"evil\x1b]0;pwned\x07\x1b[2J\"") __attribute__((visibility("hidden")));
int main(void)
{
    void *p = evil();
    printf("%s\n", p != NULL ? "allocated" : "failed");
    return 0;
}
