import VaultPrimitives
/// Names and paths made safe to show on a terminal. A file name may hold any character but `/`
/// and NUL, so a name can carry ANSI escape sequences, a carriage return or right-to-left marks
/// that would rewrite what the user sees. Text output shows them escaped, in the style of GNU
/// `ls --escape`; `--json` keeps names exact (as JSON escapes).
///
/// | character | shown as |
/// |---|---|
/// | tab, line feed, carriage return | `\t`, `\n`, `\r` |
/// | other C0 controls (U+0000–U+001F), DEL (U+007F) | `\xHH`, e.g. ESC is `\x1b` |
/// | C1 controls (U+0080–U+009F) | `\u{HH}`, e.g. CSI is `\u{9b}` |
/// | bidirectional and zero-width format characters (U+200B–U+200F, U+202A–U+202E, U+2066–U+2069, U+FEFF) | `\u{HHHH}` |
/// | a byte that is not UTF-8 (local names only) | `\xHH` |
///
/// Backslashes are shown as they are, so `a\x1bb` may be a literal name; `--json` tells them apart.
public enum DisplayText {

    /// Raw bytes of a local name: valid UTF-8 runs escaped as above, other bytes as `\xHH`.
    public static func escaped(bytes: some Collection<UInt8>) -> String {
        var out = ""
        var run: [UInt8] = []
        var it = Array(bytes)[...]
        while !it.isEmpty {
            // Decode one scalar; an invalid sequence costs one byte.
            var decoder = UTF8()
            var one = it.makeIterator()
            switch decoder.decode(&one) {
            case .scalarValue(let v):
                let n = UTF8.width(v)
                run += it.prefix(n)
                it = it.dropFirst(n)
            default:
                out += escaped(String(decoding: run, as: UTF8.self)); run = []
                out += hex(it.first!)
                it = it.dropFirst()
            }
        }
        return out + escaped(String(decoding: run, as: UTF8.self))
    }

    /// `s` with every character of the table escaped.
    public static func escaped(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: needsEscape) else { return s }
        var out = ""
        for u in s.unicodeScalars {
            guard needsEscape(u) else { out.unicodeScalars.append(u); continue }
            switch u {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if u.value < 0x80 { out += hex(UInt8(u.value)) } else { out += "\\u{" + String(u.value, radix: 16) + "}" }
            }
        }
        return out
    }

    /// Whether `u` is shown escaped (the table above, but for non-UTF-8 bytes).
    public static func needsEscape(_ u: Unicode.Scalar) -> Bool {
        switch u.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x200B...0x200F, 0x202A...0x202E, 0x2066...0x2069, 0xFEFF: return true
        default: return false
        }
    }

    static func hex(_ b: UInt8) -> String { "\\x" + Hex.encode([b]) }
}
