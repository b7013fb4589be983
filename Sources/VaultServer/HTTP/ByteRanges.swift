/// `Content-Range` (uploads) and `Range` (downloads) parsing. Positions are digits only
/// (`Digits`): a sign, a space inside a number or a value past `Int64.max` never reaches the
/// arithmetic.
enum ByteRanges {
    /// A parsed `Content-Range: bytes a-b/total` (`range` nil for `bytes */total`).
    struct ContentRange: Equatable {
        var start: Int64
        var end: Int64
        var total: Int64?
    }

    /// The grammar `docs/openapi.yaml` documents for `Content-Range` (the same rule as `parse`).
    static let contentRangePattern = #"^bytes ([0-9]{1,18}-[0-9]{1,18}/([0-9]{1,18}|\*)|\*/[0-9]{1,18})$"#

    /// Parses exactly `bytes a-b/total`, `bytes a-b/*` or `bytes */total` (then start = end = -1);
    /// nil for anything else, including numbers of more than 18 digits (sizes are below 10^18)
    /// and `bytes */*`.
    static func parseContentRange(_ raw: String) -> ContentRange? {
        guard raw.hasPrefix("bytes ") else { return nil }
        let parts = raw.dropFirst(6).split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let total: Int64?
        if parts[1] == "*" { total = nil } else {
            guard let t = Digits.parse(parts[1], maxDigits: 18) else { return nil }
            total = t
        }
        if parts[0] == "*" { return total == nil ? nil : ContentRange(start: -1, end: -1, total: total) }
        let ab = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard ab.count == 2, let a = Digits.parse(ab[0], maxDigits: 18), let b = Digits.parse(ab[1], maxDigits: 18), b >= a
        else { return nil }
        return ContentRange(start: a, end: b, total: total)
    }

    /// The result of a `Range` header against a size.
    enum RangeResult: Equatable {
        case whole
        case partial(start: Int64, end: Int64)
        case unsatisfiable
    }

    /// One range of `bytes=a-b`, `bytes=a-` or `bytes=-n`; several ranges or junk → whole (RFC 9110
    /// lets a server ignore a Range it does not take). Positions past `Int64.max` count as "past
    /// any file": `bytes=0-99999999999999999999` is the whole file, `bytes=99999999999999999999-`
    /// is unsatisfiable.
    static func parseRange(_ raw: String?, size: Int64) -> RangeResult {
        guard let raw, raw.hasPrefix("bytes=") else { return .whole }
        let spec = raw.dropFirst(6)
        guard !spec.contains(",") else { return .whole }
        let ab = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard ab.count == 2 else { return .whole }
        if ab[0].isEmpty {
            guard let n = Digits.parseSaturating(ab[1]) else { return .whole }
            guard n > 0, size > 0 else { return .unsatisfiable }
            return .partial(start: size - min(n, size), end: size - 1)
        }
        guard let a = Digits.parseSaturating(ab[0]) else { return .whole }
        if ab[1].isEmpty { return a < size ? .partial(start: a, end: size - 1) : .unsatisfiable }
        guard let b = Digits.parseSaturating(ab[1]), b >= a else { return .whole }
        guard a < size else { return .unsatisfiable }
        return .partial(start: a, end: min(b, size - 1))
    }
}
