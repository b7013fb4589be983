/// Whole numbers as they appear in headers and query strings: ASCII digits only (no sign, no
/// spaces, no `+`, no exponent), parsed without overflow. Every number the server reads from a
/// request goes through here, so a value past `Int64.max` is a clear 4xx and never a trap.
enum Digits {
    /// The value of `text` if it is 1…`maxDigits` digits and at most `max`; nil otherwise.
    static func parse<S: StringProtocol>(_ text: S, max: Int64 = .max, maxDigits: Int = 19) -> Int64? {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count <= maxDigits else { return nil }
        var value: Int64 = 0
        for byte in utf8 {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = times10.addingReportingOverflow(Int64(byte - 0x30))
            guard !o1, !o2 else { return nil }
            value = next
        }
        return value <= max ? value : nil
    }

    /// Like `parse`, but a digit string too large for `Int64` saturates at `Int64.max` (a `Range`
    /// position past any file is still a well-formed position). Nil for anything but digits.
    static func parseSaturating<S: StringProtocol>(_ text: S) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return parse(text, maxDigits: Int.max) ?? .max
    }
}

/// Overflow-free arithmetic on byte counts that come from requests.
extension Int64 {
    /// `self + other`, or `Int64.max` / `Int64.min` where the sum would overflow.
    func addingSaturating(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
