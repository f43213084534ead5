// SPDX-License-Identifier: MIT
/* The figure columns of the tree rows (columns.h). */
#define _GNU_SOURCE
#include "columns.h"

#include <stdio.h>
#include <string.h>

static const char *const short_names[COST_NTYPES] = {"calls",  "temp", "peak",   "leaked", "allocated",
                                                     "mapped", "time", "growth", "unreach"};

/* Whether cost c has a column of its own with all costs shown. */
static int shown(const struct data *d, enum cost_type c)
{
    if (!cost_recorded(&d->m->header, c)) {
        return 0;
    }
    const struct calltree_node *root = calltree_node(d->tree, CALLTREE_TOP_DOWN, 0);
    /* Mapped memory and growth only where there is some. */
    return (c != COST_MAPPED && c != COST_GROWTH && c != COST_UNREACHABLE) || root->incl.v[c] > 0;
}

/* A column as wide as its name (and its mark) or the root's figure needs. */
static int width_of(const struct data *d, enum cost_type c)
{
    const struct calltree_node *root = calltree_node(d->tree, CALLTREE_TOP_DOWN, 0);
    int digits = snprintf(NULL, 0, "%llu", (unsigned long long)root->incl.v[c]);
    int name = (int)strlen(short_names[c]) + 1; /* "*": the cost in use */
    return digits > name ? digits : name;
}

int columns_header(const struct data *d, char *buf, size_t cap)
{
    if (!d->all_costs) {
        return snprintf(buf, cap, "%14s %14s %7s  ", "inclusive", "self", "share");
    }
    int at = 0;
    buf[0] = 0;
    for (int c = 0; c < COST_NTYPES; c++) {
        if (!shown(d, (enum cost_type)c) || (size_t)at >= cap) {
            continue;
        }
        char name[16];
        snprintf(name, sizeof name, "%s%s", short_names[c], c == (int)d->cost ? "*" : "");
        at += snprintf(buf + at, cap - (size_t)at, "%*s ", width_of(d, (enum cost_type)c), name);
    }
    if ((size_t)at + 1 < cap) {
        buf[at++] = ' ';
        buf[at] = 0;
    }
    return at;
}

/* The self column. Top-down: the stacks that end at the node. Bottom-up:
 * a site's row is what its function allocated itself, all of the row's
 * cost (the node's own self, the stacks that start there, is 0 on most
 * sites); a caller's row keeps the stacks whose outermost frame is there
 * (main, or where a stack deeper than CALLTREE_MAX_DEPTH was cut). */
static uint64_t row_self(enum calltree_orient o, const struct calltree_node *n, enum cost_type c)
{
    if (o == CALLTREE_BOTTOM_UP && n->depth == 1) {
        return n->incl.v[c];
    }
    return n->self.v[c];
}

void columns_row(const struct data *d, enum calltree_orient o, const struct calltree_node *n, char *buf, size_t cap)
{
    if (!d->all_costs) {
        uint64_t total = data_total(d);
        uint64_t v = n->incl.v[d->cost];
        double share = total ? 100.0 * (double)v / (double)total : 0.0;
        snprintf(buf, cap, "%14llu %14llu %6.2f%%  ", (unsigned long long)v,
                 (unsigned long long)row_self(o, n, d->cost), share);
        return;
    }
    int at = 0;
    buf[0] = 0;
    for (int c = 0; c < COST_NTYPES; c++) {
        if (!shown(d, (enum cost_type)c) || (size_t)at >= cap) {
            continue;
        }
        at += snprintf(buf + at, cap - (size_t)at, "%*llu ", width_of(d, (enum cost_type)c),
                       (unsigned long long)n->incl.v[c]);
    }
    if ((size_t)at + 1 < cap) {
        buf[at++] = ' ';
        buf[at] = 0;
    }
}
