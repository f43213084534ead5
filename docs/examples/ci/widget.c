/* SPDX-License-Identifier: MIT */
#include "widget.h"

#include <stdlib.h>
#include <string.h>

struct widget {
    char *name;
    size_t n;
    size_t *values;
};

struct widget *widget_new(const char *name, size_t n)
{
    struct widget *w = malloc(sizeof *w);
    if (!w) {
        return NULL;
    }
    w->name = strdup(name);
    w->n = n;
    w->values = calloc(n, sizeof *w->values);
    for (size_t i = 0; i < n; i++) {
        w->values[i] = i;
    }
    return w;
}

size_t widget_sum(const struct widget *w)
{
    size_t s = 0;
    for (size_t i = 0; i < w->n; i++) {
        s += w->values[i];
    }
    return s;
}

void widget_free(struct widget *w)
{
    if (!w) {
        return;
    }
    free(w->values);
    free(w->name);
    free(w);
}
