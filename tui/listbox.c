// SPDX-License-Identifier: MIT
/* The list widget of the list views: rows, selection, scrolling. It knows
 * no view and draws nothing. */
#include "listbox.h"

#include <stdlib.h>

#include "util.h"

void listbox_push(struct listbox *l, uint32_t id, uint32_t depth, int kind)
{
    if (l->n == l->cap) {
        size_t cap = l->cap;
        xgrow((void **)&l->rows, &cap, (size_t)l->n + 1, sizeof *l->rows);
        l->cap = (uint32_t)cap;
    }
    l->rows[l->n].id = id;
    l->rows[l->n].depth = depth;
    l->rows[l->n].kind = kind;
    l->n++;
}

void listbox_clear(struct listbox *l)
{
    l->n = 0;
}

int listbox_move(struct listbox *l, enum action a, int page)
{
    if (l->n == 0) {
        return 0;
    }
    if (page < 1) {
        page = 1;
    }
    int64_t sel = l->sel;
    switch (a) {
    case ACT_UP: sel--; break;
    case ACT_DOWN: sel++; break;
    case ACT_PGUP: sel -= page; break;
    case ACT_PGDN: sel += page; break;
    case ACT_HOME: sel = 0; break;
    case ACT_END: sel = l->n - 1; break;
    default: return 0;
    }
    if (sel < 0) {
        sel = 0;
    }
    if (sel >= l->n) {
        sel = l->n - 1;
    }
    l->sel = (uint32_t)sel;
    return 1;
}

void listbox_settle(struct listbox *l, int dir, int (*ok)(const struct row *r))
{
    if (l->n == 0) {
        return;
    }
    if (l->sel >= l->n) {
        l->sel = l->n - 1;
    }
    int64_t found = -1;
    for (int pass = 0; pass < 2 && found < 0; pass++) {
        int step = pass == 0 ? dir : -dir;
        for (int64_t i = l->sel; i >= 0 && i < l->n; i += step) {
            if (ok(&l->rows[i])) {
                found = i;
                break;
            }
        }
    }
    if (found < 0) {
        return;
    }
    l->sel = (uint32_t)found;
    for (uint32_t i = 0; i < l->sel; i++) {
        if (ok(&l->rows[i])) {
            return;
        }
    }
    l->top = 0;
}

int listbox_dir(enum action a)
{
    return a == ACT_UP || a == ACT_PGUP || a == ACT_END ? -1 : 1;
}

void listbox_scroll(struct listbox *l, int h)
{
    if (h < 1) {
        h = 1;
    }
    if (l->n == 0) {
        l->sel = l->top = 0;
        return;
    }
    if (l->sel >= l->n) {
        l->sel = l->n - 1;
    }
    if (l->sel < l->top) {
        l->top = l->sel;
    }
    if (l->sel >= l->top + (uint32_t)h) {
        l->top = l->sel - (uint32_t)h + 1;
    }
    /* After a resize to a taller screen, show as much as fits. */
    if (l->top > 0 && l->n - l->top < (uint32_t)h) {
        l->top = l->n > (uint32_t)h ? l->n - (uint32_t)h : 0;
    }
}

void listbox_release(struct listbox *l)
{
    free(l->rows);
    *l = (struct listbox)LISTBOX_INIT;
}

void listbox_click(struct listbox *l, int line)
{
    uint32_t row = l->top + (uint32_t)(line - 1);
    if (line > 0 && row < l->n) {
        l->sel = row;
    }
}
