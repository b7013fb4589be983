#pragma once
// ncurses (wide-character build) for the `VaultTerminal` wrapper. Swift imports the functions but
// not the function-like macros (`COLOR_PAIR`, the `A_*` attributes), so these `static inline`
// helpers (prefix `CNcurses_`) give them typed, fixed-argument forms. Variadic ncurses calls
// (`printw`, `mvprintw`, `wprintw`) are never used: text goes through `mvwaddnwstr`.
#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#include <locale.h>
#include <langinfo.h>
#include <ncursesw/curses.h>
#include <ncursesw/term.h>

/// `COLOR_PAIR(n)`: the attribute bits selecting colour pair `n`.
/// `A_NORMAL`.
static inline attr_t CNcurses_attr_normal(void) { return (attr_t)A_NORMAL; }
/// `A_BOLD`.
static inline attr_t CNcurses_attr_bold(void) { return (attr_t)A_BOLD; }
/// `A_REVERSE`.
static inline attr_t CNcurses_attr_reverse(void) { return (attr_t)A_REVERSE; }
/// `A_DIM`.
static inline attr_t CNcurses_attr_dim(void) { return (attr_t)A_DIM; }
/// `A_UNDERLINE`.
/// `stdscr` (a variable in this build, a function in reentrant ones).
static inline WINDOW *CNcurses_stdscr(void) { return stdscr; }
/// `curscr`, for forcing a full repaint with `clearok`.
static inline WINDOW *CNcurses_curscr(void) { return curscr; }
/// `nl_langinfo(CODESET)`: the character set of the current `LC_CTYPE` locale.
static inline const char *CNcurses_codeset(void) { return nl_langinfo(CODESET); }

/// The C library's `wcwidth` (declared by <wchar.h> only under _XOPEN_SOURCE, which SwiftPM
/// does not pass): the cells a character takes on a terminal, or -1 when it is not printable.
extern int wcwidth(wchar_t c);
static inline int CNcurses_wcwidth(wchar_t c) { return wcwidth(c); }
