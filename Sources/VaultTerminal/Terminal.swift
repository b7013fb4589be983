internal import CNcurses
internal import CTerminalShims
#if canImport(Glibc)
import Glibc
#endif

/// The terminal as one full screen (ncurses), for interactive programs such as `vault browse`.
///
/// `start` takes the terminal over (alternate screen, no echo, keys one at a time); `stop` gives
/// it back. In between, a guard restores the terminal if the process is interrupted (SIGINT,
/// SIGTERM, SIGHUP, SIGQUIT) or crashes (SIGSEGV, SIGILL, SIGABRT, SIGBUS, …), then lets the
/// signal take its course: the shell never inherits a terminal left without echo.
///
/// Drawing goes to an off-screen copy; `refresh` sends the differences. Not thread-safe: one
/// thread owns the terminal.
public final class Terminal {
    /// Rows and columns of the screen.
    public struct Size: Equatable, Sendable {
        public var rows: Int
        public var columns: Int
        public init(rows: Int, columns: Int) { self.rows = rows; self.columns = columns }
    }

    private var screen: OpaquePointer?
    private let window: UnsafeMutablePointer<WINDOW>
    let styles: StyleTable
    private var cursor: (row: Int, column: Int)?

    /// Sets the C library's locale from the environment and makes sure its character type is
    /// UTF-8 (falling back to `C.UTF-8`), which wide-character drawing and `CellText` need.
    /// Returns whether a UTF-8 character type is in effect. The corresponding C function is `setlocale`.
    @discardableResult
    public static func adoptUTF8Locale() -> Bool {
        setlocale(LC_ALL, "")
        if isUTF8() { return true }
        setlocale(LC_CTYPE, "C.UTF-8")
        return isUTF8()
    }

    private static func isUTF8() -> Bool {
        guard let cs = CNcurses_codeset() else { return false }
        let name = String(cString: cs).uppercased()
        return name == "UTF-8" || name == "UTF8"
    }

    /// Takes the terminal over. `colors`: use colour where the terminal has it (pass false for
    /// `NO_COLOR`); without colour, styles are bold, dim and reverse video only.
    /// - Throws: `TerminalError` when standard input or output is not a terminal, or the
    ///   terminal type cannot address the cursor.
    public static func start(colors: Bool) throws -> Terminal {
        guard isatty(0) == 1, isatty(1) == 1 else {
            throw TerminalError(.notATerminal, "standard input and output must be a terminal")
        }
        adoptUTF8Locale()
        // Save the settings and guard them before ncurses changes anything.
        guard CTerminalShims_guard_save(1) == 0, CTerminalShims_guard_install() == 0 else {
            CTerminalShims_guard_uninstall()
            throw TerminalError(.notATerminal, "cannot read the terminal's settings: \(String(cString: strerror(errno)))")
        }
        guard let out = fdopen(1, "w"), let input = fdopen(0, "r"), let screen = newterm(nil, out, input) else {
            CTerminalShims_guard_uninstall()
            let term = getenv("TERM").map { String(cString: $0) } ?? "(unset)"
            throw TerminalError(.unsupported, "the terminal type TERM=\(term) is unknown here")
        }
        set_term(screen)
        let cup = tigetstr("cup")
        if cup == nil || Int(bitPattern: cup) == -1 {
            endwin(); delscreen(screen); CTerminalShims_guard_uninstall()
            let term = getenv("TERM").map { String(cString: $0) } ?? "(unset)"
            throw TerminalError(.unsupported, "the terminal type TERM=\(term) cannot move the cursor, which a full-screen view needs")
        }
        CTerminalShims_guard_capture_terminfo()
        return Terminal(screen: screen, colors: colors)
    }

    private init(screen: OpaquePointer, colors: Bool) {
        self.screen = screen
        window = CNcurses_stdscr()
        cbreak()                  // keys one at a time; Ctrl-C still interrupts
        noecho()
        keypad(window, true)      // arrows and function keys as single codes
        set_escdelay(25)          // a lone Escape is not held back a second
        curs_set(0)
        styles = StyleTable(colors: colors && has_colors())
    }

    deinit { stop() }

    /// Gives the terminal back (leaves the alternate screen, echo and line editing on again).
    /// Safe to call twice.
    public func stop() {
        guard let s = screen else { return }
        curs_set(1)
        endwin()
        delscreen(s)
        screen = nil
        CTerminalShims_guard_uninstall()
    }

    /// The current size (updated when `read` returns `.resize`).
    public var size: Size { Size(rows: Int(getmaxy(window)), columns: Int(getmaxx(window))) }

    /// Clears the off-screen copy (the screen itself changes at `refresh`).
    public func clear() { werase(window) }

    /// Repaints every cell at the next `refresh` (after another program used the screen, or Ctrl-L).
    public func repaintAll() { clearok(CNcurses_curscr(), true) }

    /// Shows the cursor at `row`, `column` after the next `refresh` (for a line editor); nil hides it.
    public func placeCursor(_ at: (row: Int, column: Int)?) { cursor = at }

    /// Sends what was drawn to the screen.
    public func refresh() {
        if let c = cursor {
            curs_set(1)
            wmove(window, Int32(c.row), Int32(c.column))
        } else {
            curs_set(0)
        }
        wrefresh(window)
    }

    /// Rings the bell (or flashes).
    public func beep() { _ = CNcurses.beep() }

    /// Leaves full-screen mode while `body` runs another program on the terminal (a pager), then
    /// takes the screen back and repaints it. SIGINT and SIGQUIT are ignored meanwhile: the
    /// terminal sends them to the whole foreground group, and the program handles them itself.
    public func runOutside<T>(_ body: () throws -> T) rethrows -> T {
        def_prog_mode()
        endwin()
        CTerminalShims_guard_hold_interrupts(1)
        defer {
            CTerminalShims_guard_hold_interrupts(0)
            reset_prog_mode()
            repaintAll()
            wrefresh(window)
        }
        return try body()
    }

    /// Draws `text` at `row`, `column`, fitted into exactly `width` cells (clipped, with `…`
    /// when `ellipsis`; padded per `align`) in `style`, in reverse video when `highlight`.
    /// Anything off the screen is left out.
    public func draw(_ text: String, row: Int, column: Int, width: Int, style: Style = .normal,
                     highlight: Bool = false, align: CellText.Alignment = .left, ellipsis: Bool = true) {
        let s = size
        guard row >= 0, row < s.rows, column >= 0, column < s.columns else { return }
        let w = min(width, s.columns - column)
        guard w > 0 else { return }
        var chars = CellText.fit(text, width: w, align: align, ellipsis: ellipsis).unicodeScalars.map { wchar_t(bitPattern: $0.value) }
        let (attr, pair) = styles.attributes(style, highlight: highlight)
        wattr_set(window, attr, pair, nil)
        // The corresponding C function is `mvwaddnwstr`; writing the bottom-right cell reports
        // an error (the cursor cannot advance) although the character is drawn.
        _ = mvwaddnwstr(window, Int32(row), Int32(column), &chars, Int32(chars.count))
        wattr_set(window, CNcurses_attr_normal(), 0, nil)
    }
}
