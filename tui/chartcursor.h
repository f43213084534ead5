// SPDX-License-Identifier: MIT
/* The column cursor of the time charts (Over time, Stacked): which time a
 * column stands for, the moves the keys make, and the moment the live
 * list opens at. One place, so that the two charts move and read alike. */
#ifndef CHARTCURSOR_H
#define CHARTCURSOR_H

#include <stdint.h>

#include "action.h"

struct livelist;

/** Columns left of a chart's first column: its byte axis and the axis line. */
#define CHART_AXIS_W 12

/** The time at the left edge of column `c` of `cw` columns over [0, end]. */
uint64_t chart_col_ms(int c, int cw, uint64_t end);
/** Move `*col` by action `a` (arrows one column, pages ten, Home, End),
 * kept within the `cw` columns. Returns 1 when `a` was a move, else 0
 * (nothing changed). */
int chart_cursor_move(int *col, int cw, enum action a);
/** The moment the live list of the cursor's column opens at: the end of
 * the column, the last column through the end of the run (`end_ms` + 1). */
uint64_t chart_live_ms(int col, int cw, uint64_t end_ms);
/** A click at screen (`line`, `x`) on a chart view: in its live list when
 * that is open, else on the chart column under x, stored in `*col` (the
 * next draw keeps it within the chart). */
void chart_click(struct livelist *live, int *col, int line, int x);

#endif
