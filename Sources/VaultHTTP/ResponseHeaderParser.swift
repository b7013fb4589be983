/// Collects response header lines as libcurl hands them over, one line per call, keeping only
/// the last response's fields: a new status line (`HTTP/…`) starts over, so interim 1xx
/// responses and followed redirects leave nothing behind.
struct ResponseHeaderParser {
    private(set) var fields: [(String, String)] = []
    /// True once the blank line ending a header block has been seen (for the latest block).
    private(set) var blockComplete = false

    /// Consumes one raw header line, with or without its trailing CRLF.
    mutating func consume(_ raw: UnsafeRawBufferPointer) {
        var bytes = raw[...]
        while let last = bytes.last, last == UInt8(ascii: "\r") || last == UInt8(ascii: "\n") {
            bytes = bytes.dropLast()
        }
        if bytes.isEmpty {
            blockComplete = true
            return
        }
        if bytes.starts(with: "HTTP/".utf8) {
            fields.removeAll(keepingCapacity: true)
            blockComplete = false
            return
        }
        if let first = bytes.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") {
            // Obsolete line folding (RFC 9112 §5.2): a continuation of the previous value.
            if !fields.isEmpty {
                let more = Self.trimmed(String(decoding: bytes, as: UTF8.self))
                fields[fields.count - 1].1 += " " + more
            }
            return
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return }
        let name = Self.trimmed(String(decoding: bytes[..<colon], as: UTF8.self))
        let value = Self.trimmed(String(decoding: bytes[(colon + 1)...], as: UTF8.self))
        guard !name.isEmpty else { return }
        fields.append((name, value))
    }

    private static func trimmed(_ s: String) -> String {
        var sub = Substring(s)
        while let c = sub.first, c == " " || c == "\t" { sub.removeFirst() }
        while let c = sub.last, c == " " || c == "\t" { sub.removeLast() }
        return String(sub)
    }
}
