import Foundation

/// The JSON conventions of the vault API: dates are ISO 8601 UTC strings with milliseconds
/// (`2026-11-29T12:00:00.000Z`), keys are camelCase, absent optionals are omitted.
public enum APIJSON {
    /// An encoder for API bodies (sorted keys, ISO 8601 dates).
    public static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        e.dateEncodingStrategy = .custom { date, enc in
            var c = enc.singleValueContainer()
            try c.encode(formatDate(date))
        }
        return e
    }

    /// A decoder for API bodies (accepts ISO 8601 with or without fractional seconds).
    public static func decoder() -> JSONDecoder {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .custom { dec in
            let c = try dec.singleValueContainer()
            let s = try c.decode(String.self)
            guard let date = parseDate(s) else {
                throw DecodingError.dataCorruptedError(in: c, debugDescription: "not an ISO 8601 date: \(s)")
            }
            return date
        }
        return d
    }

    /// Formats a date as `yyyy-MM-ddTHH:mm:ss.SSSZ`.
    public static func formatDate(_ date: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: date)
    }

    /// Parses an ISO 8601 date, with or without fractional seconds.
    public static func parseDate(_ s: String) -> Date? {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let d = f.date(from: s) { return d }
        f.formatOptions = [.withInternetDateTime]
        return f.date(from: s)
    }
}
