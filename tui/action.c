// SPDX-License-Identifier: MIT
/* Keys to actions in one table, and next to it the help screen's text,
 * which must name every key of the table (a key added here goes there);
 * the views and their number keys come from the table of views, put in
 * by help.c where action_help_views stands. */
#include "action.h"

#include <curses.h>

struct binding {
    int key;
    enum action action;
};

static const struct binding bindings[] = {
    {'q', ACT_QUIT},         {KEY_UP, ACT_UP},        {'k', ACT_UP},           {KEY_DOWN, ACT_DOWN},
    {'j', ACT_DOWN},         {KEY_PPAGE, ACT_PGUP},   {KEY_NPAGE, ACT_PGDN},   {' ', ACT_PGDN},
    {KEY_HOME, ACT_HOME},    {'g', ACT_HOME},         {KEY_END, ACT_END},      {'G', ACT_END},
    {'\r', ACT_EXPAND},      {'\n', ACT_EXPAND},      {KEY_ENTER, ACT_EXPAND}, {KEY_RIGHT, ACT_RIGHT},
    {'l', ACT_RIGHT},        {KEY_LEFT, ACT_LEFT},    {'h', ACT_LEFT},         {KEY_BACKSPACE, ACT_BACK},
    {127, ACT_BACK},         {8, ACT_BACK},           {'\t', ACT_NEXT_VIEW},   {KEY_BTAB, ACT_PREV_VIEW},
    {'1', ACT_VIEW1},        {'2', ACT_VIEW2},        {'3', ACT_VIEW3},        {'4', ACT_VIEW4},
    {'5', ACT_VIEW5},        {'6', ACT_VIEW6},        {'7', ACT_VIEW7},        {'8', ACT_VIEW8},
    {'9', ACT_VIEW9},        {'0', ACT_VIEW10},       {'c', ACT_COST_NEXT},    {'C', ACT_COST_PREV},
    {'s', ACT_SORT_SELF},    {'/', ACT_SEARCH},       {'n', ACT_SEARCH_NEXT},  {'N', ACT_SEARCH_PREV},
    {'?', ACT_HELP},         {KEY_F(1), ACT_HELP},    {'d', ACT_DETAIL},       {'m', ACT_MARK},
    {'w', ACT_WINDOW_ENTER}, {'x', ACT_WINDOW_CLEAR}, {'v', ACT_SERIES},       {'r', ACT_REFRESH},
    {'*', ACT_EXPAND_ALL},   {'<', ACT_SCROLL_LEFT},  {'>', ACT_SCROLL_RIGHT}, {'a', ACT_LIVE_AT},
    {'F', ACT_FILTER},       {'W', ACT_FOLD},         {'=', ACT_COLUMNS},      {'e', ACT_EDIT},
};

enum action action_of_key(int key)
{
    for (size_t i = 0; i < sizeof bindings / sizeof bindings[0]; i++) {
        if (bindings[i].key == key) {
            return bindings[i].action;
        }
    }
    return ACT_NONE;
}

const char action_help_views[] = "(the views)";

static const char *const help[] = {
    "Views",
    "  Tab / Shift+Tab      next / previous view",
    action_help_views,
    "Moving",
    "  Up Down, k j         previous / next row",
    "  PgUp PgDn, Space     page up / down",
    "  Home End, g G        first / last row",
    "  Enter                expand or collapse; Summary: open in Bottom-up;",
    "                       Functions: callers and callees; Flame graph: zoom in",
    "  Right, l             expand; Flame graph: next frame on the row",
    "  Left, h              collapse, or go to the parent;",
    "                       Flame graph: previous frame on the row",
    "  Backspace            Flame graph: zoom out; Functions: back to the",
    "                       function shown before, then to the list",
    "  *                    expand the selected subtree (Top-down, Bottom-up)",
    "  < >                  Top-down, Bottom-up: scroll the names left / right;",
    "                       Alloc time: scroll a table wider than the screen",
    "                       (deep rows scroll by themselves to the selection)",
    "  mouse click, wheel   select a row, a frame or a view tab; scroll",
    "Figures",
    "  c / C                next / previous cost: calls, temporary, peak,",
    "                       leaked, allocated, mapped (when the run mapped",
    "                       memory), time (in the allocator; recordings made",
    "                       with memrec --time)",
    "  s                    Functions: sort by self or by inclusive cost",
    "  d                    detail of the selected frame (file:line, source)",
    "Search",
    "  /                    search function names (Enter: search, Esc: cancel)",
    "  n / N                next / previous match",
    "Time window (Over time view)",
    "  Left Right           move the cursor over the chart",
    "  m                    mark the window's start, then its end: every view",
    "                       is restricted to it",
    "  w                    type a window in milliseconds, as FROM-TO",
    "  x                    clear the window",
    "  v                    chart heap, mapped memory or RSS; Stacked: heap,",
    "                       allocations or temporary allocations",
    "  a                    Over time, Stacked: the stacks live at the cursor",
    "                       (memprint --at); Backspace or Left: back",
    "Filters and tools",
    "  e                    open the selected frame's file at its line in",
    "                       $VISUAL or $EDITOR (vi without either)",
    "  =                    Top-down, Bottom-up: every cost as a column",
    "  F                    filter every view: [function|file|module] [!]REGEX",
    "                       (! drops the matching stacks) or thread N;",
    "                       an empty line clears it",
    "  W                    fold allocator wrappers (xmalloc, g_malloc, operator",
    "                       new...) into their callers, and REGEX's functions",
    "                       too when one is typed; - stops folding",
    "Other",
    "  r                    reload a recording that is still being written",
    "                       (also by itself; in the background, keys go on)",
    "  ?, F1                this help (arrows, PgUp PgDn, Home End scroll it;",
    "                       any other key closes it)",
    "  q                    quit (Ctrl+C too)",
    NULL,
};

const char *const *action_help(void)
{
    return help;
}
