internal import CSodium
import VaultPrimitives

/// The few libsodium calls the server uses, kept behind Swift types.
enum Sodium {
    /// Initialises libsodium once; safe to call repeatedly. The corresponding C function is `sodium_init`.
    static func initialize() {
        precondition(sodium_init() >= 0, "libsodium failed to initialise")
    }

    /// `count` random bytes. The corresponding C function is `randombytes_buf`.
    static func randomBytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) }
        return out
    }

    /// A random lowercase hex identifier of `bytes` random bytes.
    static func randomID(bytes: Int = 16) -> String { Hex.encode(randomBytes(bytes)) }

    /// HMAC-SHA-256 of `message` under `key`. The corresponding C function is `crypto_auth_hmacsha256`.
    static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var state = crypto_auth_hmacsha256_state()
        var out = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_BYTES))
        key.withUnsafeBufferPointer { k in
            _ = crypto_auth_hmacsha256_init(&state, k.baseAddress!, k.count)
        }
        message.withUnsafeBufferPointer { m in
            _ = crypto_auth_hmacsha256_update(&state, m.baseAddress ?? UnsafePointer(bitPattern: 1)!, UInt64(m.count))
        }
        _ = crypto_auth_hmacsha256_final(&state, &out)
        return out
    }

    /// Constant-time equality of two byte strings. The corresponding C function is `sodium_memcmp`.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in
            sodium_memcmp(pa.baseAddress, pb.baseAddress, a.count) == 0
        } }
    }

    /// Argon2id cost for stored passwords: OWASP's recommended m = 19 MiB, t = 2, which keeps a
    /// login's memory (and the server's peak RSS) bounded. Verification reads the cost from the
    /// stored string, so it can be raised later without breaking existing users.
    static let passwordOpsLimit: UInt64 = 2
    static let passwordMemLimit: Int = 19 << 20

    /// An Argon2id password hash string. The corresponding C function is `crypto_pwhash_str_alg`.
    static func passwordHash(_ password: [UInt8]) -> String? {
        guard !password.isEmpty else { return nil }
        var out = [CChar](repeating: 0, count: Int(crypto_pwhash_STRBYTES))
        let rc = password.withUnsafeBufferPointer { p in
            p.withMemoryRebound(to: CChar.self) { pc in
                crypto_pwhash_str_alg(&out, pc.baseAddress!, UInt64(p.count), passwordOpsLimit,
                                      passwordMemLimit, crypto_pwhash_ALG_ARGON2ID13)
            }
        }
        guard rc == 0, let end = out.firstIndex(of: 0) else { return nil }
        return String(decoding: out[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Checks a password against a stored hash string. The corresponding C function is
    /// `crypto_pwhash_str_verify`.
    static func passwordVerify(_ password: [UInt8], hash: String) -> Bool {
        guard !password.isEmpty else { return false }
        return password.withUnsafeBufferPointer { p in
            p.withMemoryRebound(to: CChar.self) { pc in
                crypto_pwhash_str_verify(hash, pc.baseAddress!, UInt64(p.count)) == 0
            }
        }
    }
}

