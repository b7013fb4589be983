/// `Content-Range` (uploads) and `Range` (downloads) parsing.
enum ByteRanges {
    /// A parsed `Content-Range: bytes a-b/total` (`range` nil for `bytes */total`).
    struct ContentRange: Equatable {
        var start: Int64
        var end: Int64
        var total: Int64?
    }

    /// Parses `bytes a-b/total`, `bytes a-b/*` or `bytes */total` (then start = end = -1).
    static func parseContentRange(_ raw: String) -> ContentRange? {
        let s = raw.trimmingCharacters(in: .whitespaces)
        guard s.hasPrefix("bytes ") else { return nil }
        let rest = s.dropFirst(6)
        let parts = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let total: Int64? = parts[1] == "*" ? nil : Int64(parts[1])
        if parts[1] != "*" && total == nil { return nil }
        if parts[0] == "*" { return ContentRange(start: -1, end: -1, total: total) }
        let ab = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard ab.count == 2, let a = Int64(ab[0]), let b = Int64(ab[1]), a >= 0, b >= a else { return nil }
        return ContentRange(start: a, end: b, total: total)
    }

    /// The result of a `Range` header against a size.
    enum RangeResult: Equatable {
        case whole
        case partial(start: Int64, end: Int64)
        case unsatisfiable
    }

    /// One range of `bytes=a-b`, `bytes=a-` or `bytes=-n`; several ranges or junk → whole.
    static func parseRange(_ raw: String?, size: Int64) -> RangeResult {
        guard let raw = raw?.trimmingCharacters(in: .whitespaces), raw.hasPrefix("bytes=") else { return .whole }
        let spec = raw.dropFirst(6)
        guard !spec.contains(",") else { return .whole }
        let ab = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard ab.count == 2 else { return .whole }
        if ab[0].isEmpty {
            guard let n = Int64(ab[1]), n > 0 else { return ab[1].isEmpty ? .whole : .unsatisfiable }
            guard size > 0 else { return .unsatisfiable }
            return .partial(start: max(0, size - n), end: size - 1)
        }
        guard let a = Int64(ab[0]), a >= 0 else { return .whole }
        guard a < size else { return .unsatisfiable }
        if ab[1].isEmpty { return .partial(start: a, end: size - 1) }
        guard let b = Int64(ab[1]), b >= a else { return .whole }
        return .partial(start: a, end: min(b, size - 1))
    }
}

import Foundation
