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

    /// Formats a date as `yyyy-MM-ddTHH:mm:ss.SSSZ` (UTC, milliseconds). By arithmetic: a
    /// Foundation date formatter on Linux builds an ICU formatter per call, which made a listing
    /// of 5,000 files spend most of its time formatting dates.
    public static func formatDate(_ date: Date) -> String {
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var days = ms / 86_400_000, inDay = ms % 86_400_000
        if inDay < 0 { inDay += 86_400_000; days -= 1 }
        let (y, m, d) = civil(fromDays: days)
        if (0...9999).contains(y) {
            // The common case written digit by digit into one buffer (a listing page formats two
            // dates per node): yyyy-MM-ddTHH:mm:ss.SSSZ.
            var b = Array("0000-00-00T00:00:00.000Z".utf8)
            func put(_ value: Int64, at: Int, digits: Int) {
                var v = value
                for k in stride(from: at + digits - 1, through: at, by: -1) { b[k] = UInt8(48 + v % 10); v /= 10 }
            }
            put(y, at: 0, digits: 4); put(m, at: 5, digits: 2); put(d, at: 8, digits: 2)
            put(inDay / 3_600_000, at: 11, digits: 2); put(inDay / 60_000 % 60, at: 14, digits: 2)
            put(inDay / 1000 % 60, at: 17, digits: 2); put(inDay % 1000, at: 20, digits: 3)
            return String(decoding: b, as: UTF8.self)
        }
        func pad(_ v: Int64, _ n: Int) -> String {
            let t = String(v)
            return t.count >= n ? t : String(repeating: "0", count: n - t.count) + t
        }
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(inDay / 3_600_000, 2)):\(pad(inDay / 60_000 % 60, 2)):"
            + "\(pad(inDay / 1000 % 60, 2)).\(pad(inDay % 1000, 3))Z"
    }

    /// Parses an RFC 3339 date (`yyyy-MM-ddTHH:mm:ss[.fraction](Z|±HH:MM)`), with or without
    /// fractional seconds; nil for anything else (or a day that does not exist).
    public static func parseDate(_ s: String) -> Date? {
        let b = Array(s.utf8)
        var i = 0
        func digits(_ n: Int) -> Int64? {
            guard i + n <= b.count else { return nil }
            var v: Int64 = 0
            for k in i..<(i + n) {
                guard b[k] >= 48, b[k] <= 57 else { return nil }
                v = v * 10 + Int64(b[k] - 48)
            }
            i += n
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        guard let y = digits(4), expect(45), let mo = digits(2), expect(45), let d = digits(2),
              i < b.count, b[i] == 84 || b[i] == 116, expect(b[i]),
              let h = digits(2), expect(58), let mi = digits(2), expect(58), let sec = digits(2),
              (1...12).contains(mo), d >= 1, d <= daysIn(month: mo, year: y), h < 24, mi < 60, sec < 60 else { return nil }
        var fraction = 0.0
        if i < b.count, b[i] == 46 {
            i += 1
            var scale = 0.1, n = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 { fraction += Double(b[i] - 48) * scale; scale /= 10; i += 1; n += 1 }
            guard n > 0 else { return nil }
        }
        var offset: Int64 = 0
        guard i < b.count else { return nil }
        if b[i] == 90 || b[i] == 122 {
            i += 1
        } else if b[i] == 43 || b[i] == 45 {
            let sign: Int64 = b[i] == 45 ? -1 : 1
            i += 1
            guard let oh = digits(2), expect(58), let om = digits(2), oh < 24, om < 60 else { return nil }
            offset = sign * (oh * 3600 + om * 60)
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let seconds = days(fromCivil: y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The date of a day count since 1970-01-01.
    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
