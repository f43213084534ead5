// SPDX-License-Identifier: MIT
/* The terminal: curses set-up and teardown, colours (none with NO_COLOR),
 * and the signal handlers that give the terminal back on every way out.
 * Strings reaching curses here are already escaped (text.c). */
#define _GNU_SOURCE
#include "crt.h"

#include <curses.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

volatile int crt_quit_signal;
int crt_has_color;
static int crt_active;
static int attrs[CRT_NCOLORS];
static SCREEN *batch_screen;
static FILE *batch_null;

int crt_check(char *buf, size_t cap)
{
    const char *term = getenv("TERM");
    if (!term || !*term || strcmp(term, "dumb") == 0) {
        snprintf(buf, cap, "cannot run on a dumb terminal (TERM=%s): use memprint for a text report",
                 term && *term ? term : "unset");
        return -1;
    }
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        snprintf(buf, cap, "standard input and output must be a terminal: use memprint for a text report");
        return -1;
    }
    return 0;
}

/* SIGINT, SIGTERM, SIGHUP: the event loop sees the flag within its
 * 250 ms tick (getch() also returns at once when interrupted) and leaves
 * through crt_done() like q. */
static void on_quit(int sig)
{
    crt_quit_signal = sig;
}

/* A crash: curses is ended first, so that the shell gets its terminal
 * back, then the signal is raised again with its default action so that
 * the exit status and core dump stay those of the crash. endwin() is not
 * async-signal-safe; on this path nothing better is left (htop does the
 * same). */
static void on_crash(int sig)
{
    if (crt_active) {
        crt_active = 0;
        endwin();
    }
    static const char msg[] = "memtui: crashed; terminal restored\n";
    if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) {
        /* Nothing to do: we are dying. */
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void set_attrs(void)
{
    attrs[CRT_NORMAL] = A_NORMAL;
    attrs[CRT_SELECTED] = A_REVERSE;
    attrs[CRT_TITLE] = A_REVERSE | A_BOLD;
    attrs[CRT_MATCH] = A_UNDERLINE | A_BOLD;
    attrs[CRT_HEAP] = A_NORMAL;
    attrs[CRT_MAPPED] = A_NORMAL;
    attrs[CRT_RSS] = A_NORMAL;
    attrs[CRT_WINDOW] = A_BOLD;
    attrs[CRT_LIVE] = A_BOLD | A_REVERSE;
    attrs[CRT_FLAME_A] = A_REVERSE;
    attrs[CRT_FLAME_B] = A_NORMAL;
}

/* Home and End as terminals send them, whatever TERM's entry says: tmux
 * and screen send \e[1~ and \e[4~ (TERM=xterm inside tmux lacks them),
 * xterm \e[H and \e[F or \eOH and \eOF. A sequence curses does not know
 * arrives as its characters, and the "4" of \e[4~ would open view 4. */
static void define_home_end(void)
{
    static const struct {
        const char *seq;
        int key;
    } seqs[] = {
        {"\033[1~", KEY_HOME}, {"\033[4~", KEY_END}, {"\033[7~", KEY_HOME}, {"\033[8~", KEY_END},
        {"\033[H", KEY_HOME},  {"\033[F", KEY_END},  {"\033OH", KEY_HOME},  {"\033OF", KEY_END},
    };
    for (size_t i = 0; i < sizeof seqs / sizeof seqs[0]; i++) {
        if (key_defined(seqs[i].seq) == 0) {
            define_key(seqs[i].seq, seqs[i].key);
        }
    }
}

void crt_init(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_quit;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = on_crash;
    sa.sa_flags = SA_RESETHAND;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGABRT, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGFPE, &sa, NULL);
    sigaction(SIGILL, &sa, NULL);

    initscr();
    crt_active = 1;
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    define_home_end();
    curs_set(0);
    set_escdelay(25);
    mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON1_DOUBLE_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
    mouseinterval(0);

    const char *nc = getenv("NO_COLOR");
    crt_has_color = has_colors() && !(nc && *nc);
    set_attrs();
    if (crt_has_color) {
        start_color();
        use_default_colors();
        init_pair(1, COLOR_BLACK, COLOR_CYAN);
        init_pair(2, COLOR_YELLOW, -1);
        init_pair(3, COLOR_GREEN, -1);
        init_pair(4, COLOR_BLUE, -1);
        init_pair(5, COLOR_MAGENTA, -1);
        init_pair(6, COLOR_BLACK, COLOR_GREEN);
        init_pair(7, COLOR_WHITE, COLOR_RED);
        init_pair(8, COLOR_BLACK, COLOR_YELLOW);
        init_pair(9, COLOR_BLACK, COLOR_RED);
        attrs[CRT_TITLE] = COLOR_PAIR(1) | A_BOLD;
        attrs[CRT_MATCH] = COLOR_PAIR(2) | A_BOLD | A_UNDERLINE;
        attrs[CRT_HEAP] = COLOR_PAIR(3);
        attrs[CRT_MAPPED] = COLOR_PAIR(4);
        attrs[CRT_RSS] = COLOR_PAIR(5);
        attrs[CRT_WINDOW] = COLOR_PAIR(6);
        attrs[CRT_LIVE] = COLOR_PAIR(7) | A_BOLD;
        attrs[CRT_FLAME_A] = COLOR_PAIR(8);
        attrs[CRT_FLAME_B] = COLOR_PAIR(9);
    }
}

int crt_batch(void)
{
    return batch_screen != NULL;
}

