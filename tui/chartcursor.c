// SPDX-License-Identifier: MIT
/* The time charts' column cursor (chartcursor.h). */
#include "chartcursor.h"

#include "livelist.h"

uint64_t chart_col_ms(int c, int cw, uint64_t end)
{
    return (uint64_t)((unsigned __int128)end * (unsigned)c / (unsigned)cw);
}

int chart_cursor_move(int *col, int cw, enum action a)
{
    switch (a) {
    case ACT_LEFT:
    case ACT_UP: --*col; break;
    case ACT_RIGHT:
    case ACT_DOWN: ++*col; break;
    case ACT_PGUP: *col -= 10; break;
    case ACT_PGDN: *col += 10; break;
    case ACT_HOME: *col = 0; break;
    case ACT_END: *col = cw > 0 ? cw - 1 : 0; break;
    default: return 0;
    }
    if (*col < 0) {
        *col = 0;
    }
    if (cw > 0 && *col >= cw) {
        *col = cw - 1;
    }
    return 1;
}

uint64_t chart_live_ms(int col, int cw, uint64_t end_ms)
{
    return col + 1 >= cw ? end_ms + 1 : chart_col_ms(col + 1, cw, end_ms);
}

void chart_click(struct livelist *live, int *col, int line, int x)
{
    if (live->open) {
        livelist_click(live, line);
        return;
    }
    *col = x - (CHART_AXIS_W + 1);
}
