#define _GNU_SOURCE
#include "CTerminalShims.h"
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#include <ncursesw/curses.h>
#include <ncursesw/term.h>

// Written once before the handlers are installed, read only by them afterwards.
static int guard_fd = -1;
static struct termios saved;
static int have_saved = 0;
static char reset_bytes[512];
static size_t reset_length = 0;

static const int interrupt_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE, SIGTRAP, SIGSYS };
#define N_INTERRUPT (sizeof interrupt_signals / sizeof interrupt_signals[0])
#define N_FATAL (sizeof fatal_signals / sizeof fatal_signals[0])
static struct sigaction previous_interrupt[N_INTERRUPT];
static struct sigaction previous_fatal[N_FATAL];
static int installed = 0;
static char alternate_stack[64 * 1024];

int CTerminalShims_guard_save(int fd) {
    if (tcgetattr(fd, &saved) != 0) return -1;
    guard_fd = fd;
    have_saved = 1;
    return 0;
}

static void append_capability(const char *name) {
    char *s = tigetstr(name);
    if (s == NULL || s == (char *)-1) return;
    size_t n = strlen(s);
    if (reset_length + n > sizeof reset_bytes) return;
    memcpy(reset_bytes + reset_length, s, n);
    reset_length += n;
}

void CTerminalShims_guard_capture_terminfo(void) {
    reset_length = 0;
    append_capability("sgr0");
    append_capability("cnorm");
    append_capability("rmkx");
    append_capability("rmcup");
}

/* Restores the saved settings and writes the prepared bytes now. Async-signal-safe. */
static void guard_restore(void) {
    if (!have_saved) return;
    int saved_errno = errno;
    size_t off = 0;
    while (off < reset_length) {
        ssize_t w = write(guard_fd, reset_bytes + off, reset_length - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        off += (size_t)w;
    }
    // The cursor to a fresh line, so the shell prompt does not land mid-screen.
    while (write(guard_fd, "\r\n", 2) < 0 && errno == EINTR) {}
    while (tcsetattr(guard_fd, TCSAFLUSH, &saved) != 0 && errno == EINTR) {}
    errno = saved_errno;
}

static void on_signal(int sig, siginfo_t *info, void *context) {
    (void)context;
    guard_restore();
    // Die of the same signal: an interrupt with its default action; a fatal signal through the
    // action found before the guard (the Swift runtime's backtracer, or the default core dump).
    struct sigaction next;
    memset(&next, 0, sizeof next);
    next.sa_handler = SIG_DFL;
    int fatal = 0;
    for (size_t i = 0; i < N_FATAL; i++) {
        if (fatal_signals[i] == sig) { next = previous_fatal[i]; fatal = 1; }
    }
    sigaction(sig, &next, NULL);
    // A real fault (not sent by kill or raise): returning runs the faulting instruction again,
    // and the next action sees the genuine fault and its context.
    if (fatal && info != NULL && info->si_code > 0) return;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
}

static void set_guard_action(struct sigaction *sa) {
    memset(sa, 0, sizeof *sa);
    sa->sa_sigaction = on_signal;
    sigfillset(&sa->sa_mask);   // nothing interrupts the restore
    sa->sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
}

int CTerminalShims_guard_install(void) {
    if (installed) return 0;
    // A stack for the handler, unless the runtime already set one (best effort: without it,
    // only a stack overflow loses the restore).
    stack_t current;
    if (sigaltstack(NULL, &current) == 0 && (current.ss_flags & SS_DISABLE)) {
        stack_t ss;
        memset(&ss, 0, sizeof ss);
        ss.ss_sp = alternate_stack;
        ss.ss_size = sizeof alternate_stack;
        sigaltstack(&ss, NULL);
    }
    struct sigaction sa;
    set_guard_action(&sa);
    for (size_t i = 0; i < N_INTERRUPT; i++) {
        if (sigaction(interrupt_signals[i], &sa, &previous_interrupt[i]) != 0) return -1;
    }
    for (size_t i = 0; i < N_FATAL; i++) {
        if (sigaction(fatal_signals[i], &sa, &previous_fatal[i]) != 0) return -1;
    }
    installed = 1;
    return 0;
}

void CTerminalShims_guard_uninstall(void) {
    if (!installed) return;
    for (size_t i = 0; i < N_INTERRUPT; i++) sigaction(interrupt_signals[i], &previous_interrupt[i], NULL);
    for (size_t i = 0; i < N_FATAL; i++) sigaction(fatal_signals[i], &previous_fatal[i], NULL);
    installed = 0;
}

void CTerminalShims_guard_hold_interrupts(int hold) {
    if (!installed) return;
    struct sigaction sa;
    if (hold) {
        memset(&sa, 0, sizeof sa);
        sigemptyset(&sa.sa_mask);
        sa.sa_handler = SIG_IGN;
    } else {
        set_guard_action(&sa);
    }
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGQUIT, &sa, NULL);
}
