import VaultCrypto

/// A recovery key: 32 random bytes shown once as 11 groups of 5 base32 characters
/// (RFC 4648 alphabet, no padding) over key ‖ first 2 bytes of SHA-256(key), so a typo is caught
/// before any unlock is tried. Separators, spaces and case are ignored when typed back.
public enum RecoveryKey {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    public static func generate() -> SecureBytes { SecureBytes.random(count: 32) }

    /// The printable form (shown once, never stored). Its working copies live in `SecureBytes`
    /// (wiped when freed); only the returned text itself is a plain copy.
    public static func format(_ key: SecureBytes) -> String {
        let data = SecureBytes(count: 34)
        data.withUnsafeMutableBytes { d in
            key.withUnsafeBytes { k in
                d.copyMemory(from: k)
                var h = SHA256Hasher(); h.update(k)
                let digest = h.finalize()
                d[32] = digest[0]; d[33] = digest[1]
            }
        }
        let grouped = SecureBytes(count: 55 + 10)
        var length = 0
        data.withUnsafeBytes { d in
            grouped.withUnsafeMutableBytes { g in
                var buffer = 0, bits = 0, produced = 0
                func put(_ c: UInt8) {
                    if produced > 0 && produced % 5 == 0 { g[length] = UInt8(ascii: "-"); length += 1 }
                    g[length] = c; length += 1; produced += 1
                }
                for b in d {
                    buffer = ((buffer << 8) | Int(b)) & 0xffff; bits += 8
                    while bits >= 5 { put(alphabet[(buffer >> (bits - 5)) & 31]); bits -= 5 }
                }
                if bits > 0 { put(alphabet[(buffer << (5 - bits)) & 31]) }
            }
        }
        return grouped.withUnsafeBytes { String(decoding: $0[..<length], as: UTF8.self) }
    }

    /// Parses a typed recovery key; throws `.wrongPassword` with a clear message on a typo.
    /// Its working copies live in `SecureBytes`, wiped when freed on every path.
    public static func parse(_ text: SecureBytes) throws -> SecureBytes {
        let bytes = SecureBytes(count: 34)
        var count = 0
        try text.withUnsafeBytes { raw in
            try bytes.withUnsafeMutableBytes { out in
                var buffer = 0, bits = 0
                for c in raw {
                    if c == UInt8(ascii: "-") || c == UInt8(ascii: " ") || c == 10 || c == 13 { continue }
                    let u = (c >= 97 && c <= 122) ? c - 32 : c
                    guard let v = alphabet.firstIndex(of: u) else {
                        throw VaultError(.wrongPassword, "a recovery key has only the letters A–Z and digits 2–7")
                    }
                    count += 1
                    guard count <= 55 else { continue }
                    buffer = ((buffer << 5) | v) & 0xffff; bits += 5
                    if bits >= 8 { out[(count * 5) / 8 - 1] = UInt8((buffer >> (bits - 8)) & 0xff); bits -= 8 }
                }
                buffer = 0
            }
        }
        guard count == 55 else {
            throw VaultError(.wrongPassword, "a recovery key has 55 characters (11 groups of 5); this one has \(count)")
        }
        let key = SecureBytes(count: 32)
        let matches = bytes.withUnsafeBytes { b in
            key.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: b[..<32])) }
            var h = SHA256Hasher(); h.update(UnsafeRawBufferPointer(rebasing: b[..<32]))
            return constantTimeEqual(h.finalize().prefix(2), b[32..<34])
        }
        guard matches else {
            throw VaultError(.wrongPassword, "the recovery key's checksum does not match: a character is mistyped")
        }
        return key
    }
}
