internal import CNcurses

extension Terminal {
    /// One key press, a resize, or nothing before the timeout.
    public enum Input: Equatable, Sendable {
        /// A printable character (a letter, digit, space, or any Unicode character typed).
        case character(Character)
        /// A control key, as its letter: Ctrl-L is `.control("l")`.
        case control(Character)
        case up, down, left, right, pageUp, pageDown, home, end
        case enter, backspace, delete, escape
        /// The terminal changed size (`size` has the new one; redraw everything).
        case resize
        /// A key this program does not know.
        case other
        /// Nothing arrived in time.
        case timeout
    }

    /// Waits up to `milliseconds` for a key (or a resize). The corresponding C functions are
    /// `wtimeout` and `wget_wch`; the wait blocks in the kernel, it does not spin.
    public func read(timeout milliseconds: Int) -> Input {
        let window = CNcurses_stdscr()
        wtimeout(window, Int32(max(0, min(milliseconds, Int(Int32.max)))))
        var code: wint_t = 0
        let rc = wget_wch(window, &code)
        if rc == KEY_CODE_YES { return Self.functionKey(Int32(bitPattern: code)) }
        guard rc == OK, let scalar = Unicode.Scalar(UInt32(code)) else { return .timeout }
        switch scalar.value {
        case 10, 13: return .enter
        case 8, 127: return .backspace
        case 27: return .escape
        case 1...26: return .control(Character(Unicode.Scalar(scalar.value + 96)!))
        case 0..<32, 128..<160: return .other
        default: return .character(Character(scalar))
        }
    }

    static func functionKey(_ k: Int32) -> Input {
        switch k {
        case KEY_UP: return .up
        case KEY_DOWN: return .down
        case KEY_LEFT: return .left
        case KEY_RIGHT: return .right
        case KEY_PPAGE: return .pageUp
        case KEY_NPAGE: return .pageDown
        case KEY_HOME: return .home
        case KEY_END: return .end
        case KEY_ENTER: return .enter
        case KEY_BACKSPACE: return .backspace
        case KEY_DC: return .delete
        case KEY_RESIZE: return .resize
        default: return .other
        }
    }
}
