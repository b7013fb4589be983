/// Names made safe to show on a terminal. A name in the vault may hold any character but `/`
/// and NUL, including escape sequences that would move the cursor, change colours, retitle the
/// window or reorder the line. Those are shown escaped, never raw.
public enum TerminalText {
    /// `name` with every character that could act on the terminal written out: C0 and C1
    /// controls and DEL as `\n`, `\t`, `\r`, `\e` or `\xHH`; bidirectional overrides and isolates,
    /// line and paragraph separators as `\u{HHHH}`; and a backslash doubled, so the escaped form
    /// cannot be mistaken for a name that contains one literally.
    public static func escaped(_ name: String) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(name.unicodeScalars.count)
        for s in name.unicodeScalars {
            switch s.value {
            case 0x5c: out += "\\\\"
            case 0x0a: out += "\\n"
            case 0x09: out += "\\t"
            case 0x0d: out += "\\r"
            case 0x1b: out += "\\e"
            case 0..<0x20, 0x7f..<0xa0: out += "\\x" + hex(s.value, digits: 2)
            case 0x061c, 0x200e, 0x200f, 0x202a...0x202e, 0x2066...0x2069, 0x2028, 0x2029:
                out += "\\u{" + hex(s.value, digits: 4) + "}"
            default: out.unicodeScalars.append(s)
            }
        }
        return out
    }

    static func hex(_ v: UInt32, digits: Int) -> String {
        let s = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - s.count)) + s
    }
}
