/* SPDX-License-Identifier: MIT */
/* Symbol tables with the cases that decide which name an address gets:
 * aliases of one function with every binding, a local function nested in a
 * global one and one in a local one, sizeless assembly labels, labels
 * hidden by a sized symbol that reaches past them, a global label at an
 * address a local symbol covers, and bytes past a symbol's end. Only data
 * bytes (.skip), so it assembles for any target; nothing ever runs it.
 * tests/unit/test_symtab.c knows the offsets below. */
    .text
    .balign 4096
case_base:
    .local case_base

/* +0x000: one function under three names. */
    .globl alias_global
    .type alias_global, %function
    .weak alias_weak
    .type alias_weak, %function
    .type alias_local, %function
alias_local:
alias_weak:
alias_global:
    .skip 32
    .size alias_local, 32
    .size alias_weak, 32
    .size alias_global, 32

/* +0x020: a global function of 64 bytes with a local one of 16 inside at +16. */
    .globl outer_global
    .type outer_global, %function
    .type inner_of_global, %function
outer_global:
    .skip 16
inner_of_global:
    .skip 16
    .size inner_of_global, 16
    .skip 32
    .size outer_global, 64

/* +0x060: the same with a local outer function. */
    .type outer_local, %function
    .type inner_of_local, %function
outer_local:
    .skip 16
inner_of_local:
    .skip 16
    .size inner_of_local, 16
    .skip 32
    .size outer_local, 64

/* +0x0a0: a function of 16 bytes, then 16 bytes that no symbol covers. */
    .type short_fn, %function
short_fn:
    .skip 16
    .size short_fn, 16
    .skip 16

/* +0x0c0: a sizeless local label over 32 bytes. */
label_local:
    .skip 32

/* +0x0e0: a label at +0x0f0 inside a sized function (+0x0e0, 32 bytes) that reaches past it. */
    .type hiding_fn, %function
hiding_fn:
    .skip 16
label_hidden:
    .skip 16
    .size hiding_fn, 32
    .skip 16

/* +0x110: a global label at +0x118 inside a local function (+0x110, 32 bytes). */
    .type local_cover, %function
local_cover:
    .skip 8
    .globl global_label
global_label:
    .skip 24
    .size local_cover, 32

/* +0x130: two sizeless labels at one address, then an object symbol (not a function). */
twin_a:
twin_b:
    .skip 16
    .type some_object, %object
some_object:
    .skip 16
    .size some_object, 16
    .skip 4096 - 0x150
