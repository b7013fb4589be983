#pragma once
// The terminal guard (prefix `CTerminalShims_`): puts the terminal back the way it was found when the
// process is interrupted, killed or crashes while a full-screen program owns it. Signal handlers
// must be async-signal-safe, so this is C: the handler only calls tcsetattr(3) and write(2) on
// settings and bytes prepared in advance, then re-raises the signal with its default action.
#include <stddef.h>

/// Saves the settings of terminal `fd` (call before curses changes them). Returns 0, or -1 with
/// errno set when `fd` is not a terminal.
int CTerminalShims_guard_save(int fd);

/// Prepares the bytes the guard writes after restoring the settings: from the loaded terminfo
/// entry, attributes off (`sgr0`), the cursor shown (`cnorm`), keypad transmit off (`rmkx`) and
/// the alternate screen left (`rmcup`). Call after curses set up the terminal.
void CTerminalShims_guard_capture_terminfo(void);

/// Installs the guard for SIGINT, SIGTERM, SIGHUP and SIGQUIT, and for the fatal signals
/// (SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE, SIGTRAP, SIGSYS: a Swift trap is SIGILL or
/// SIGTRAP): restore the terminal, then die of the same signal. Returns 0, or -1 with errno set.
int CTerminalShims_guard_install(void);

/// Puts back the signal actions found by `CTerminalShims_guard_install` (after a normal `endwin`).
void CTerminalShims_guard_uninstall(void);

/// While a child program (a pager) owns the terminal: ignore SIGINT and SIGQUIT, which the
/// terminal sends to the whole foreground group and the child handles itself (`hold` = 1);
/// guard them again (`hold` = 0).
void CTerminalShims_guard_hold_interrupts(int hold);

