import VaultCrypto

/// A recovery key: 32 random bytes shown once as 11 groups of 5 base32 characters
/// (RFC 4648 alphabet, no padding) over key ‖ first 2 bytes of SHA-256(key), so a typo is caught
/// before any unlock is tried. Separators, spaces and case are ignored when typed back.
public enum RecoveryKey {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    public static func generate() -> SecureBytes { SecureBytes.random(count: 32) }

    /// The printable form (shown once, never stored).
    public static func format(_ key: SecureBytes) -> String {
        var data = key.withUnsafeBytes { Array($0) }
        defer { for i in data.indices { data[i] = 0 } }
        var h = SHA256Hasher(); h.update(data)
        data += h.finalize().prefix(2)
        var out: [UInt8] = []
        var buffer = 0, bits = 0
        for b in data {
            buffer = ((buffer << 8) | Int(b)) & 0xffff; bits += 8
            while bits >= 5 { out.append(alphabet[(buffer >> (bits - 5)) & 31]); bits -= 5 }
        }
        if bits > 0 { out.append(alphabet[(buffer << (5 - bits)) & 31]) }
        var grouped: [UInt8] = []
        for (i, c) in out.enumerated() {
            if i > 0 && i % 5 == 0 { grouped.append(UInt8(ascii: "-")) }
            grouped.append(c)
        }
        return String(decoding: grouped, as: UTF8.self)
    }

    /// Parses a typed recovery key; throws `.wrongPassword` with a clear message on a typo.
    public static func parse(_ text: SecureBytes) throws -> SecureBytes {
        var values: [UInt8] = []
        try text.withUnsafeBytes { raw in
            for c in raw {
                if c == UInt8(ascii: "-") || c == UInt8(ascii: " ") || c == 10 || c == 13 { continue }
                let u = (c >= 97 && c <= 122) ? c - 32 : c
                guard let v = alphabet.firstIndex(of: u) else {
                    throw VaultError(.wrongPassword, "a recovery key has only the letters A–Z and digits 2–7")
                }
                values.append(UInt8(v))
            }
        }
        defer { for i in values.indices { values[i] = 0 } }
        guard values.count == 55 else {
            throw VaultError(.wrongPassword, "a recovery key has 55 characters (11 groups of 5); this one has \(values.count)")
        }
        var bytes: [UInt8] = []
        var buffer = 0, bits = 0
        for v in values {
            buffer = ((buffer << 5) | Int(v)) & 0xffff; bits += 5
            if bits >= 8 { bytes.append(UInt8((buffer >> (bits - 8)) & 0xff)); bits -= 8 }
        }
        defer { for i in bytes.indices { bytes[i] = 0 } }
        guard bytes.count == 34 else { throw VaultError(.wrongPassword, "malformed recovery key") }
        let key = SecureBytes(copying: bytes[0..<32])
        var h = SHA256Hasher(); h.update(Array(bytes[0..<32]))
        guard constantTimeEqual(h.finalize().prefix(2), bytes[32..<34]) else {
            throw VaultError(.wrongPassword, "the recovery key's checksum does not match: a character is mistyped")
        }
        return key
    }
}
