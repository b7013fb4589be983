/// Lowercase hexadecimal, the one encoder and decoder of the project (identifiers, digests,
/// key files, and the SQLCipher key pragma). The buffer forms never build a `String`, so they
/// also serve for secrets: the caller owns (and zeroes) both buffers.
public enum Hex {
    /// The sixteen lowercase digits, as ASCII bytes.
    public static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Lowercase hex of `bytes`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Writes the hex of `bytes` into `out`, which must hold `2 * bytes.count` bytes.
    public static func encode(_ bytes: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        precondition(out.count >= bytes.count * 2, "Hex.encode: output buffer too small")
        for (i, b) in bytes.enumerated() {
            out[2 * i] = digits[Int(b >> 4)]
            out[2 * i + 1] = digits[Int(b & 15)]
        }
    }

    /// The value of one hex digit (either case), or nil.
    public static func value(ofDigit c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x61...0x66: return c - 0x57
        case 0x41...0x46: return c - 0x37
        default: return nil
        }
    }

    /// The bytes of `text` (an even number of hex digits, either case), or nil.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let u = Array(text.utf8)
        var out = [UInt8](repeating: 0, count: u.count / 2)
        let ok = u.withUnsafeBytes { src in out.withUnsafeMutableBytes { decode(src, into: $0) } }
        return ok ? out : nil
    }

    /// Decodes the hex digits in `text` into `out` (exactly `text.count / 2` bytes); false when
    /// `text` has an odd length or a byte that is not a hex digit (`out` is then unspecified).
    public static func decode(_ text: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) -> Bool {
        guard text.count % 2 == 0, out.count == text.count / 2 else { return false }
        for i in 0..<out.count {
            guard let h = value(ofDigit: text[2 * i]), let l = value(ofDigit: text[2 * i + 1]) else { return false }
            out[i] = h << 4 | l
        }
        return true
    }

    /// Whether `text` is exactly `count` lowercase hex digits (an identifier, a digest).
    public static func isLowercase(_ text: some StringProtocol, count: Int) -> Bool {
        text.utf8.count == count && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
