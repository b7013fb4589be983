internal import CNcurses

/// Text measured in terminal cells: a wide (CJK, emoji) character takes two, a combining mark
/// none. Widths come from the C library's `wcwidth`, the same table ncurses uses to place them,
/// so what is measured here is what the screen shows. Needs a UTF-8 `LC_CTYPE`
/// (`Terminal.adoptUTF8Locale()`).
public enum CellText {
    /// How text sits in a field wider than itself.
    public enum Alignment: Sendable {
        case left, right
    }

    /// The cells `scalar` takes. The corresponding C function is `wcwidth`; a scalar it calls
    /// unprintable is drawn as U+FFFD (one cell), except a control character, which never
    /// reaches the screen at all (see `printable`).
    public static func width(_ scalar: Unicode.Scalar) -> Int {
        let w = Int(CNcurses_wcwidth(wchar_t(bitPattern: scalar.value)))
        return w < 0 ? 1 : w
    }

    /// The cells `text` takes.
    public static func width(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { $0 + width(printable($1)) }
    }

    /// `scalar`, or U+FFFD for what must never reach a terminal raw: a C0 or C1 control or DEL
    /// (they drive the terminal), a bidirectional control or a line or paragraph separator (they
    /// reorder or break the line). Callers escape names before they get here (`DisplayText`);
    /// this is the last line of defence for any other text, such as an error message.
    public static func printable(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        switch scalar.value {
        case 0..<0x20, 0x7f..<0xa0, 0x061c, 0x200e, 0x200f, 0x202a...0x202e, 0x2066...0x2069, 0x2028, 0x2029:
            return "\u{FFFD}"
        default: return scalar
        }
    }

    /// `text` in exactly `width` cells: clipped (ending in `…` when `ellipsis` and something was
    /// cut), then padded with spaces on the side `align` leaves free. A wide character that
    /// would straddle the edge is replaced by padding.
    public static func fit(_ text: String, width: Int, align: Alignment = .left, ellipsis: Bool = true) -> String {
        guard width > 0 else { return "" }
        let scalars = text.unicodeScalars.map(printable)
        let total = scalars.reduce(0) { $0 + Self.width($1) }
        var kept = String.UnicodeScalarView()
        var used = 0
        if total <= width {
            kept.append(contentsOf: scalars)
            used = total
        } else {
            let room = ellipsis ? width - 1 : width
            for s in scalars {
                let w = Self.width(s)
                if used + w > room { break }
                kept.append(s); used += w
            }
            if ellipsis { kept.append("…"); used += 1 }
        }
        let pad = String(repeating: " ", count: max(0, width - used))
        return align == .left ? String(kept) + pad : pad + String(kept)
    }
}
