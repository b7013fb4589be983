import VaultPrimitives

/// The one place where request bytes become strings. libmicrohttpd hands the path and the query
/// over undecoded (the shim installs an unescape callback that changes nothing), so every
/// percent-escape is decoded exactly once, here, and strictly: a NUL, a `%` without two hex
/// digits after it, a raw byte that should have been escaped, or bytes that are not UTF-8
/// (overlong forms and surrogates included) are a 400, never a silently shortened or repaired
/// value (`name=x%00y` once created `x`).
enum RequestDecoding {
    /// Decodes one path segment or query key/value. `plusWasSpace` is true for the query, where
    /// libmicrohttpd has already turned `+` into a space (form encoding), so a raw space is fine.
    static func percentDecode(_ raw: [UInt8], field: String, plusWasSpace: Bool) throws -> String {
        func fail(_ why: String) -> APIError {
            .badRequest("\(field) is not validly encoded: \(why)", code: .invalidEncoding)
        }
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var i = 0
        while i < raw.count {
            let b = raw[i]
            if b == UInt8(ascii: "%") {
                guard i + 2 < raw.count, let hi = Hex.value(ofDigit: raw[i + 1]), let lo = Hex.value(ofDigit: raw[i + 2]) else {
                    throw fail("'%' must be followed by two hex digits")
                }
                out.append(hi << 4 | lo)
                i += 3
                continue
            }
            guard (0x21...0x7e).contains(b) || (b == 0x20 && plusWasSpace) else {
                throw fail("byte 0x\(String(b, radix: 16)) must be percent-encoded")
            }
            out.append(b)
            i += 1
        }
        guard !out.contains(0) else { throw fail("it contains NUL (%00)") }
        guard let text = String(validating: out, as: UTF8.self) else { throw fail("the decoded bytes are not UTF-8") }
        return text
    }

    /// What `docs/openapi.yaml` states for a free-text header (`Range`, `If-Range`): visible
    /// ASCII, space and HTAB (RFC 9110's field-value), as `headerValue` accepts them.
    static let headerTextPattern = #"^[\t\x20-\x7e]*$"#

    /// A header value: UTF-8 without control characters (tab aside), without the surrounding
    /// whitespace that RFC 9110 says is not part of it. libmicrohttpd passes a NUL inside a value
    /// through, which C strings would silently cut.
    static func headerValue(_ raw: [UInt8], name: String) throws -> String {
        let isSpace = { (b: UInt8) in b == 0x20 || b == 0x09 }
        let raw = Array(raw.drop(while: isSpace).reversed().drop(while: isSpace).reversed())
        func fail(_ why: String) -> APIError {
            .badRequest("the \(name) header is invalid: \(why)", code: .invalidHeader)
        }
        if let bad = raw.first(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7f }) {
            throw fail(bad == 0 ? "it contains NUL" : "it contains the control byte 0x\(String(bad, radix: 16))")
        }
        guard let text = String(validating: raw, as: UTF8.self) else { throw fail("it is not UTF-8") }
        return text
    }

    /// The path split at `/` (a trailing `/` ignored), each segment decoded.
    static func segments(_ rawPath: String) throws -> [String] {
        var parts = rawPath.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst()
        if parts.last?.isEmpty == true { parts = parts.dropLast() }
        return try parts.map { try percentDecode(Array($0), field: "a path segment", plusWasSpace: false) }
    }
}

extension HTTPRequest {
    /// A request from what libmicrohttpd parsed: the raw path, the query arguments (undecoded but
    /// for `+`) and the header fields as bytes. Throws 400 `invalid_encoding` / `invalid_header`.
    init(method: String, rawPath: String, rawQuery: [(key: [UInt8], value: [UInt8])],
         rawHeaders: [(key: [UInt8], value: [UInt8])]) throws {
        var query: [String: String] = [:]
        for (k, v) in rawQuery {
            let key = try RequestDecoding.percentDecode(k, field: "a query parameter name", plusWasSpace: true)
            query[key] = try RequestDecoding.percentDecode(v, field: "query parameter '\(key.prefix(40))'", plusWasSpace: true)
        }
        var headers: [String: String] = [:]
        for (k, v) in rawHeaders {
            let name = String(decoding: k, as: UTF8.self).lowercased()
            headers[name] = try RequestDecoding.headerValue(v, name: String(name.prefix(40)))
        }
        self.init(method: method, path: rawPath, query: query, headers: headers)
        segments = try RequestDecoding.segments(rawPath)
    }
}
