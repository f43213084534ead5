// SPDX-License-Identifier: MIT
/* The help text: action.c's fixed lines and, where they leave room
 * (action_help_views), the views of views.c's table with their number
 * keys. Draws nothing. */
#define _GNU_SOURCE
#include "help.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "action.h"
#include "util.h"
#include "view.h"

/* The keys column is this wide; the text starts after it, as in every
 * line of action.c's help. */
#define KEYS_W 23

static void push(char ***lines, size_t *n, size_t *cap, char *line)
{
    xgrow((void **)lines, cap, *n + 2, sizeof **lines);
    (*lines)[(*n)++] = line;
    (*lines)[*n] = NULL;
}

/* The number keys of the views (1 to 9 and 0 reach the first ten) and their
 * names, "A, B, C", wrapped at the commas so that no line is `width`
 * columns or wider (a name longer than a line gets one of its own). */
static void push_views(char ***lines, size_t *n, size_t *cap, int width)
{
    char keys[KEYS_W] = "";
    size_t k = 0;
    for (size_t i = 0; i < view_count && i < 10; i++) {
        k += (size_t)snprintf(keys + k, sizeof keys - k, "%s%zu", i ? " " : "", (i + 1) % 10);
    }
    char buf[512];
    int len = snprintf(buf, sizeof buf, "  %-*s", KEYS_W - 2, keys);
    int empty = 1; /* no name on the line yet */
    for (size_t i = 0; i < view_count; i++) {
        const char *name = view_table[i]->help ? view_table[i]->help : view_table[i]->name;
        const char *comma = i + 1 < view_count ? "," : "";
        int add = (empty ? 0 : 1) + (int)strlen(name) + (int)strlen(comma);
        if (!empty && len + add >= width) {
            push(lines, n, cap, xstrdup(buf));
            len = snprintf(buf, sizeof buf, "%*s", KEYS_W, "");
            empty = 1;
        }
        len += snprintf(buf + len, sizeof buf - (size_t)len, "%s%s%s", empty ? "" : " ", name, comma);
        if (len >= (int)sizeof buf) {
            len = (int)sizeof buf - 1;
        }
        empty = 0;
    }
    push(lines, n, cap, xstrdup(buf));
}

char **help_new(int width)
{
    char **lines = NULL;
    size_t n = 0, cap = 0;
    const char *const *fixed = action_help();
    for (size_t i = 0; fixed[i]; i++) {
        if (fixed[i] == action_help_views) {
            push_views(&lines, &n, &cap, width);
        } else {
            push(&lines, &n, &cap, xstrdup(fixed[i]));
        }
    }
    return lines;
}

void help_free(char **lines)
{
    if (!lines) {
        return;
    }
    for (size_t i = 0; lines[i]; i++) {
        free(lines[i]);
    }
    free(lines);
}
