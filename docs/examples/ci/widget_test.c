/* SPDX-License-Identifier: MIT */
/* The unit test of widget.c: 100 widgets made, summed and freed. */
#include <stdio.h>

#include "widget.h"

int main(void)
{
    for (size_t i = 1; i <= 100; i++) {
        struct widget *w = widget_new("test", i);
        if (!w || widget_sum(w) != i * (i - 1) / 2) {
            printf("widget_sum is wrong for %zu values\n", i);
            return 1;
        }
#ifdef WIDGET_LEAK
        if (i == 50) {
            continue; /* the bug: widget 50 is never freed */
        }
#endif
        widget_free(w);
    }
    printf("widget: all tests passed\n");
    return 0;
}