int crt_init_batch(int w, int h)
{
    batch_null = fopen("/dev/null", "r+");
    if (!batch_null) {
        return -1;
    }
    /* Any terminal description will do: nothing is sent anywhere. */
    batch_screen = newterm("xterm", batch_null, batch_null);
    if (!batch_screen) {
        fclose(batch_null);
        batch_null = NULL;
        return -1;
    }
    set_term(batch_screen);
    crt_active = 1;
    resize_term(h, w);
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    crt_has_color = 0;
    set_attrs();
    return 0;
}

void crt_dump(FILE *out)
{
    wchar_t *line = calloc((size_t)COLS + 1, sizeof *line);
    size_t cap = (size_t)COLS * MB_CUR_MAX + 1;
    char *text = malloc(cap);
    if (!line || !text) {
        free(line);
        free(text);
        return;
    }
    for (int y = 0; y < LINES; y++) {
        int n = mvinnwstr(y, 0, line, COLS);
        line[n > 0 ? n : 0] = 0;
        size_t len = wcstombs(text, line, cap);
        if (len == (size_t)-1) {
            len = 0;
        }
        while (len > 0 && text[len - 1] == ' ') {
            len--;
        }
        fprintf(out, "%.*s\n", (int)len, text);
    }
    free(line);
    free(text);
}

void crt_done(void)
{
    if (crt_active) {
        crt_active = 0;
        curs_set(1);
        endwin();
    }
    if (batch_screen) {
        delscreen(batch_screen);
        batch_screen = NULL;
        fclose(batch_null);
        batch_null = NULL;
    }
}

int crt_attr(enum crt_color c)
{
    return attrs[c];
}

/* Write at most w columns of s; returns the columns used. */
static int put_cols(int y, int x, const char *s, size_t bytes, int w, int attr)
{
    mbstate_t st;
    memset(&st, 0, sizeof st);
    int used = 0;
    attron(attr);
    move(y, x);
    while (bytes > 0 && used < w) {
        wchar_t wc;
        size_t len = mbrtowc(&wc, s, bytes, &st);
        if (len == 0 || len == (size_t)-1 || len == (size_t)-2) {
            /* Escaped text holds none of these; show a '?' if it happens. */
            addch('?');
            used++;
            s++;
            bytes--;
            memset(&st, 0, sizeof st);
            continue;
        }
        int cw = wcwidth(wc);
        if (cw < 0) {
            cw = 1;
            wc = L'?';
        }
        if (used + cw > w) {
            break;
        }
        addnwstr(&wc, 1);
        used += cw;
        s += len;
        bytes -= len;
    }
    attroff(attr);
    return used;
}

int crt_put(int y, int x, const char *s, int w, int attr)
{
    if (w <= 0) {
        return 0;
    }
    return put_cols(y, x, s, strlen(s), w, attr);
}

void crt_fill(int y, int x, int w, char ch, int attr)
{
    if (w <= 0) {
        return;
    }
    attron(attr);
    mvhline(y, x, (chtype)(unsigned char)ch, w);
    attroff(attr);
}

int crt_put_hl(int y, int x, const char *s, int w, int attr, const char *hl)
{
    const char *at = hl && *hl ? strcasestr(s, hl) : NULL;
    if (!at) {
        return crt_put(y, x, s, w, attr);
    }
    int used = put_cols(y, x, s, (size_t)(at - s), w, attr);
    used += put_cols(y, x + used, at, strlen(hl), w - used, attr | crt_attr(CRT_MATCH));
    const char *rest = at + strlen(hl);
    used += put_cols(y, x + used, rest, strlen(rest), w - used, attr);
    return used;
}

/* One character of s (at most `bytes`): its length and columns; a byte
 * that is no character counts as one of one column, drawn '?'. */
static size_t char_at(const char *s, size_t bytes, wchar_t *wc, int *cols)
{
    mbstate_t st;
    memset(&st, 0, sizeof st);
    size_t len = mbrtowc(wc, s, bytes, &st);
    if (len == 0 || len == (size_t)-1 || len == (size_t)-2) {
        *wc = L'?';
        *cols = 1;
        return 1;
    }
    *cols = wcwidth(*wc);
    if (*cols < 0) {
        *wc = L'?';
        *cols = 1;
    }
    return len;
}

int crt_put_name(int y, int x, const char *s, int skip, int w, int attr, const char *hl, const char *more)
{
    if (w <= 0) {
        return 0;
    }
    size_t n = strlen(s);
    int total = 0;
    wchar_t wc;
    int cw;
    for (size_t i = 0; i < n;) {
        i += char_at(s + i, n - i, &wc, &cw);
        total += cw;
    }
    const char *at = hl && *hl ? strcasestr(s, hl) : NULL;
    size_t hl_from = at ? (size_t)(at - s) : n, hl_to = at ? hl_from + strlen(hl) : n;
    int cut_left = skip > 0 && total > 0;
    int cut_right = total - skip > w;
    int room = w - cut_right;
    int used = 0, col = 0;
    move(y, x);
    if (cut_left) {
        used += put_cols(y, x, more, strlen(more), 1, attr);
    }
    for (size_t i = 0; i < n && used < room;) {
        size_t len = char_at(s + i, n - i, &wc, &cw);
        int start = col;
        col += cw;
        if (start < skip + cut_left) {
            i += len;
            continue;
        }
        if (used + cw > room) {
            break;
        }
        int a = i >= hl_from && i < hl_to ? attr | crt_attr(CRT_MATCH) : attr;
        attron(a);
        mvaddnwstr(y, x + used, &wc, 1);
        attroff(a);
        used += cw;
        i += len;
    }
    if (cut_right && used < w) {
        used += put_cols(y, x + used, more, strlen(more), 1, attr);
    }
    return used;
}
