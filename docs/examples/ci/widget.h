/* SPDX-License-Identifier: MIT */
/* A widget: a name and a list of numbers. */
#ifndef WIDGET_H
#define WIDGET_H

#include <stddef.h>

struct widget;

struct widget *widget_new(const char *name, size_t n);
size_t widget_sum(const struct widget *w);
void widget_free(struct widget *w);

#endif
