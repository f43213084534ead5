// SPDX-License-Identifier: MIT
/* The caller of hostile.c's function (see there): one leaked malloc(7777). */
#include <stdlib.h>

void *hostile_alloc(size_t n);

static void *volatile keep;

int main(void)
{
    keep = hostile_alloc(7777);
    return 0;
}
