/// Base64url without padding (RFC 4648 §5), as JWT and the vault's sealed name tokens and records
/// use it; canonical only (a decoded text re-encodes to itself). By table: Foundation's base64
/// plus string replacements took most of the time a pull of 100,000 nodes spent opening tokens
/// and records.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let values: [UInt8] = {
        var t = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { t[Int(c)] = UInt8(i) }
        return t
    }()

    /// The unpadded base64url text of `bytes`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let bytes = Array(bytes)
        var out = [UInt8]()
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var i = 0
        while i + 3 <= bytes.count {
            let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out.append(alphabet[Int(v >> 18)]); out.append(alphabet[Int(v >> 12 & 63)])
            out.append(alphabet[Int(v >> 6 & 63)]); out.append(alphabet[Int(v & 63)])
            i += 3
        }
        switch bytes.count - i {
        case 1:
            let v = UInt32(bytes[i]) << 16
            out += [alphabet[Int(v >> 18)], alphabet[Int(v >> 12 & 63)]]
        case 2:
            let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out += [alphabet[Int(v >> 18)], alphabet[Int(v >> 12 & 63)], alphabet[Int(v >> 6 & 63)]]
        default:
            break
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of `text`, or nil unless it is canonical unpadded base64url (only `A–Z a–z 0–9
    /// - _`, and re-encoding the bytes gives `text` back: no padding, no stray low bits).
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        if let done = text.utf8.withContiguousStorageIfAvailable({ decode(utf8: $0) }) { return done }
        return Array(text.utf8).withUnsafeBufferPointer { decode(utf8: $0) }
    }

    /// `decode(_:)` over the text's UTF-8 (appending one byte at a time: an array literal per
    /// group cost an allocation each).
    private static func decode(utf8 text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(text.count * 3 / 4)
        var i = 0
        func value(_ k: Int) -> UInt32? {
            let v = values[Int(text[k])]
            return v == 0xFF ? nil : UInt32(v)
        }
        while i + 4 <= text.count {
            guard let a = value(i), let b = value(i + 1), let c = value(i + 2), let d = value(i + 3) else { return nil }
            let v = a << 18 | b << 12 | c << 6 | d
            out.append(UInt8(v >> 16)); out.append(UInt8(v >> 8 & 0xFF)); out.append(UInt8(v & 0xFF))
            i += 4
        }
        switch text.count - i {
        case 2:
            guard let a = value(i), let b = value(i + 1), b & 15 == 0 else { return nil }   // canonical: unused bits zero
            out.append(UInt8((a << 18 | b << 12) >> 16))
        case 3:
            guard let a = value(i), let b = value(i + 1), let c = value(i + 2), c & 3 == 0 else { return nil }
            let v = a << 18 | b << 12 | c << 6
            out += [UInt8(v >> 16), UInt8(v >> 8 & 0xFF)]
        default:
            break
        }
        return out
    }
}
